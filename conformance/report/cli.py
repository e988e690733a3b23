"""The `report` and `report diff` subcommands of `torch-conformance` (no torch needed)."""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.bench.report import read
from conformance.data.corpus import root_of
from conformance.data.loader import CaseLoadError
from conformance.data.parity import load_parity, parity_path
from conformance.options import BY_NAME, csv
from conformance.report import ReportInputError, draft_output, merge, write_report
from conformance.report.document import COMPAT_SCHEMA
from conformance.report.drafts import DRAFTS
from conformance.report.scripts import REPRODUCERS

if TYPE_CHECKING:
    from conformance.bench.document import BenchDocument
    from conformance.data.parity import ParityFile
    from conformance.report.model import Report

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_WRITE = 3  # the report could not be written (a full disk)
DEFAULT_OUT = "results/report"  # yours, beside the results; reports/ holds the published ones


def expand(paths: Sequence[str], pattern: str = "*.jsonl") -> list[Path]:
    """Files as given; a folder stands for every file under it matching `pattern` (results files by
    default, e.g. downloaded CI artifacts)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        out += sorted(path.rglob(pattern)) if path.is_dir() else [path]
    return out


def _missing(paths: Sequence[Path]) -> list[str]:
    """Each path that is no readable file, with why (a folder where a results file was asked for)."""
    return [f"{p} (a folder, not a results file)" if p.is_dir() else str(p) for p in paths if not p.is_file()]


def _missing_inputs(paths: Sequence[Path], expectations: Sequence[Path]) -> str:
    """What is missing among the report's inputs, in words ('' where nothing is)."""
    bad = [f"{p} (a folder, not an expectations file)" if p.is_dir() else f"{p} (no such file)"
           for p in expectations if not p.is_file()]
    if bad:
        return f"--expectations: {', '.join(bad)}; give the expectation files the runs used"
    missing = _missing(paths)
    if missing or not paths:
        what = ", ".join(missing) if missing else "no *.jsonl under the folders given"
        return f"no such results file: {what}; run `torch-conformance run --results PATH` first"
    return ""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="merge results files into a report folder (compat.json, compat.md, index.html, junit.xml); "
        "`report diff A B` compares two runs",
        description="Merge results files (builds x devices x shards) into one report folder: compat.json, "
        "compat.md, index.html, junit.xml and the failures' reproducers. Exit status 1 when an item failed, "
        "errored or passed although declared a known failure (xpass), or a behaviour x device cell ran no "
        "case; 2 when an input is missing or malformed, or the output folder is unsafe to write; 3 when the "
        "report could not be written (a full disk).",
        epilog="torch-conformance report diff A B: items that went pass->fail or fail->pass, internals "
        "mechanisms newly absent or present, compile-count changes between two runs (results files, "
        "folders or compat.json); exit status 1 on a regression. See `torch-conformance report diff --help`.",
    )
    p.add_argument("results", nargs="*", metavar="RESULTS",
                   help="results files (JSON Lines from `run`), folders of them, or compat.json reports "
                   f"(default: {BY_NAME['results'].env_default()})")
    p.add_argument("-o", "--output", default=DEFAULT_OUT, metavar="DIR",
                   help=f"report folder, written atomically (default: {DEFAULT_OUT})")
    p.add_argument("--expectations", default=None, metavar="PATHS",
                   help="the expectation files the runs used (comma-separated); entries that matched no item of "
                   f"any build are listed as stale [env {BY_NAME['expectations'].env}]")
    p.add_argument("--cases", default=None, metavar="DIR",
                   help="the corpus the records were run from: the case files the stale check reads (only inside it) "
                   f"and its UPSTREAM.yaml (default: as `run`: {BY_NAME['cases'].env} or ./cases, else the package's "
                   "own corpus)")
    p.add_argument("--parity", default=None, metavar="PATH",
                   help="the upstream parity mapping whose table the report shows (default: UPSTREAM.yaml in the "
                   "corpus --cases names, when it is there)")
    p.add_argument("--bench", default=None, metavar="PATHS",
                   help="bench results of the builds (bench.json files or folders of them, comma-separated): the "
                   "report shows each bench table release over release, the release where each change landed "
                   "against the one before")
    p.add_argument("--publish", action="store_true",
                   help="a report to keep in git (the published release matrix): the full records gzipped "
                   "(compat.json.gz, which report and report diff read), a page listing only the notable items "
                   "(not passing, changing status across builds, or an internals probe that diverges), no junit.xml")
    p.add_argument("--capture-drafts", action="store_true",
                   help="run each issue draft's program as published with this Python, where its torch is the "
                   "draft's build, and show in the draft what it printed (kept beside the drafts for later reports; "
                   "a draft of another build says it was not run). The programs are the reproducers that came with "
                   "the results: this runs their code (with a minimal environment), so give it only results you "
                   "trust, as you would a case file")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 once the report is written, whatever it shows (for a rendering step that is "
                   "not a gate)")
    p.set_defaults(func=cmd_report)


def links_inside(out: Path) -> Path | None:
    """The first symbolic link among the folders and files the report writes or removes under `out`."""
    for name in (REPRODUCERS, DRAFTS):
        top = out / name
        if top.is_symlink():
            return top
        if top.is_dir():
            for folder, dirs, files in os.walk(top):  # os.walk does not follow links
                for entry in (*dirs, *files):
                    if (Path(folder) / entry).is_symlink():
                        return Path(folder) / entry
    return None


def _is_report(path: Path) -> bool:
    """Whether an input is a report's compat.json (gzipped or not), by its first bytes."""
    try:
        with path.open("rb") as raw:
            head = raw.read(2)
        with (gzip.open(path, "rb") if head == b"\x1f\x8b" else path.open("rb")) as f:
            start = f.read(300).decode("utf-8", errors="replace")
    except (OSError, EOFError):
        return False
    return start.lstrip().startswith("{") and f'"{COMPAT_SCHEMA}"' in start


def _output_problem(out: Path, paths: Sequence[Path]) -> str:
    """Why the report cannot be written into `out` ('' where it can)."""
    if out.exists() and not out.is_dir():
        return "a file, not a folder; the report writes a folder of files (e.g. -o results/report)"
    # a results file's folder holds its run's reproducers, which the report would replace; a report's
    # own compat.json may be rendered again into its folder (its scripts are the report's own)
    clash = next((p for p in paths if out.resolve() == p.resolve().parent and not _is_report(p)), None)
    if clash is not None:
        return (f"that folder holds the inputs ({clash}) and the run's reproducers, which the report would "
                "overwrite or remove; write the report elsewhere, e.g. -o results/report")
    return ""


def cmd_report(args: argparse.Namespace) -> int:
    paths = expand(args.results or [str(BY_NAME["results"].env_default())])
    exp_text = args.expectations if args.expectations is not None else BY_NAME["expectations"].env_default()
    expectations = [Path(p) for p in csv(exp_text)]
    missing = _missing_inputs(paths, expectations)
    if missing:
        print(f"report: {missing}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.output)
    problem = _output_problem(out, paths)
    if problem:
        print(f"report: -o {out}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = merge(paths, expectations=expectations, parity=_parity(args.parity, args.cases))
        report.bench = _bench(args.bench)
    except ReportInputError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return EXIT_USAGE
    linked = links_inside(out)
    if linked is not None:
        print(f"report: -o {out}: {linked} is a symbolic link; the report writes and removes files only in folders "
              "of its own (remove the link, or write the report elsewhere)", file=sys.stderr)
        return EXIT_USAGE
    capture = _capture() if args.capture_drafts else None
    try:
        write_report(report, out, publish=args.publish, capture=capture)
    except OSError as exc:  # a full disk: say so, and what is left behind
        print(f"report: -o {out}: the report could not be written ({exc.strerror or exc}); the files already "
              "there may be from an earlier report", file=sys.stderr)
        return EXIT_WRITE
    names = "compat.json.gz, compat.md, index.html" if args.publish else "compat.json, compat.md, index.html, junit.xml"
    print(f"wrote {out}/{names}: {len(report.records)} record(s), {len(report.builds)} build(s).")
    if report.dropped:
        print(f"inputs overlap: {len(report.dropped)} superseded record(s) left out (the latest per build, case "
              "and variant is kept; listed in compat.md)")
    changed = report.changed_cases(root_of(args.cases))
    if changed:
        print(f"stale: {len(changed)} case file(s) changed since their results were made (this report shows the "
              f"old ones; rerun them): {', '.join(changed[:10])}{' ...' if len(changed) > 10 else ''}",
              file=sys.stderr)
    for p in report.problems:
        if p.kind == "mixed-harness":
            print(f"report: {p.message}", file=sys.stderr)
    for item in report.stale:
        print(f"stale expectation: {item.source}: {item.case} matched no item; retire or fix it")
    for s in report.xpasses:
        idle = s.record.idle_known_failures()
        src = ", ".join(k.source for k in idle) or "?"
        print(f"xpass: {s.record.case_id} [{s.record.variant}]: a known failure covers nothing; retire or narrow "
              f"the expectation at {src}")
    print("\n".join(closing_lines(report, out)))
    return EXIT_OK if args.exit_zero else report.exit_code()


def closing_lines(report: Report, out: Path) -> list[str]:
    """The report command's last lines: the report's own first sentence (Report.summary: what needs a person,
    as both pages count it), then where to look, as paths to open: the page, compat.md, the issue drafts
    and the reproducers, each folder with its count."""
    _, sentence = report.summary()
    drafts, scripts = len(report.drafts), len(set(report.links.values()))
    to_file = f", {len(report.drafts_to_file)} to file" if report.drafts_to_file else ""
    return [sentence,
            f"  page:         {out / 'index.html'}",
            f"  compat.md:    {out / 'compat.md'}",
            f"  issue drafts: {out / DRAFTS}/ ({drafts} draft(s){to_file})" if drafts else "  issue drafts: none",
            f"  reproducers:  {out / REPRODUCERS}/ ({scripts} script(s))" if scripts else "  reproducers:  none"]


def _capture() -> Callable[[str, str], Any] | None:
    """Run a draft's program with this Python where its torch is the draft's build (None: this Python has none)."""
    version = draft_output.installed_torch()
    if version is None:
        print("report: --capture-drafts: this Python imports no torch; the drafts say they were not run",
              file=sys.stderr)
        return None
    return lambda program, build: draft_output.run(program, version) if build == version else None


def _bench(given: str | None) -> list[BenchDocument]:
    docs = []
    for path in expand(csv(given or ""), "bench.json"):
        try:
            docs.append(read(path))  # held to its model (conformance.bench.document) before anything is written
        except (OSError, ValueError) as exc:
            raise ReportInputError(f"--bench: {exc}") from None
    if given and not docs:
        raise ReportInputError(f"--bench {given}: no bench.json there")
    return docs


def _parity(given: str | None, cases: str | None = None) -> ParityFile | None:
    path = Path(given) if given else parity_path(root_of(cases))
    if not path.is_file():
        if given:
            raise ReportInputError(f"--parity {given}: no such file")
        return None
    try:
        return load_parity(path).mapping
    except CaseLoadError as exc:
        raise ReportInputError("; ".join(str(e) for e in exc.errors[:3])) from None


def diff_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torch-conformance report diff",
        description="Compare two runs. Builds pair by id, else the one build of each side, else by torch release; "
        "items by case and variant. Regressions (exit status 1): an item that went to fail or error, an "
        "internals probe that conformed and now diverges or is absent, more graphs compiled. Fixes, newly "
        "present mechanisms and other changes are listed too; a new item that fails counts as a regression. "
        "Exit status 2: an input is missing or malformed.",
    )
    p.add_argument("a", metavar="A", help="the baseline: a results file, a folder of them, or a compat.json")
    p.add_argument("b", metavar="B", help="the run to judge: a results file, a folder of them, or a compat.json")
    p.add_argument("--json", metavar="PATH", help="also write the diff as JSON to PATH")
    p.add_argument("--limit", type=int, default=200, metavar="N", help="items listed per kind of change "
                   "(default 200; --json has all)")
    return p


def diff_main(argv: Sequence[str]) -> int:
    from conformance.report.diff import diff_runs, load_side, render_text, write_json  # lazy: start-up

    args = diff_parser().parse_args(list(argv))
    sides = []
    for given in (args.a, args.b):
        paths = expand([given])
        missing = _missing(paths)
        if missing or not paths:
            print(f"report diff: no such results file: {given}", file=sys.stderr)
            return EXIT_USAGE
        try:
            sides.append(load_side(paths))
        except ReportInputError as exc:
            print(f"report diff: {exc}", file=sys.stderr)
            return EXIT_USAGE
    result = diff_runs(sides[0], sides[1])
    sys.stdout.write(render_text(result, limit=args.limit))
    if args.json:
        write_json(result, Path(args.json))
    return EXIT_FAIL if result.regressed else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m conformance.report [RESULTS...] | diff A B`: the same as `torch-conformance report`,
    without loading the rest of the CLI (so it runs where torch is not installed, e.g. a CI merge job)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["diff"]:
        return diff_main(args[1:])
    parser = argparse.ArgumentParser(prog="python -m conformance.report")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    parsed = parser.parse_args(["report", *args])
    code: int = parsed.func(parsed)
    return code
