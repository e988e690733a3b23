"""`torch-conformance explore`: generate programs, run them eagerly and compiled, shrink and report
every distinct discrepancy (findings.md, findings.json, a case file and a reproducer each)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explore",
        help="generate programs from the contracts' ingredients, run each eagerly and compiled, and report "
        "every distinct discrepancy, shrunk, as a case file, a reproducer and findings.md",
        description="Draw programs (in-place data and metadata ops, views written through, grad-mode "
        "contexts, aliased inputs, float sweeps) with Hypothesis, run each as a case through the runner and "
        "oracles, confirm each discrepancy by a second run, shrink it, and write one finding per signature. "
        "Exit status 1 when a finding was written, 2 on bad usage.",
    )
    p.add_argument("-o", "--output", default="results/explore", metavar="DIR",
                   help="where findings.md, findings.json, findings/ and the Hypothesis database (for resuming) "
                   "go (default: results/explore)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first round (default 0)")
    p.add_argument("--time-budget", type=float, default=60.0, metavar="SECONDS",
                   help="seconds of search and shrinking (default 60)")
    p.add_argument("--max-examples", type=int, default=1_000_000, metavar="N", help="stop after N programs")
    p.add_argument("--backends", default="aot_eager", metavar="LIST",
                   help="entry points, comma-separated (default aot_eager); `none` runs both sides eagerly: "
                   "a control that must find nothing")
    p.add_argument("--modes", default="inference,training", metavar="LIST", help="default inference,training")
    p.add_argument("--no-float-sweeps", action="store_true", help="leave Python float sweeps out of the programs")
    p.add_argument("--fault", metavar="NAME", help="run against one of the selftest's seeded faults "
                   "(`torch-conformance selftest --list`): the explorer checking itself")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_explore, needs_torch=True)


def cmd_explore(args: argparse.Namespace) -> int:
    from conformance.explore.emit import emit, write_findings
    from conformance.explore.engine import Explorer
    from conformance.selection import check_selection
    from conformance.selftest.faults import FAULTS

    backends = tuple(b for b in args.backends.split(",") if b)
    modes = tuple(m for m in args.modes.split(",") if m)
    errors = check_selection([], backends, modes)
    if args.fault is not None and args.fault not in FAULTS:
        errors.append(f"--fault {args.fault}: no such fault; choose from {', '.join(sorted(FAULTS))}")
    if args.time_budget <= 0 or args.max_examples <= 0:
        errors.append("--time-budget and --max-examples must be positive")
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission: a usage error, before any work
        errors.append(f"-o {out}: cannot be the output folder ({exc.strerror or exc})")
    if errors:
        for e in errors:
            print(f"explore: {e}", file=sys.stderr)
        return EXIT_USAGE
    hooks = (FAULTS[args.fault].hook(),) if args.fault else ()
    # the build's own error logs (a guard that fails to build) are findings' details, not progress
    from torch._logging import set_logs  # type: ignore[attr-defined]  # public API, not in the stub's exports

    set_logs(all=logging.CRITICAL)

    def progress(line: str) -> None:
        print(f"\r{line}   ", end="", file=sys.stderr, flush=True)

    explorer = Explorer(Path(args.output), backends=backends, modes=modes, hooks=hooks,
                        time_budget=args.time_budget, max_examples=args.max_examples, seed=args.seed,
                        float_sweeps=not args.no_float_sweeps, progress=None if args.quiet else progress)
    found = explorer.explore()
    if not args.quiet:
        print(file=sys.stderr)
    emitted = [emit(explorer, f) for f in found.values()]
    report = write_findings(explorer, emitted)
    print(f"explore: {report['programs']} programs in {report['seconds']} s ({report['programs_per_hour']}/hour), "
          f"{report['valid_share']:.0%} accepted by eager; {len(emitted)} finding(s), {len(report['flaky'])} flaky; "
          f"wrote {Path(args.output) / 'findings.md'}")
    for f in emitted:
        print(f"  {f.signature}  [{len(f.program.statements)} statement(s); "
              f"{'reproduces' if f.reproduces else 'DOES NOT reproduce'}: {f.case_path}]")
    return EXIT_FOUND if emitted else EXIT_OK
