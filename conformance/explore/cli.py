"""`torch-conformance explore`: generate programs, run them eagerly and compiled, shrink and report
every distinct discrepancy (findings.md, findings.json, a case file and a reproducer each)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.explore.layout import WriteFailed
from conformance.options import shard_of
from conformance.schema.case import SEED_LIMIT

if TYPE_CHECKING:
    from conformance.explore.findings_file import FindingsFile
    from conformance.explore.supervise import Interrupts

EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_EMPTY, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_WRITE = 4  # findings.json or findings.md could not be written (a full disk); `report` says 3, ours is taken


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explore",
        help="generate programs from the contracts' ingredients, run each eagerly and compiled, and report "
        "every distinct discrepancy, shrunk, as a case file, a reproducer and findings.md",
        description="Draw programs (in-place data and metadata ops, storage moving between inputs, views "
        "written through, grad- and inference-mode contexts, aliased inputs, odd shapes, TwoTensors (nested too) "
        "and a user's "
        "subclass, module and optimizer inputs, floats in every position, later calls with other inputs) with "
        "Hypothesis, run each as a case through the runner "
        "and oracles, confirm each discrepancy by a second run, shrink it, and write one finding per cause. "
        "Each worker runs in its own process. Exit status 1 when a finding or crash was written, 2 on bad usage, "
        "3 when nothing was explored or a worker failed, 4 when findings.json or findings.md could not be "
        "written (neither is left then), 130 when interrupted (what was found is written all the same; Ctrl-C "
        "again ends the workers at once, keeping what they saved).",
    )
    p.add_argument("-o", "--output", default="results/explore", metavar="DIR",
                   help="where findings.md, findings.json, findings/ and the Hypothesis database (for resuming) "
                   "go (default: results/explore); a folder of its own, not a filesystem root or your home folder")
    p.add_argument("--seed", type=int, default=0, help="seed of the first round (default 0)")
    p.add_argument("--time-budget", type=float, default=60.0, metavar="SECONDS",
                   help="seconds of search and shrinking (default 60)")
    p.add_argument("--max-examples", type=int, default=1_000_000, metavar="N", help="stop after N programs")
    p.add_argument("--backends", default="aot_eager", metavar="LIST",
                   help="entry points, comma-separated (default aot_eager); `none` runs both sides eagerly: "
                   "a control that must find nothing")
    p.add_argument("--modes", default="inference,training", metavar="LIST", help="default inference,training")
    p.add_argument("--no-float-sweeps", action="store_true", help="leave Python float sweeps out of the programs")
    p.add_argument("--no-registry", action="store_true", help="draw only the hand-written statements, none of "
                   "the forms torch's operator registry offers (in-place, metadata, view and functional ops of every "
                   "dtype)")
    p.add_argument("--fault", metavar="NAME", help="run against one of the selftest's seeded faults "
                   "(`torch-conformance selftest --list`): the explorer checking itself")
    p.add_argument("-n", "--workers", type=int, default=1, metavar="N",
                   help="worker processes, each exploring its own rounds (default 1); a worker that dies (a "
                   "segfault in the build) is recorded as a crash and started again on its next round")
    p.add_argument("--shard", default="1/1", metavar="I/N",
                   help="explore shard I of N only (the rounds I, I+N, ...): one per CI job, merged with --merge")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="no exploring: merge the findings.json of these output folders (shards of one seed) into -o; "
                   "a folder given twice, or two of the same rounds, is refused")
    p.add_argument("--known", metavar="RESULTS",
                   help="a results file of a corpus run on this build: a finding that one of its known failures "
                   "shows the same way (the same cause: entry point, first check, kind of place, direction and "
                   "exception) is marked probably known (default: results/results.jsonl when it exists)")
    p.add_argument("--builds", metavar="LIST",
                   help="after exploring (or merging), rerun each finding's case file on these builds too, "
                   "comma-separated: a folder holding torch, an environment, or the name of the matrix's environment "
                   "(.nox/_torch/NAME, e.g. 2.10.0); each finding then says where it fails and where it passes, and a "
                   "finding that passes on every newer build is marked history (fixed since)")
    p.add_argument("--coverage", type=int, metavar="N",
                   help="no exploring: draw N programs as an exploration would (its --seed) and print the share "
                   "holding each ingredient and the share eager accepts (each run with both sides eager); exit 1 "
                   "when an ingredient is drawn in under 1 %% of them")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_explore, needs_torch=True)


def _shard(text: str) -> tuple[int, int] | None:
    """(0-based index, count) of `I/N`, or None when it is not one."""
    try:
        parsed = shard_of(text)
    except ValueError:
        return None
    return (parsed[0] - 1, parsed[1]) if parsed else None


def _usage(args: argparse.Namespace) -> tuple[list[str], list[tuple[Path, FindingsFile]]]:
    """Every usage error at once, before any work; and the findings to merge, read."""
    from conformance.data.selection import check_selection  # lazy: start-up
    from conformance.explore.supervise import unmerged_states  # lazy: start-up
    from conformance.selftest.faults import FAULTS  # lazy: start-up

    errors = check_selection([], args.backends, args.modes)
    if args.fault is not None and args.fault not in FAULTS:
        errors.append(f"--fault {args.fault}: no such fault; choose from {', '.join(sorted(FAULTS))}")
    if not (0 < args.time_budget < math.inf) or args.max_examples <= 0 or args.workers <= 0:
        errors.append("--time-budget, --max-examples and --workers must be positive (and the budget finite)")
    if not 0 <= args.seed < SEED_LIMIT:
        errors.append(f"--seed {args.seed}: give 0 or a positive number below 2**63 (a case's seed)")
    if not args.merge and (not args.backends or not args.modes):
        errors.append("--backends and --modes: give at least one of each")
    if _shard(args.shard) is None:
        errors.append(f"--shard {args.shard}: expected I/N with 1 <= I <= N, e.g. 2/4")
    merge_errors, parts = _merge_parts(args.merge or [])
    errors += merge_errors
    if args.builds is not None:
        from conformance.explore.releases import check_builds  # lazy: start-up

        errors += check_builds([b for b in args.builds.split(",") if b]) or (
            [] if args.builds.strip(",") else ["--builds: give at least one build"])
    if args.known and not Path(args.known).is_file():
        errors.append(f"--known {args.known}: no such results file")
    if _shared(Path(args.output)):
        errors.append(f"-o {args.output}: a filesystem root or your home folder; explore writes findings.json, "
                      "findings.md, findings/ and shards/ into -o, so give it a folder of its own "
                      "(e.g. -o results/explore)")
        return errors, parts
    if errors:  # nothing is made for a run that will not start
        return errors, parts
    try:
        Path(args.output).mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission: a usage error, before any work
        errors.append(f"-o {args.output}: cannot be the output folder ({exc.strerror or exc})")
        return errors, parts
    left = {} if args.merge else unmerged_states(Path(args.output))
    if left:
        # starting over would overwrite them: what an interrupted run found is never dropped unasked
        first = next(iter(left))
        found = sum(len(s.get("findings", ())) for s in left.values())
        programs = sum(int(s.get("programs", 0)) for s in left.values())
        errors.append(f"-o {args.output}: {first}{f' (and {len(left) - 1} more)' if len(left) > 1 else ''} holds "
                      f"what an earlier run found ({found} finding(s) in {programs} programs) that no findings.json "
                      "took (that run was killed, or its findings.json could not be written); nothing was removed. "
                      f"To keep it, explore into another -o (its case files are under {first.parent}/findings/); "
                      f"to drop it, remove {Path(args.output) / 'shards' / '*' / 'state.json'}")
    return errors, parts


def _shared(out: Path) -> bool:
    """A filesystem root or the home folder: explore's files (and a later run's) would mix with everything there."""
    resolved = out.resolve()
    home = os.path.expanduser("~")
    return resolved == resolved.parent or (home != "~" and resolved == Path(home).resolve())


def _merge_parts(dirs: list[str]) -> tuple[list[str], list[tuple[Path, FindingsFile]]]:
    """Each folder's findings.json, checked. A folder given twice, or two files of the same rounds (a
    job's folder copied), would count the same programs and findings twice: refused."""
    from conformance.explore.findings_file import read_findings  # lazy: start-up

    errors: list[str] = []
    seen: dict[Path, str] = {}
    read: list[tuple[str, Path, FindingsFile]] = []
    for d in dirs:
        root, name = Path(d).resolve(), Path(d) / "findings.json"
        if root in seen:
            errors.append(f"--merge {d}: the same folder as --merge {seen[root]}; merged twice, its counts would "
                          "double")
            continue
        seen[root] = d
        doc, problems = read_findings(root / "findings.json")
        errors += [f"--merge {name}: {p}" for p in problems]
        if doc is None:
            continue
        twin = next(((other_name, other) for other_name, _, other in read if other.overlaps(doc)), None)
        if twin is not None:
            errors.append(f"--merge {name}: shard: {doc.shard} explored rounds that shard {twin[1].shard} of "
                          f"--merge {twin[0]} did (the same torch, seed, backends and modes); merged, their counts "
                          "would double")
            continue
        read.append((str(name), root, doc))
    return errors, [(root, doc) for _, root, doc in read]


def cmd_explore(args: argparse.Namespace) -> int:
    from conformance.explore.findings import discard_report, mark_known, merge_into, write_report  # lazy: start-up
    from conformance.explore.supervise import Interrupts  # lazy: start-up

    if args.coverage is not None:
        return _coverage(args)
    args.backends = tuple(b for b in args.backends.split(",") if b)
    args.modes = tuple(m for m in args.modes.split(",") if m)
    errors, parts = _usage(args)
    shard = _shard(args.shard)
    if errors or shard is None:
        for e in errors:
            print(f"explore: {e}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.output).resolve()
    # a Ctrl-C stops the exploration; none stops the writing of what it found
    with Interrupts() as interrupts:
        try:
            report = merge_into(out, parts) if parts else _explore(args, out, shard, interrupts)
            if args.builds:
                from conformance.explore.releases import add_releases  # lazy: start-up

                add_releases(report, out, [b for b in args.builds.split(",") if b],
                             say=lambda line: print(line, file=sys.stderr))
            known = Path(args.known or "results/results.jsonl")
            if known.is_file():
                for w in mark_known(report, known):
                    print(f"explore: {w}", file=sys.stderr)
            write_report(out, report)
        except WriteFailed as exc:
            discard_report(out)
            print(f"explore: {exc}", file=sys.stderr)
            return EXIT_WRITE
        with contextlib.suppress(OSError):  # written already; a terminal that is gone loses the summary
            _summary(report, Path(args.output))
        return _status(report, bool(parts))


def _coverage(args: argparse.Namespace) -> int:
    from conformance.explore.coverage import coverage, to_text  # lazy: start-up

    if args.coverage <= 0 or not 0 <= args.seed < SEED_LIMIT:
        print("explore: --coverage N: give a positive N (and --seed from 0 to 2**63 - 1)", file=sys.stderr)
        return EXIT_USAGE
    doc = coverage(args.coverage, args.seed, registry=not args.no_registry)
    print(to_text(doc))
    return EXIT_FOUND if doc["below_1_percent"] else EXIT_OK


def _explore(args: argparse.Namespace, out: Path, shard: tuple[int, int], interrupts: Interrupts) -> dict[str, Any]:
    from conformance.explore.supervise import Config, supervise, totals_report  # lazy: start-up

    config = Config(out=str(out), backends=args.backends, modes=args.modes, fault=args.fault,
                    time_budget=args.time_budget, max_examples=args.max_examples, seed=args.seed,
                    float_sweeps=not args.no_float_sweeps, registry=not args.no_registry, shard=shard,
                    workers=args.workers)

    def progress(line: str) -> None:
        with contextlib.suppress(OSError):  # a terminal that is gone (SIGHUP) loses the line, nothing else
            print(f"\r{line}   ", end="", file=sys.stderr, flush=True)

    totals, seconds = supervise(config, None if args.quiet else progress, interrupts=interrupts)
    if not args.quiet:
        with contextlib.suppress(OSError):
            print(file=sys.stderr)
    return totals_report(config, totals, seconds)


def _status(report: dict[str, Any], merged: bool) -> int:
    if report["interrupted"]:
        return EXIT_INTERRUPTED
    if report["findings"] or report["crashes"]:
        return EXIT_FOUND
    if not merged and (not report["programs"] or report.get("worker_errors")):
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
