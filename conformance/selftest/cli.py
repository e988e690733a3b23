"""`torch-conformance selftest`: the CLI of the self-check (torch is imported only when it runs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from conformance.data.corpus import root_of
from conformance.data.loader import load_all
from conformance.options import BY_NAME, csv

FAST_SUBSET = (
    "mutation_epilogue/data_mutation_nonleaf",
    "mutation_epilogue/leaf_detach_mutation",
    "mutation_epilogue/transpose_metadata_aot_function",
    "mutation_epilogue/set_storage_swap",
    "runtime_wrapper/output_view_of_input",
    "subclass_wrapper/twotensor_in_out",
    "backward_unwrap/twotensor_backward",
    "scalar_recompile/composite_dynamic",
)


def register(sub: Any) -> None:
    """Add `torch-conformance selftest` to the CLI's subparsers."""
    p = sub.add_parser(
        "selftest",
        help="run cases against deliberately broken builds; report which cases kill each fault",
        description="Seeded faults prove every oracle can fail: contract faults wrap the compiled call, "
        "internals faults rewrite one generated function. Exit 1 on a false alarm or a fault that a "
        "case reached but no check caught.",
    )
    p.add_argument("paths", nargs="*", help="case files or folders (default: the cases folder)")
    p.add_argument("--cases", default=None, metavar="DIR", help=BY_NAME["cases"].help)
    p.add_argument("--faults", default="", metavar="LIST", help="only these faults (comma-separated; "
                   "an unknown name lists the known ones)")
    p.add_argument("--backends", default="aot_eager,aot_function,aot_function-kiim", metavar="LIST",
                   help="backends to run (default: aot_eager and aot_function, which the faults need, fast)")
    p.add_argument("--devices", default="cpu", metavar="LIST", help="devices (default: cpu)")
    p.add_argument("--fast", action="store_true",
                   help=f"a fixed small subset of cases ({len(FAST_SUBSET)}) and one kill per fault")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="stop a fault after N kills (default: run every item, for the full kill list)")
    p.add_argument("-o", "--output", default="results/selftest", metavar="DIR",
                   help="where selftest.json and selftest.md go")
    p.set_defaults(func=_cmd, needs_torch=True)


def _cmd(args: Any) -> int:
    from conformance.data.variants import variants_of  # lazy: start-up
    from conformance.selftest.faults import FAULTS  # lazy: start-up
    from conformance.selftest.run import dumps, run_selftest  # lazy: start-up

    root = root_of(args.cases)
    cases, errors = load_all([Path(p) for p in args.paths] or [root], root if root.is_dir() else None)
    for err in errors:
        print(err, file=sys.stderr)
    if args.fast:
        cases = [c for c in cases if c.id in FAST_SUBSET]
    names = csv(args.faults)
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        print(f"--faults: unknown {', '.join(unknown)}; known: {', '.join(FAULTS)}", file=sys.stderr)
        return 2
    faults = [FAULTS[n] for n in names] if names else list(FAULTS.values())
    items = [(lc, v) for lc in cases
             for v in variants_of(lc.case, devices=csv(args.devices), backends=csv(args.backends))]
    if not items:
        print("no items to run: check the paths, --devices and --backends", file=sys.stderr)
        return 2
    report = run_selftest(items, faults, stop_after=1 if args.fast else args.stop_after,
                          progress=lambda m: print(m, flush=True))
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "selftest.json").write_text(dumps(report))
    (out / "selftest.md").write_text(report.to_markdown())
    print(report.to_markdown())
    print(f"written: {out / 'selftest.json'}, {out / 'selftest.md'}")
    return 0 if report.ok else 1
