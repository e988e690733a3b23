"""`torch-conformance explore`: generate programs, run them eagerly and compiled, shrink and report
every distinct discrepancy (findings.md, findings.json, a case file and a reproducer each)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from conformance.options import shard_of

EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_EMPTY, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explore",
        help="generate programs from the contracts' ingredients, run each eagerly and compiled, and report "
        "every distinct discrepancy, shrunk, as a case file, a reproducer and findings.md",
        description="Draw programs (in-place data and metadata ops, views written through, grad-mode "
        "contexts, aliased inputs, float sweeps) with Hypothesis, run each as a case through the runner and "
        "oracles, confirm each discrepancy by a second run, shrink it, and write one finding per signature. "
        "Each worker runs in its own process. Exit status 1 when a finding or crash was written, 2 on bad usage, "
        "3 when nothing was explored or a worker failed, 130 when interrupted (what was found is written all "
        "the same).",
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
    p.add_argument("-n", "--workers", type=int, default=1, metavar="N",
                   help="worker processes, each exploring its own rounds (default 1); a worker that dies (a "
                   "segfault in the build) is recorded as a crash and started again on its next round")
    p.add_argument("--shard", default="1/1", metavar="I/N",
                   help="explore shard I of N only (the rounds I, I+N, ...): one per CI job, merged with --merge")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="no exploring: merge the findings.json of these output folders (shards of one seed) into -o")
    p.add_argument("--known", metavar="RESULTS",
                   help="a results file of a corpus run on this build: a finding that one of its known failures "
                   "shows the same way (entry point, mode, first check and place) is marked probably known (default: "
                   "results/results.jsonl when it exists)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_explore, needs_torch=True)


def _shard(text: str) -> tuple[int, int] | None:
    """(0-based index, count) of `I/N`, or None when it is not one."""
    try:
        parsed = shard_of(text)
    except ValueError:
        return None
    return (parsed[0] - 1, parsed[1]) if parsed else None


def _usage(args: argparse.Namespace) -> tuple[list[str], list[tuple[Path, dict[str, Any]]]]:
    """Every usage error at once, before any work; and the findings to merge, read."""
    from conformance.explore.supervise import merge_problem
    from conformance.selection import check_selection
    from conformance.selftest.faults import FAULTS

    errors = check_selection([], args.backends, args.modes)
    if args.fault is not None and args.fault not in FAULTS:
        errors.append(f"--fault {args.fault}: no such fault; choose from {', '.join(sorted(FAULTS))}")
    if not (0 < args.time_budget < math.inf) or args.max_examples <= 0 or args.workers <= 0:
        errors.append("--time-budget, --max-examples and --workers must be positive (and the budget finite)")
    if args.seed < 0:
        errors.append(f"--seed {args.seed}: give 0 or a positive number")
    if not args.merge and (not args.backends or not args.modes):
        errors.append("--backends and --modes: give at least one of each")
    if _shard(args.shard) is None:
        errors.append(f"--shard {args.shard}: expected I/N with 1 <= I <= N, e.g. 2/4")
    parts = []
    for d in args.merge or ():
        try:
            doc = json.loads((Path(d) / "findings.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            errors.append(f"--merge {d}: no readable findings.json there ({exc})")
            continue
        problem = merge_problem(doc)
        if problem is not None:
            errors.append(f"--merge {d}/findings.json: {problem}; not one `torch-conformance explore` wrote")
        else:
            parts.append((Path(d).resolve(), doc))
    if args.known and not Path(args.known).is_file():
        errors.append(f"--known {args.known}: no such results file")
    try:
        Path(args.output).mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission: a usage error, before any work
        errors.append(f"-o {args.output}: cannot be the output folder ({exc.strerror or exc})")
    return errors, parts


def cmd_explore(args: argparse.Namespace) -> int:
    from conformance.explore.emit import mark_known, write_report
    from conformance.explore.supervise import Config, merge_into, supervise, totals_report

    args.backends = tuple(b for b in args.backends.split(",") if b)
    args.modes = tuple(m for m in args.modes.split(",") if m)
    errors, parts = _usage(args)
    shard = _shard(args.shard)
    if errors or shard is None:
        for e in errors:
            print(f"explore: {e}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.output).resolve()
    if parts:
        report = merge_into(out, parts)
    else:
        config = Config(out=str(out), backends=args.backends, modes=args.modes, fault=args.fault,
                        time_budget=args.time_budget, max_examples=args.max_examples, seed=args.seed,
                        float_sweeps=not args.no_float_sweeps, shard=shard, workers=args.workers)

        def progress(line: str) -> None:
            print(f"\r{line}   ", end="", file=sys.stderr, flush=True)

        totals, seconds = supervise(config, None if args.quiet else progress)
        if not args.quiet:
            print(file=sys.stderr)
        report = totals_report(config, totals, seconds)
    known = Path(args.known or "results/results.jsonl")
    if known.is_file():
        for w in mark_known(report, known):
            print(f"explore: {w}", file=sys.stderr)
    write_report(out, report)
    _summary(report, Path(args.output))
    if report["interrupted"]:
        return EXIT_INTERRUPTED
    if report["findings"] or report["crashes"]:
        return EXIT_FOUND
    if not parts and (not report["programs"] or report.get("worker_errors")):
        # a control that explored nothing, or whose worker failed, found nothing by not looking
        print(f"explore: {report['programs']} program(s) explored"
              + (f", worker errors: {report['worker_errors']}" if report.get("worker_errors") else ""),
              file=sys.stderr)
        return EXIT_EMPTY
    return EXIT_OK


def _summary(report: dict[str, Any], out: Path) -> None:
    found, crashes = report["findings"], report["crashes"]
    print(f"explore: {report['programs']} programs in {report['seconds']} s ({report['programs_per_hour']}/hour), "
          f"{report['valid_share']:.0%} accepted by eager; {len(found)} finding(s), {len(crashes)} crash(es), "
          f"{len(report['flaky'])} flaky{'; INTERRUPTED' if report['interrupted'] else ''}; "
          f"wrote {out / 'findings.md'}")
    for f in found:
        print(f"  {f['signature']}  [{f['statements']} statement(s); "
              f"{'reproduces' if f['reproduces'] else 'DOES NOT reproduce'}: {f['case']}"
              f"{'; known: ' + ', '.join(f['known_by']) if f.get('known_by') else ''}]")
    for c in crashes:
        print(f"  {c['signature']}  [{'reproduces' if c['reproduces'] else 'DOES NOT reproduce'}: {c['case']}]")
    for e in report["worker_errors"]:
        print(f"explore: {e}", file=sys.stderr)
