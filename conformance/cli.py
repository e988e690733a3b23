"""`torch-conformance`: validate, list and run conformance cases (run = pytest with the plugin)."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from conformance import __version__
from conformance.bench.cli import add_parser as add_bench_parser
from conformance.bench.document import bench_json_schema
from conformance.data.corpus import has_cases, resolve, root_of, where_looked
from conformance.data.devices import device_status
from conformance.data.loader import CaseLoadError, LoadedCase, load_all
from conformance.data.parity import load_parity, parity_path
from conformance.explore import cli as explore
from conformance.options import BY_NAME, OPTIONS, Option, check_number, csv
from conformance.report.cli import add_parser as add_report_parser
from conformance.report.cli import diff_main
from conformance.report.document import compat_json_schema
from conformance.results import hold_results, manifest_json_schema, manifest_path, result_json_schema
from conformance.schema import json_schema
from conformance.selftest import cli as selftest

if TYPE_CHECKING:
    from conformance.data.variants import Variant

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_NOTHING = 5  # pytest's: the selection matched no item
EXIT_INTERRUPTED = 130  # Ctrl-C, SIGTERM or SIGHUP stopped the run (as explore says too)
PYTEST_USAGE = 4  # pytest's usage error (a plugin option's bad value): `run` says 2 for every usage error
PYTEST_INTERRUPTED = 2  # pytest's: the session was interrupted; `run` says 130, 2 being its usage errors
_TORCH_MISSING = (
    "torch is not importable in this Python ({exe}).\n"
    "torch-conformance tests the torch build you already have and never installs one itself.\n"
    "Install the build to test into this environment, e.g.:\n"
    "  pip install torch==2.13.0            # a release\n"
    "  pip install --pre torch --index-url <your nightly index>   # a nightly\n"
    "or let nox make an environment for you: nox -s conformance -- --torch 2.13.0"
)


def _add_option(parser: argparse.ArgumentParser, opt: Option) -> None:
    help_text = f"{opt.help} [env {opt.env}; pytest {opt.pytest_flag}]"
    if opt.kind == "flag":
        parser.add_argument(opt.cli_flag, action="store_true", default=None, dest=opt.name, help=help_text)
    else:
        parser.add_argument(opt.cli_flag, default=None, dest=opt.name, metavar=opt.metavar, help=help_text)


def _paths(args: argparse.Namespace) -> list[Path]:
    root = root_of(args.cases)
    return [resolve(p, root) for p in args.paths] or [root]


def _no_cases(args: argparse.Namespace, paths: list[Path]) -> int | None:
    """A usage error where the paths hold no case file: never a table of zeros or an empty run."""
    named = list(args.paths) if args.paths else list(map(str, paths))  # as the user wrote them
    missing = [shown for shown, p in zip(named, paths, strict=True) if not p.exists()]
    if missing:
        print(f"no such file or folder: {', '.join(missing)}" if args.paths else
              f"no cases folder: looked for {where_looked(args.cases)}", file=sys.stderr)
        return EXIT_USAGE
    if not has_cases(paths):
        where = ", ".join(map(str, paths)) if args.paths else where_looked(args.cases)
        print(f"no case files (*.yaml) under {where}; point --cases at the folder that holds them", file=sys.stderr)
        return EXIT_USAGE
    return None


def _display(path: Path) -> str:
    """A case file as pytest names it in node ids: relative to the working folder where it lies under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _require_torch(how: bool | str) -> bool:
    """Whether the build under test imports; `run` only asks whether it is installed, as its items
    import it in their worker (a broken build is then an error record per item), which spares the
    run's own process the import (seconds, most of its start-up)."""
    if how == "installed":
        found = importlib.util.find_spec("torch") is not None
    else:
        try:
            import torch  # noqa: F401  # only checking that the build under test imports
        except ImportError:
            found = False
        else:
            found = True
    if not found:
        print(_TORCH_MISSING.format(exe=sys.executable), file=sys.stderr)
    return found


def cmd_validate(args: argparse.Namespace) -> int:
    root = root_of(args.cases)
    paths = _paths(args)
    if (problem := _no_cases(args, paths)) is not None and not any(p.name == "UPSTREAM.yaml" for p in paths):
        return problem
    check = None
    try:
        import torch  # noqa: F401  # the checks that need the build run only where it imports
    except ImportError:
        print("torch is not importable here: checked the schema only (not classes, class names, backends)",
              file=sys.stderr)
    else:
        from conformance.data.deep_check import checker  # lazy: start-up

        check = checker(backends=True)
    cases, errors = load_all(paths, root if root.is_dir() else None, check)
    for err in errors:
        print(err)
    parity_errors = _check_parity(root, paths, {c.id: c.case.stated_counts() for c in cases})
    for line in parity_errors:
        print(line)
    files = len(cases) + len({e.path for e in errors})
    if errors:
        print(f"{len(errors)} error(s) in {len({e.path for e in errors})} of {files} case file(s)", file=sys.stderr)
        return EXIT_USAGE
    if parity_errors:
        print(f"{len(parity_errors)} error(s) in the upstream parity mapping", file=sys.stderr)
        return EXIT_USAGE
    if cases:
        print(f"{len(cases)} case file(s) valid")
    parity = root / "UPSTREAM.yaml"
    if parity.is_file() and any(p.resolve() in (parity.resolve(), root.resolve()) for p in paths):
        print("the upstream parity mapping is valid: every case id it names exists")
    else:
        print(f"the upstream parity mapping was not checked: validate the cases folder ({root}) or name its"
              " UPSTREAM.yaml (--cases DIR says where the cases folder is)")
    return EXIT_OK


def _check_parity(root: Path, paths: list[Path], counts: dict[str, tuple[str | None, bool]]) -> list[str]:
    """The upstream parity mapping's errors: its schema, and (when the whole cases folder was
    validated, so every case is known) each case id it names that no case has, and each count upstream
    asserts that a mapped case states otherwise (`counts`: case id -> its stated count, and whether it states
    per-call counts)."""
    path = parity_path(root)
    if not path.is_file() or not any(p.resolve() in (root.resolve(), path.resolve()) for p in paths):
        return []
    try:
        parity = load_parity(path)
    except CaseLoadError as exc:
        return [str(e) for e in exc.errors]
    if not any(p.resolve() == root.resolve() for p in paths):
        counts = {c.id: c.case.stated_counts() for c in load_all([root], root)[0]}
    return parity.dangling(counts) + parity.miscounted(counts)


def cmd_list(args: argparse.Namespace) -> int:
    from conformance.data.selection import check_selection  # lazy: start-up
    from conformance.data.variants import variants_of  # lazy: start-up
    from conformance.pytest_plugin.plugin import item_name  # lazy: start-up

    root = root_of(args.cases)
    paths = _paths(args)
    if (problem := _no_cases(args, paths)) is not None:
        return problem
    cases, errors = load_all(paths, root if root.is_dir() else None)
    rows = []
    per_behavior: Counter[str] = Counter()
    items: Counter[tuple[str, str]] = Counter()
    problems = check_selection(csv(args.devices), csv(args.backends), csv(args.modes))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return EXIT_USAGE
    for lc in cases:
        per_behavior[lc.case.behavior] += 1
        for v in variants_of(lc.case, devices=csv(args.devices), backends=csv(args.backends), modes=csv(args.modes)):
            if args.keyword and not _keyword_matches(args.keyword, lc, v):
                continue
            status = device_status(v.device)
            verdict = "run" if status.available else f"skip: {status.reason}"
            items[(lc.case.behavior, "run" if status.available else "skip")] += 1
            rows.append({"case": lc.id, "variant": v.label, "behavior": lc.case.behavior, "will": verdict,
                         "nodeid": f"{_display(lc.path)}::{item_name(lc.id, v)}"})
    for err in errors:
        rows.append({"case": err.path, "variant": "schema", "behavior": "?", "will": f"error: {err}"})
    if args.json:
        print(json.dumps(rows, indent=1))
    elif args.summary:
        print(f"{'behavior':<20} {'cases':>6} {'items to run':>13} {'items to skip':>14}")
        for b in sorted(per_behavior):
            print(f"{b:<20} {per_behavior[b]:>6} {items[(b, 'run')]:>13} {items[(b, 'skip')]:>14}")
        print(f"{'total':<20} {sum(per_behavior.values()):>6} {sum(v for (_, k), v in items.items() if k == 'run'):>13}"
              f" {sum(v for (_, k), v in items.items() if k == 'skip'):>14}")
        if errors:
            print(f"{len(errors)} case file error(s); run torch-conformance validate", file=sys.stderr)
    else:
        for row in rows:
            print(f"{row['case']} [{row['variant']}]  {row['will']}")
    return EXIT_FAIL if errors else EXIT_OK


def _keyword_matches(expression: str, lc: LoadedCase, variant: Variant) -> bool:
    """pytest's -k over the same words a run's items carry (see plugin.CaseItem)."""
    from _pytest.mark.expression import Expression  # lazy: start-up

    words = {lc.id, lc.case.behavior, variant.device, variant.backend_label, variant.mode,
             f"{lc.id.rsplit('/', 1)[-1]}[{variant.label}]", lc.path.name}

    def matcher(name: str, /, **_: object) -> bool:
        return any(name.lower() in w.lower() for w in words)

    return bool(Expression.compile(expression).evaluate(matcher))


def pytest_args(args: argparse.Namespace) -> list[str]:
    """The pytest command line that `run` executes (also what `--dry-run` prints)."""
    # -rfE: failures and errors in the short summary; skips are summarised per reason by the plugin
    out = ["--conformance", "-p", "no:cacheprovider", "-rfE"]
    for opt in OPTIONS:
        value = getattr(args, opt.name, None)
        if value is None:
            continue
        if opt.kind == "flag":
            if value:
                out.append(opt.pytest_flag)
        else:
            out.append(f"{opt.pytest_flag}={value}")
    if args.keyword:
        out += ["-k", args.keyword]
    # Note [Every item accounted for]: items run in a worker process even when serial, so that a
    # program that ends its process costs only its own item; -n 0 runs them in this process.
    out += ["-n", args.numprocesses or "1"]
    if args.quiet:
        out.append("-q")
    out += [str(p) for p in _paths(args)]
    out += list(args.pytest_args)
    return out


def _cases_root(args: argparse.Namespace) -> str | None:
    """The cases root for a run: --cases (or its environment variable); else, where a path given
    lies outside the default folder (a case of one's own), the folder the paths have in common,
    so that every path given is run and ids are paths under it."""
    if args.cases or not args.paths:
        return str(args.cases) if args.cases else None
    default = root_of(None).resolve()
    paths = [resolve(p, default).resolve() for p in args.paths]
    if all(p.is_relative_to(default) for p in paths):
        return None
    folders = [p if p.is_dir() else p.parent for p in paths]
    return os.path.commonpath([str(f) for f in folders])


def cmd_run(args: argparse.Namespace) -> int:
    problems = [why for name in ("timeout", "memory_limit") if getattr(args, name) is not None
                and (why := check_number(BY_NAME[name], getattr(args, name), positive=name == "timeout"))]
    if not problems:
        from conformance.data.selection import check_selection  # lazy: start-up

        problems = check_selection(csv(args.devices), csv(args.backends), csv(args.modes))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return EXIT_USAGE
    root = root_of(args.cases)
    files = [resolve(p.split("::", 1)[0], root) for p in args.paths]
    if (problem := _no_cases(args, files or [root])) is not None:
        return problem
    args.paths = [str(f) + (f"::{p.split('::', 1)[1]}" if "::" in p else "")
                  for f, p in zip(files, args.paths, strict=True)]
    args.cases = _cases_root(args)
    argv = pytest_args(args)
    if args.dry_run:
        print("pytest " + " ".join(argv))
        return EXIT_OK
    results = Path(args.results or BY_NAME["results"].env_default())
    holder = hold_results(results)  # only to say so plainly: the run's own process holds it for real
    if isinstance(holder, str):
        print(holder, file=sys.stderr)
        return EXIT_USAGE
    holder.close()
    started = time.time()
    if str(args.numprocesses or "1") == "0":
        return _serial(argv, results, started, root_of(args.cases))
    import pytest  # lazy: start-up

    return _status(results, int(pytest.main(argv)), started)


def _status(results: Path, code: int, started: float) -> int:
    """`run`'s exit status from pytest's: each status means one thing (README)."""
    if code == PYTEST_USAGE:
        return EXIT_USAGE
    code = _accounted(results, code, started)
    return EXIT_INTERRUPTED if code == PYTEST_INTERRUPTED else code


def _serial(argv: list[str], results: Path, started: float, root: Path) -> int:
    """-n 0: the items run in one child process (conformance/pytest_plugin/serial.py), in a session of its
    own so that a terminal's Ctrl-C reaches it once, through us; our SIGINT, SIGTERM and SIGHUP are passed
    on to it, and it ends with us."""
    from conformance.pytest_plugin.guard import SERIAL_JOURNAL_ENV  # lazy: start-up
    from conformance.pytest_plugin.serial import how_it_ended, settle  # lazy: start-up

    journal = Path(tempfile.mkdtemp(prefix="torch-conformance-journal-"))
    env = {**os.environ, SERIAL_JOURNAL_ENV: str(journal)}
    # the CLI has started no thread by now, so preexec_fn is safe here
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *argv], env=env,  # noqa: S603
                            start_new_session=True, preexec_fn=_end_with_parent)  # noqa: PLW1509
    stopped: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        stopped.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        code = proc.wait()
        settled = settle(results, journal, code, root)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        shutil.rmtree(journal, ignore_errors=True)
    if settled is not None:
        print(f"run: the run's process ended mid-run ({how_it_ended(code)}); its unfinished items have error "
              f"records in {results}", file=sys.stderr)
        return EXIT_INTERRUPTED if stopped else settled
    return _status(results, code if code >= 0 else EXIT_FAIL, started)


def _end_with_parent() -> None:
    """In the child before it runs pytest: end it (SIGTERM) when the CLI dies."""
    from conformance.pytest_plugin.serial import end_with_parent  # lazy: start-up

    end_with_parent(signal.SIGTERM)


def _accounted(results: Path, code: int, started: float) -> int:
    """The run's status, unless its records fall short of the items it selected (a process that
    ended mid-run): then never 0."""
    manifest = manifest_path(results)
    if code == EXIT_NOTHING:
        return code
    if not manifest.is_file() or manifest.stat().st_mtime < started - 1:
        if code == EXIT_OK:  # a run with items writes its manifest; this one ended before it could
            print(f"run: no run manifest was written beside {results}: the run ended before it selected "
                  "anything (its process ended)", file=sys.stderr)
            return EXIT_FAIL
        return code
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        planned = len(data.get("items", ()))
        recorded = sum(1 for line in results.read_text(encoding="utf-8").splitlines() if line.strip())
    except (OSError, ValueError):
        return code
    if data.get("finished") and recorded >= planned:
        return code
    print(f"run: {recorded} record(s) for {planned} selected item(s) in {results}"
          + ("" if data.get("finished") else "; the run never finished (its process ended mid-run)"), file=sys.stderr)
    return code or EXIT_FAIL


def cmd_schema(args: argparse.Namespace) -> int:
    from conformance.explore.findings_file import findings_json_schema  # lazy: start-up

    made = {"case": json_schema, "result": result_json_schema, "manifest": manifest_json_schema,
            "bench": bench_json_schema, "findings": findings_json_schema, "compat": compat_json_schema}[args.of]
    text = json.dumps(made(), indent=2, sort_keys=True) + "\n"
    if args.check:
        current = Path(args.check).read_text() if Path(args.check).exists() else ""
        if current != text:
            print(f"{args.check} is out of date; regenerate: torch-conformance schema --of {args.of} --write "
                  f"{args.check}", file=sys.stderr)
            return EXIT_FAIL
        print(f"{args.check} is up to date")
        return EXIT_OK
    if args.write:
        Path(args.write).write_text(text)
        print(f"wrote {args.write}")
        return EXIT_OK
    sys.stdout.write(text)
    return EXIT_OK


def cmd_behaviors(args: argparse.Namespace) -> int:
    from conformance.behaviors.parts import PARTS  # lazy: start-up

    if args.json:
        sys.stdout.write(json.dumps([p.to_json() for p in PARTS], indent=1) + "\n")
        return EXIT_OK
    for p in PARTS:
        b = p.behavior
        print(f"{b.id}: {b.title} ({b.upstream})\n  contract: {b.contract}\n  reference: {p.reference.__name__}\n"
              f"  probe: {p.probe.__name__}" + (f" (artifacts: {', '.join(a.name for a in b.artifacts)})"
                                                if b.artifacts else " (a value sweep)")
              + f"\n  checks: {', '.join(c.id for c in p.checks)}\n  faults: {', '.join(f.name for f in p.faults)}"
              f"\n  bench: {p.bench.title if p.bench else 'none'}\n")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torch-conformance",
        description="Check that the installed PyTorch build honours the AOTAutograd/dynamo codegen "
        "contracts, differentially against eager, from YAML cases.",
    )
    parser.add_argument("--version", action="version", version=f"torch-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(p: argparse.ArgumentParser, *, filters: bool) -> None:
        p.add_argument("paths", nargs="*", help="case files or folders (default: the cases folder)" + (
            "; `run` also takes an item's node id, FILE::NAME[VARIANT], as `list --json` gives it" if filters else ""))
        _add_option(p, BY_NAME["cases"])
        if filters:
            for name in ("devices", "backends", "modes"):
                _add_option(p, BY_NAME[name])

    p = sub.add_parser("validate", help="check case files against the schema; errors as path:line: field: message")
    common(p, filters=False)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("list", help="the items (case x device x backend x mode) a run would execute, and why "
                       "others skip")
    common(p, filters=True)
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="only items matching this pytest -k expression (as "
                   "`run -k`)")
    p.add_argument("--summary", action="store_true", help="counts per behaviour instead of one line per item")
    p.add_argument("--json", action="store_true", help="one JSON object per item")
    p.set_defaults(func=cmd_list, needs_torch=True)

    p = sub.add_parser("run", help="run cases through pytest with the plugin; writes the results file",
                       epilog="Arguments after -- go to pytest unchanged (e.g. -- -x --lf).")
    common(p, filters=True)
    for opt in OPTIONS:
        if opt.name not in ("cases", "devices", "backends", "modes"):
            _add_option(p, opt)
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="pytest -k expression over case ids, behaviours, "
                   "devices, backends and modes")
    p.add_argument("-n", dest="numprocesses", metavar="N", help="worker processes (a number or auto; default 1): a "
                   "worker that dies costs only its item, which becomes an error record, and the run goes on; "
                   "-n 0 runs items in one pytest process (for --pdb), where such an item ends the run, and the "
                   "command's status is then 1")
    p.add_argument("-q", dest="quiet", action="store_true", help="quieter pytest output")
    p.add_argument("--dry-run", action="store_true", help="print the pytest command line and exit")
    p.set_defaults(func=cmd_run, pytest_args=[], needs_torch="installed")

    selftest.register(sub)

    explore.register(sub)

    p = sub.add_parser("schema", help="print a JSON Schema (case files, result records, run manifests, bench "
                       "results, explorer findings, reports), or write/check a committed copy")
    p.add_argument("--of", choices=("case", "result", "manifest", "bench", "findings", "compat"), default="case",
                   help="case: case files (cases/schema.json); result: one line of results.jsonl "
                   "(schemas/result.schema.json); manifest: the run manifest (schemas/manifest.schema.json); "
                   "bench: bench.json (schemas/bench.schema.json); findings: the explorer's findings.json "
                   "(schemas/findings.schema.json); compat: a report's compat.json (schemas/compat.schema.json)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--write", metavar="PATH", help="write the schema to PATH")
    g.add_argument("--check", metavar="PATH", help="exit 1 if PATH differs from the current schema")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("behaviors", help="the five behaviours under test, each with its contract, reference, probe, "
                       "oracle checks, seeded faults and bench table")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=cmd_behaviors, needs_torch=True)

    add_report_parser(sub)

    add_bench_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["report", "diff"]:  # a subcommand of its own under `report`, whose positionals are files
        return diff_main(argv[2:])
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if args.command == "run":
        args.pytest_args = extra
    elif extra:
        parser.error(f"{args.command} takes no arguments after --")
    if getattr(args, "needs_torch", False) and not _require_torch(args.needs_torch):
        return EXIT_USAGE
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
