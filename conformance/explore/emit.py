"""What the explorer hands back per finding: a case file that `validate` accepts and that fails the
same way when run, a short standalone reproducer, and findings.md / findings.json."""

from __future__ import annotations

import hashlib
import platform
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import yaml

from conformance.data.loader import load_case
from conformance.explore.engine import Explorer, Finding, Ran
from conformance.explore.registry import real_code_of
from conformance.files import write_atomic
from conformance.reproducer.full import render_full
from conformance.results import UNEXPLAINED


def _slug(signature: str) -> str:
    words = "_".join(w for w in "".join(c if c.isalnum() else " " for c in signature.lower()).split()[:6])
    return f"{words}_{hashlib.sha1(signature.encode()).hexdigest()[:6]}"  # noqa: S324  # a file name


def emit(explorer: Explorer, finding: Finding) -> Finding:
    """Write the finding's case file and reproducer under findings/, and rerun the case file."""
    from conformance.reproducer.short import render_short  # lazy: start-up

    folder = explorer.out / "findings"
    folder.mkdir(parents=True, exist_ok=True)
    backend, mode = finding.record.backend or "aot_eager", finding.record.mode or "inference"
    data = finding.program.case(seed=explorer.seed, backends=(backend,), modes=(mode,), compiles=finding.compiles)
    data["summary"] = (f"Explorer finding ({finding.signature}): "
                       + ("compiled differs from eager." if finding.compiles is None else
                          f"the sweep compiles other than the {finding.compiles} graph(s) the reference predicts."))
    name = _slug(finding.signature)
    case_path = folder / f"{name}.yaml"
    header = (f"# found by `torch-conformance explore` on torch {torch_version()} ({platform.machine()})\n"
              f"# {finding.signature}\n")
    write_atomic(case_path, header + yaml.safe_dump(data, sort_keys=False, width=120))
    lc = load_case(case_path, folder, display=f"findings/{case_path.name}")  # where the report keeps it
    ran = explorer.records(lc)
    reproduces = finding.signature in Ran(finding.program, "", [r for _, r in ran]).discrepancies()
    script = ""
    for v, r in ran:
        if r.status in UNEXPLAINED:
            script = render_short(lc, v, r) or render_full(lc, v, r)
            break
    repro_path = folder / f"{name}.py"
    if script:
        write_atomic(repro_path, script)
    return replace(finding, case_path=str(case_path), reproducer_path=str(repro_path) if script else "",
                   reproduces=reproduces)


def torch_version() -> str:
    return str(torch.__version__)


def with_sightings(record: dict[str, Any], explorer: Explorer) -> dict[str, Any]:
    """The finding's record with how many programs showed its cause so far, and a few of them as first
    seen (unshrunk, each with other ingredients): what else leads to the same cause."""
    sig = record["signature"]
    return {**record, "seen": max(explorer.seen.get(sig, 1), 1),
            "examples": [p.source() for p in explorer.sightings.get(sig, [])]}


def finding_record(f: Finding, out: Path) -> dict[str, Any]:
    """A finding as findings.json holds it (paths relative to the explorer's output folder)."""
    return {
        "signature": f.signature,
        "statements": len(f.program.statements),
        "kinds": list(f.program.kinds),
        "real_code": real_code_of([s.line() for s in f.program.statements]),
        "program": f.program.source(),
        "variant": f.record.variant,
        "where": f.signature,
        "mismatches": [m.message() for m in f.record.mismatches][:10],
        "reason": f.record.reason[:2000],
        "found_after_s": round(f.found_after, 1),
        "programs_before": f.programs_before,
        "shrunk": f.shrunk,
        "case": _relative(f.case_path, out),
        "case_yaml": Path(f.case_path).read_text(encoding="utf-8") if f.case_path else "",
        "reproducer": _relative(f.reproducer_path, out),
        "reproduces": f.reproduces,
    }


def _relative(path: str, root: Path) -> str:
    """A path under the output folder as written there, so that the findings can move with it."""
    try:
        return Path(path).relative_to(root).as_posix() if path else ""
    except ValueError:
        return path


