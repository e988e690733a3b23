"""pytest plugin: case files as test items, one per (case, device, backend, mode).

Inert unless `--conformance` (or TORCH_CONFORMANCE=1) is given, so installing the harness
changes nothing for other pytest projects; torch is imported only once a case runs.
Records are attached to each item's report and written by the controlling process (the xdist
controller or the serial session), so a crashed worker loses no finished item.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.expectations import Expectation, external_lookup, load_expectations, stale
from conformance.loader import CASE_SUFFIXES, CaseError, CaseLoadError, LoadedCase, case_id_for, load_case
from conformance.options import OPTIONS, csv, shard_of
from conformance.results import ResultRecord, ResultsWriter

if TYPE_CHECKING:
    from conformance.runner import RunOptions, Variant

RECORD_KEY = "conformance_record"
ACTIVATE_ENV = "TORCH_CONFORMANCE"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("torch-conformance", "torch-conformance: YAML conformance cases")
    group.addoption(
        "--conformance",
        action="store_true",
        default=os.environ.get(ACTIVATE_ENV, "").lower() in ("1", "true", "yes", "on"),
        dest="conformance",
        help=f"collect the case files under --conformance-cases as test items [env {ACTIVATE_ENV}=1]",
    )
    for opt in OPTIONS:
        help_text = f"{opt.help} [env {opt.env}]"
        if opt.kind == "flag":
            group.addoption(opt.pytest_flag, action="store_true", default=opt.env_default(), dest=opt.dest,
                            help=help_text)
        else:
            group.addoption(opt.pytest_flag, action="store", default=opt.env_default(), dest=opt.dest,
                            metavar=opt.metavar, type=float if opt.kind == "float" else str, help=help_text)


@dataclass
class _State:
    root: Path
    writer: ResultsWriter | None
    expectations: list[Expectation] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    run_options: RunOptions | None = None


_STATE = pytest.StashKey[_State]()


def _active(config: pytest.Config) -> bool:
    return bool(config.getoption("conformance", default=False))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if not _active(config):
        return
    # What the build under test warns is recorded per item (ResultRecord.warnings), never an
    # error: a project's `filterwarnings = error` would otherwise break `import torch` halfway
    # (e.g. a CUDA wheel without numpy warns at import) and every item after it.
    config.addinivalue_line("filterwarnings", "default")
    try:
        shard_of(config.getoption("conformance_shard"))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    root = Path(config.getoption("conformance_cases"))
    if not root.is_absolute():
        root = config.invocation_params.dir / root
    if not root.is_dir():
        raise pytest.UsageError(
            f"--conformance-cases {root}: no such folder; point it at the folder that holds the case files"
        )
    writer = None
    if not _is_worker(config):
        results = Path(config.getoption("conformance_results"))
        if not results.is_absolute():
            results = config.invocation_params.dir / results
        writer = ResultsWriter(results, truncate=True)
    try:
        expectations = load_expectations([Path(p) for p in csv(config.getoption("conformance_expectations"))])
    except CaseLoadError as exc:
        raise pytest.UsageError(f"--conformance-expectations: the file does not load:\n{exc}") from None
    config.stash[_STATE] = _State(root=root.resolve(), writer=writer, expectations=expectations)
    _drop_unused_hypothesis_plugin(config, root.resolve())
    # torch's structured-trace records would otherwise flood pytest's captured-log sections
    trace_log = logging.getLogger("torch.__trace")
    old_propagate = trace_log.propagate
    config.add_cleanup(lambda: setattr(trace_log, "propagate", old_propagate))
    trace_log.propagate = False
    if writer is not None:
        config.pluginmanager.register(_ResultsSink(config, writer, expectations), "torch-conformance-results")


def _only_case_paths(config: pytest.Config, root: Path) -> bool:
    """Every path the session was given lies under the cases root (``torch-conformance run``)."""
    if not config.args:
        return False
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        try:
            if not path.resolve().is_relative_to(root):
                return False
        except OSError:
            return False
    return True


def _drop_unused_hypothesis_plugin(config: pytest.Config, root: Path) -> None:
    """Hypothesis's pytest plugin imports the whole library at session end (about 1 s of CPU)
    even when no test used it. A session of case files only never does: leave the plugin out."""
    if "hypothesis" in sys.modules or not _only_case_paths(config, root):
        return
    plugin = config.pluginmanager.get_plugin("hypothesispytest")
    if plugin is not None:
        config.pluginmanager.unregister(plugin)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if not _active(config):
        return None
    from conformance.fingerprint import build_fingerprint

    fp = build_fingerprint()
    state = config.stash[_STATE]
    return [
        f"torch-conformance {fp['harness_version']}: torch {fp['torch_version']} (git {fp['torch_git']}), "
        f"cuda {fp['cuda']}, hip {fp['hip']}, python {fp['python']}, {fp['platform']}",
        f"cases: {state.root}" + (f", results: {state.writer.path}" if state.writer else ""),
    ]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not _active(config) or file_path.suffix not in CASE_SUFFIXES:
        return None
    root = config.stash[_STATE].root
    if not file_path.resolve().is_relative_to(root):
        return None
    collector: CaseFile = CaseFile.from_parent(parent, path=file_path)
    return collector


def _display(config: pytest.Config, path: Path) -> str:
    try:
        return path.resolve().relative_to(config.rootpath.resolve()).as_posix()
    except ValueError:
        return str(path)


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[_STATE]
        display = _display(self.config, self.path)
        try:
            lc = load_case(self.path, state.root, display=display)
        except CaseLoadError as exc:
            yield CaseErrorItem.from_parent(
                self, name="schema", case_id=case_id_for(self.path, state.root), errors=exc.errors
            )
            return
        other = state.ids.get(lc.id)
        if other is not None:
            err = CaseError(display, lc.line_of("id"), "id", f"id {lc.id!r} is also used by {other}")
            yield CaseErrorItem.from_parent(self, name="schema", case_id=lc.id, errors=(err,))
            return
        state.ids[lc.id] = display
        from conformance.runner import variants_of

        opts = self.config
        short = lc.id.rsplit("/", 1)[-1]
        for variant in variants_of(
            lc.case,
            devices=csv(opts.getoption("conformance_devices")),
            backends=csv(opts.getoption("conformance_backends")),
            modes=csv(opts.getoption("conformance_modes")),
        ):
            item: CaseItem = CaseItem.from_parent(self, name=f"{short}[{variant.label}]", loaded=lc, variant=variant)
            yield item


def _keywords(item: pytest.Item, *words: str) -> None:
    item.extra_keyword_matches.update(w for w in words if w)


class CaseErrorItem(pytest.Item):
    """A case file that does not load: one `error` result, the other cases still run."""

    def __init__(self, *, case_id: str, errors: tuple[CaseError, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case_id = case_id
        self.errors = errors
        _keywords(self, case_id)

    def runtest(self) -> None:
        reason = "\n".join(str(e) for e in self.errors)
        record = ResultRecord(
            case_id=self.case_id,
            variant="schema",
            nodeid=self.nodeid,
            status="error",
            reason=reason,
            case_file=_display(self.config, self.path),
        )
        self.user_properties.append((RECORD_KEY, record.to_json_line()))
        raise CaseOutcome("ERROR", reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseOutcome):
            return f"ERROR: the case file does not load:\n{excinfo.value.text}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"{self.case_id} [schema]"


class CaseOutcome(Exception):
    def __init__(self, kind: str, text: str) -> None:
        super().__init__(f"{kind}: {text}")
        self.kind = kind
        self.text = text


class CaseItem(pytest.Item):
    def __init__(self, *, loaded: LoadedCase, variant: Variant, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self.variant = variant
        self.case_id = loaded.id
        _keywords(self, loaded.id, loaded.case.behavior, variant.device, variant.backend_label, variant.mode)
        timeout = self.config.getoption("conformance_timeout")
        if timeout:
            self.add_marker(pytest.mark.timeout(timeout, method="signal"))

    def _options(self) -> RunOptions:
        state = self.config.stash[_STATE]
        if state.run_options is None:
            from conformance.runner import RunOptions

            state.run_options = RunOptions(
                strict_internals=bool(self.config.getoption("conformance_strict_internals")),
                extra_known_failures=external_lookup(state.expectations) if state.expectations else None,
            )
        return state.run_options

    def runtest(self) -> None:
        from conformance import runner

        try:
            record = runner.run_variant(self.loaded, self.variant, self._options(), nodeid=self.nodeid)
        except pytest.fail.Exception as exc:  # pytest-timeout's signal handler raises here
            record = runner.error_record(self.loaded, self.variant, f"timeout: {exc}", nodeid=self.nodeid)
            self.user_properties.append((RECORD_KEY, self._with_reproducer(record).to_json_line()))
            # pytest's long traceback would repr every frame's locals (tensors, graphs) while the
            # worker is still inside the interrupted compile; the record already says what happened
            raise CaseOutcome("ERROR", f"{record.case_id} [{record.variant}]: {record.reason}") from None
        record = self._with_reproducer(record)
        self.user_properties.append((RECORD_KEY, record.to_json_line()))
        self.record = record
        if record.status == "pass":
            return
        if record.status == "skip":
            # reported at the case file, not at this line (pytest's own skip-marker mechanism)
            raise pytest.skip.Exception(record.reason, _use_item_location=True)
        if record.status == "xfail":
            pytest.xfail(record.reason)
        raise CaseOutcome(record.status.upper(), _explain(record, self.loaded))

    def _with_reproducer(self, record: ResultRecord) -> ResultRecord:
        """A failure's standalone script, written beside the results file (see conformance.reproducer)."""
        from conformance.reproducer import attach

        cwd = self.config.invocation_params.dir
        results = Path(self.config.getoption("conformance_results"))
        return attach(record, self.loaded, self.variant, results if results.is_absolute() else cwd / results, cwd)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseOutcome):
            return excinfo.value.text
        if isinstance(excinfo.value, pytest.fail.Exception):  # a timeout outside the runner: same reason
            return f"{self.case_id} [{self.variant.label}]: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"{self.case_id} [{self.variant.label}]"


def _explain(record: ResultRecord, lc: LoadedCase) -> str:
    lines = [f"{record.status.upper()} {record.case_id} [{record.variant}]: {lc.case.summary}"]
    if record.status == "error" or not record.mismatches:
        lines.append(f"  {record.reason}")
    for m in record.mismatches[:20]:
        text = f"{m['where']}: {m['check']} is {m['actual']}, but {m.get('source', 'eager')} gives {m['expected']}"
        lines.append(f"  {text}" + (f" ({m['detail']})" if m.get("detail") else ""))
    if len(record.mismatches) > 20:
        lines.append(f"  ... {len(record.mismatches) - 20} more in the results file")
    if record.reproducer:
        lines.append(f"  reproducer: {record.reproducer}")
    lines.append(f"  case file: {lc.display_path}")
    lines.append(f"  rerun: torch-conformance run {lc.display_path} -k '{record.variant}'")
    return "\n".join(lines)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _active(config):
        return
    shard = shard_of(config.getoption("conformance_shard"))
    if shard is None:
        return
    index, count = shard
    keep, drop = [], []
    for item in items:
        case_id = getattr(item, "case_id", None)
        if case_id is None or stable_shard(case_id, count) == index:
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def stable_shard(case_id: str, count: int) -> int:
    """1-based shard of a case: a hash of its id, so it never moves when other cases change."""
    return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % count + 1


SLOWEST = 10


class _ResultsSink:
    """Writes each finished item's record; registered only in the controlling process."""

    def __init__(self, config: pytest.Config, writer: ResultsWriter, expectations: list[Expectation]) -> None:
        self.config = config
        self.writer = writer
        self.expectations = expectations
        self.used: set[str] = set()
        self.slowest: list[tuple[float, str, str, dict[str, float]]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        raw = next((v for k, v in report.user_properties if k == RECORD_KEY), None)
        if raw is not None and report.when == "call":
            self.writer.write_line(str(raw))
            data = json.loads(str(raw))
            known = data.get("known_failure")
            if known:
                self.used.add(known["source"])
            durations = data.get("durations") or {}
            self.slowest.append((float(durations.get("total", 0.0)), data["case_id"], data["variant"], durations))
            self.slowest = sorted(self.slowest, reverse=True)[:SLOWEST]
        elif report.when not in ("setup", "call", "teardown"):
            # xdist reports a crashed worker's item with when="???" and no properties
            self.writer.write_line(_crash_record(report.nodeid, self.config))


    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.slowest:
            terminalreporter.section(f"slowest {len(self.slowest)} items (seconds; the rest of total is the harness)")
            for total, case_id, variant, durations in self.slowest:
                split = ", ".join(f"{k} {v:.2f}" for k, v in durations.items() if k != "total" and v >= 0.005)
                terminalreporter.write_line(f"{total:7.2f}  {case_id} [{variant}]  {split}")
        gone = stale(self.expectations, self.used)
        if gone:
            terminalreporter.section("stale expectations")
            for e in gone:
                terminalreporter.write_line(
                    f"{e.source}: {e.entry.case} matched no item of this run; retire or fix it ({e.entry.link})"
                )


def _crash_record(nodeid: str, config: pytest.Config) -> str:
    path_part, _, name = nodeid.partition("::")
    root = config.stash[_STATE].root
    path = config.rootpath / path_part
    variant = name[name.find("[") + 1 : -1] if "[" in name else "?"
    device, _, rest = variant.partition("-")
    backend, _, mode = rest.rpartition("-")
    record = ResultRecord(
        case_id=case_id_for(path, root),
        variant=variant,
        nodeid=nodeid,
        device=device or None,
        backend=backend or None,
        mode=mode or None,
        status="error",
        reason="the worker process crashed while running this item (segfault, abort or os._exit); "
        "xdist restarted it and the run went on",
        case_file=path_part,
    )
    return record.to_json_line()

