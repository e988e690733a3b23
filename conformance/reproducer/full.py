"""The full reproducer: the case as data, and the harness's core embedded (Note [One core])."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.reproducer import data, header, string
from conformance.reproducer.bundle import core_source
from conformance.results import ResultRecord

if TYPE_CHECKING:
    from conformance.data.loader import LoadedCase
    from conformance.data.variants import Variant

MAIN = '''

def main() -> int:
    import sys

    kind = TARGET.device.partition(":")[0]
    module = getattr(torch, kind, None)
    if kind != "cpu" and not (module is not None and getattr(module, "is_available", lambda: False)()):
        print(f"device {TARGET.device} is not available here; run this script where it is", file=sys.stderr)
        return REPRO_CANNOT_TELL
    print(f"torch {torch.__version__} (git {getattr(torch.version, 'git_version', '?')}), device {TARGET.device}, "
          f"backend {TARGET.backend}{'-kiim' if TARGET.kiim else ''}, mode {TARGET.mode}")
    try:
        outcome = run_passes(CASE, TARGET)
    except CaseBroken as exc:
        print(f"CASE ERROR (eager itself fails, so the case is wrong, not the build): {exc}")
        return REPRO_CANNOT_TELL
    print("the harness recorded:")
    for line in RECORDED:
        print(f"  {line}")
    if not outcome.mismatches:
        print("MATCHES: compiled behaves like eager on every check (the failure does not reproduce here)")
        return REPRO_MATCHES
    print(f"MISMATCH: {len(outcome.mismatches)} difference(s) from eager:")
    for m in outcome.mismatches:
        print(f"  {m.message()}")
    return REPRO_DIFFERS


if __name__ == "__main__":
    raise SystemExit(main())
'''


def render_full(lc: LoadedCase, variant: Variant, record: ResultRecord) -> str:
    recorded = [m.message() for m in record.mismatches[:20]] or record.reason.splitlines()[:1]
    doc = header(lc, variant, record, "The full check: every contract, inputs rebuilt exactly as the harness did "
                 "(its core is embedded below).")
    return (
        f"#!/usr/bin/env python3\n{doc}\n\nfrom __future__ import annotations\n\n{core_source()}\n\n"
        f"# {'-' * 20} the case\n"
        f"CASE = {data(lc.data)}\n"
        f"TARGET = Target(\n    program={string(lc.program_source)},\n    function={lc.case.function_name!r},\n"
        f"    filename={lc.program_filename!r},\n    device={variant.device!r}, backend={variant.backend!r}, "
        f"mode={variant.mode!r}, kiim={variant.kiim!r},\n"
        f"    classes={string(lc.classes_source) if lc.classes_source is not None else None},\n"
        f"    classes_filename={lc.classes_filename!r}, closure={tuple(lc.case.compile.closure)!r},\n)\n"
        f"RECORDED = {data(recorded)}\n{MAIN}"
    )
