"""pytest plugin: case files as test items, one per (case, device, backend, mode).

Inert unless `--conformance` (or TORCH_CONFORMANCE=1) is given, so installing the harness
changes nothing for other pytest projects (nor imports torch); an active session imports torch
at its start, before the first item and outside any item's --timeout.
Records are attached to each item's report and written by the controlling process (the xdist
controller or the serial session), so a crashed worker loses no finished item.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import hashlib
import logging
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.data.corpus import display as corpus_display
from conformance.data.corpus import root_of, where_looked
from conformance.data.expectations import Expectation, external_lookup, load_expectations
from conformance.data.loader import CaseError, CaseLoadError, LoadedCase, case_id_for, is_case_file, load_case
from conformance.options import BY_NAME, OPTIONS, check_number, csv, shard_of
from conformance.pytest_plugin import hookspecs
from conformance.pytest_plugin.accounting import RECORD_KEY, ItemRef, ResultsSink
from conformance.pytest_plugin.guard import (
    EXIT_WATCHDOG,
    INTERRUPTS,
    SERIAL_JOURNAL_ENV,
    Journal,
    Watchdog,
    default_memory_limit,
    grace,
    set_memory_limit,
)
from conformance.results import ResultRecord, ResultsWriter, hold_results
from conformance.run.fingerprint import build_fingerprint

if TYPE_CHECKING:
    from conformance.data.variants import Variant
    from conformance.run.runner import RunOptions

ACTIVATE_ENV = "TORCH_CONFORMANCE"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


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
                            metavar=opt.metavar, help=help_text)


@dataclass
class _State:
    root: Path
    results: Path
    journal_dir: Path
    timeout: float
    expectations: list[Expectation] = field(default_factory=list)
    extra_devices: tuple[str, ...] = ()
    extra_backends: tuple[str, ...] = ()
    ids: dict[str, str] = field(default_factory=dict)
    run_options: RunOptions | None = None
    journal: Journal | None = None
    watchdog: Watchdog | None = None
    current: str = ""  # the item in flight in this process
    sink: ResultsSink | None = None


_STATE = pytest.StashKey[_State]()
JOURNAL_KEY = "conformance_journal"


def _active(config: pytest.Config) -> bool:
    return bool(config.getoption("conformance", default=False))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _distributed(config: pytest.Config) -> bool:
    """The xdist controller: it hands items to workers and runs none itself."""
    return not _is_worker(config) and getattr(config.option, "dist", "no") != "no"


def _checked_options(config: pytest.Config) -> tuple[float, float]:
    """(timeout, memory limit in GiB); raise UsageError naming the flag for a bad value."""
    errors = []
    try:
        shard_of(config.getoption("conformance_shard"))
    except ValueError as exc:
        errors.append(str(exc))
    timeout = config.getoption("conformance_timeout")
    why = check_number(BY_NAME["timeout"], timeout, positive=True)
    if why:
        errors.append(why)
    memory = config.getoption("conformance_memory_limit")
    if memory is not None and memory != "":
        why = check_number(BY_NAME["memory_limit"], memory, positive=False)
        if why:
            errors.append(why)
    if not _is_worker(config):
        from conformance.data.selection import check_selection  # lazy: start-up

        errors += check_selection(csv(config.getoption("conformance_devices")),
                                  csv(config.getoption("conformance_backends")),
                                  csv(config.getoption("conformance_modes")))
    if errors:
        raise pytest.UsageError("\n".join(errors))
    workers = int(config.workerinput.get("workercount", 1)) if _is_worker(config) else 1  # type: ignore[attr-defined]  # xdist sets it on workers
    limit = float(memory) if memory not in (None, "") else default_memory_limit(workers)
    return float(timeout), limit


def pytest_configure(config: pytest.Config) -> None:
    if not _active(config):
        return
    # What the build under test warns is recorded per item (ResultRecord.warnings), never an
    # error: a project's `filterwarnings = error` would otherwise break `import torch` halfway
    # (e.g. a CUDA wheel without numpy warns at import) and every item after it.
    config.addinivalue_line("filterwarnings", "default")
    # plugins first: a vendor's backend is registered with torch when its hook is called
    extra_devices = tuple(d for ds in config.hook.pytest_conformance_devices(config=config) for d in ds)
    extra_backends = tuple(b for bs in config.hook.pytest_conformance_backends(config=config) for b in bs)
    timeout, memory = _checked_options(config)
    given = config.getoption("conformance_cases")
    root = root_of(given, cwd=config.invocation_params.dir)
    where = where_looked(given, cwd=config.invocation_params.dir)
    if not root.is_absolute():
        root = config.invocation_params.dir / root
    if not root.is_dir():
        raise pytest.UsageError(
            f"--conformance-cases {where}: no such folder; point it at the folder that holds the case files"
        )
    if config.args_source != pytest.Config.ArgsSource.ARGS:  # no path given: the corpus is what runs
        config.args[:] = [str(root)]
    results = Path(config.getoption("conformance_results"))
    if not results.is_absolute():
        results = config.invocation_params.dir / results
    extra = [Path(p) for paths in config.hook.pytest_conformance_expectations(config=config) for p in paths]
    try:
        expectations = load_expectations([*(Path(p) for p in csv(config.getoption("conformance_expectations"))),
                                          *extra])
    except CaseLoadError as exc:
        raise pytest.UsageError(f"--conformance-expectations: the file does not load:\n{exc}") from None
    journal_dir = _journal_dir(config)
    state = _State(root=root.resolve(), results=results, journal_dir=journal_dir, timeout=timeout,
                   expectations=expectations,
                   extra_devices=extra_devices, extra_backends=extra_backends)
    config.stash[_STATE] = state
    _drop_unused_hypothesis_plugin(config, root.resolve())
    if not _is_worker(config):
        holder = hold_results(results)
        if isinstance(holder, str):
            raise pytest.UsageError(holder)
        config.add_cleanup(holder.close)
        INTERRUPTS.install()  # SIGTERM and SIGHUP stop the controller as Ctrl-C does
        state.sink = ResultsSink(config, ResultsWriter(results), expectations, journal_dir, root=state.root,
                                 distributed=_distributed(config), describe=_describe)
        config.pluginmanager.register(state.sink, "torch-conformance-results")
        if _distributed(config) and getattr(config.option, "maxworkerrestart", None) is None:
            # every crashing item costs its worker; xdist's default would stop restarting after a few
            config.option.maxworkerrestart = "1000000"
    if not _distributed(config):
        _guard_this_process(config, state, memory)


def _journal_dir(config: pytest.Config) -> Path:
    """Where this process's journal goes: the controller's folder (a worker), the CLI's (`run -n 0`, which
    reads it should this process die, then removes it), or a folder of its own, removed at the end."""
    if _is_worker(config):
        return Path(config.workerinput[JOURNAL_KEY])  # type: ignore[attr-defined]  # set by pytest_configure_node
    if os.environ.get(SERIAL_JOURNAL_ENV):
        return Path(os.environ[SERIAL_JOURNAL_ENV])
    journal_dir = Path(tempfile.mkdtemp(prefix="torch-conformance-journal-"))
    config.add_cleanup(lambda: shutil.rmtree(journal_dir, ignore_errors=True))
    return journal_dir


def _guard_this_process(config: pytest.Config, state: _State, memory_gib: float) -> None:
    """This process runs items: see Note [Every item accounted for]."""
    INTERRUPTS.install()
    problem = set_memory_limit(memory_gib)
    if problem:
        warnings.warn(problem, stacklevel=1)
    worker = str(config.workerinput["workerid"]) if _is_worker(config) else "main"  # type: ignore[attr-defined]  # xdist
    journal = Journal(state.journal_dir, worker)
    config.add_cleanup(journal.close)
    state.journal = journal

    def expired(reason: str) -> None:
        nodeid = state.current
        journal.end_with(nodeid, reason)
        if state.sink is not None:  # an in-process run: nobody else will write this item's record
            state.sink.record_dead_item(nodeid, reason)

    state.watchdog = Watchdog(expired)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: tell each worker where its journal goes."""
    config = node.config
    if _active(config):
        node.workerinput[JOURNAL_KEY] = str(config.stash[_STATE].journal_dir)


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Freeze the heap before pytest's exit-time garbage collections (its unraisable-exception
    plugin collects several times over, to report finalizers that raise): after a run the heap
    holds every compiled graph's objects and those collections took about 2 s. Every item's record
    is written by then; a finalizer that raises at exit says nothing about one. Only in an xdist
    worker, whose process ends next: a process that goes on (pytest.main called in-process) keeps
    collecting its garbage."""
    if _active(config) and _is_worker(config):
        gc.freeze()
        atexit.register(_quiet_exit)


def _quiet_exit() -> None:
    """A frozen heap is never freed, so an extension's exit-time leak check reports every object it
    made (nanobind's "leaked ... functions" from triton, about 60 lines glued to pytest's last
    line): false by design. The worker has sent every record; its stderr ends here."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)


class _NoTraceRecords(logging.Filter):
    """torch's structured-trace records (empty messages with a binary-ish payload) are data for
    the capture, not log lines: pytest's log capture would print hundreds of them per failure."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name != "torch.__trace"


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _active(session.config):
        return
    plugin = session.config.pluginmanager.get_plugin("logging-plugin")
    for name in ("caplog_handler", "report_handler", "log_cli_handler", "log_file_handler"):
        handler = getattr(plugin, name, None)
        if isinstance(handler, logging.Handler):
            handler.addFilter(_NoTraceRecords())
    state = session.config.stash[_STATE]
    if state.journal is not None:
        # after every pytest_configure: pytest's own faulthandler plugin points it at stderr there
        state.journal.open()
        _import_torch()


def _import_torch() -> None:
    """Import torch and dynamo before the first item, outside any item's --timeout: a timeout that
    interrupts an import leaves a half-initialised module behind for every later item."""
    with contextlib.suppress(Exception):  # the first item that needs it records what is wrong
        import torch._dynamo  # noqa: F401  # imported for its side effect only


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
    fp = build_fingerprint()
    state = config.stash[_STATE]
    return [
        f"torch-conformance {fp['harness_version']}: torch {fp['torch_version']} (git {fp['torch_git']}), "
        f"cuda {fp['cuda']}, hip {fp['hip']}, python {fp['python']}, {fp['platform']}",
        f"cases: {state.root}, results: {state.results}",
    ]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not _active(config) or not is_case_file(file_path):
        return None
    root = config.stash[_STATE].root
    if not file_path.resolve().is_relative_to(root):
        return None
    collector: CaseFile = CaseFile.from_parent(parent, path=file_path)
    return collector


def _build_checks() -> Callable[[LoadedCase], list[CaseError]]:
    from conformance.data.deep_check import checker  # lazy: start-up

    return checker(backends=False)  # a backend this build lacks is a skip with its reason, not an error


def _display(config: pytest.Config, path: Path) -> str:
    """How records name a case file: see Note [The corpus] for the package's own corpus."""
    shown = corpus_display(path, config.stash[_STATE].root)
    if shown is not None:
        return shown
    try:
        return path.resolve().relative_to(config.rootpath.resolve()).as_posix()
    except ValueError:
        return str(path)


def item_name(case_id: str, variant: Variant) -> str:
    """An item's name in its file's node ids (`FILE::NAME`): the case id's last part and the variant."""
    return f"{case_id.rsplit('/', 1)[-1]}[{variant.label}]"


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        """Never raises: a file that cannot become items is one error item (pytest would stop
        the whole run at a collection error)."""
        state = self.config.stash[_STATE]
        display = _display(self.config, self.path)
        try:
            lc = load_case(self.path, state.root, display=display, check=_build_checks())
        except CaseLoadError as exc:
            yield self._error(case_id_for(self.path, state.root), exc.errors)
            return
        except Exception as exc:  # a loader bug must cost this file only
            err = CaseError(display, 1, "<case>", f"the harness could not load this file: {type(exc).__name__}: "
                            f"{str(exc)[:300]}")
            yield self._error(case_id_for(self.path, state.root), (err,))
            return
        other = state.ids.get(lc.id)
        if other is not None:
            err = CaseError(display, lc.line_of("id"), "id", f"id {lc.id!r} is also used by {other}")
            yield self._error(lc.id, (err,))
            return
        state.ids[lc.id] = display
        from conformance.data.variants import variants_of  # lazy: start-up

        opts = self.config
        for variant in variants_of(
            lc.case,
            devices=csv(opts.getoption("conformance_devices")),
            backends=csv(opts.getoption("conformance_backends")),
            modes=csv(opts.getoption("conformance_modes")),
            extra_devices=state.extra_devices,
            extra_backends=state.extra_backends,
        ):
            item: CaseItem = CaseItem.from_parent(self, name=item_name(lc.id, variant), loaded=lc, variant=variant)
            yield item

    def _error(self, case_id: str, errors: tuple[CaseError, ...]) -> CaseErrorItem:
        item: CaseErrorItem = CaseErrorItem.from_parent(self, name="schema", case_id=case_id, errors=errors)
        return item


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
        self.add_marker(pytest.mark.timeout(self.config.stash[_STATE].timeout, method="signal"))

    def _options(self) -> RunOptions:
        state = self.config.stash[_STATE]
        if state.run_options is None:
            from conformance.run.runner import RunOptions  # lazy: start-up

            state.run_options = RunOptions(
                strict_internals=bool(self.config.getoption("conformance_strict_internals")),
                extra_known_failures=external_lookup(state.expectations) if state.expectations else None,
            )
        return state.run_options

    def runtest(self) -> None:
        state = self.config.stash[_STATE]
        if state.journal is not None:
            state.journal.start(self.nodeid)
        if state.watchdog is not None:
            state.current = self.nodeid
            limit = state.timeout + grace(state.timeout)
            state.watchdog.arm(limit, f"timeout: still running {limit:.0f} s after it started (--timeout "
                               f"{state.timeout:g} s, then {grace(state.timeout):.0f} s of grace): the signal could "
                               "not interrupt it (native code, or signals blocked), so its worker was ended")
        try:
            self._run()
        finally:
            if state.watchdog is not None:
                state.watchdog.disarm()
            if state.journal is not None:
                state.journal.finish()

    def _run(self) -> None:
        from conformance.run import runner  # lazy: start-up

        try:
            record = runner.run_variant(self.loaded, self.variant, self._options(), nodeid=self.nodeid)
        except pytest.fail.Exception as exc:  # pytest-timeout's signal handler raises here
            record = self._with_reproducer(
                runner.error_record(self.loaded, self.variant, f"timeout: {exc}", nodeid=self.nodeid))
            state = self.config.stash[_STATE]
            if _is_worker(self.config) and state.journal is not None:
                # the interrupted compile may have left torch's global state half-changed: end this
                # worker so that the next item starts in a fresh one (its record goes by the journal)
                state.journal.end_with(self.nodeid, record.reason, record.to_json_line())
                os._exit(EXIT_WATCHDOG)
            self.user_properties.append((RECORD_KEY, record.to_json_line()))
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
        from conformance.reproducer.write import attach  # lazy: start-up

        state = self.config.stash[_STATE]
        return attach(record, self.loaded, self.variant, state.results, self.config.invocation_params.dir,
                      full=bool(self.config.getoption("conformance_full_reproducers")))

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
    lines += [f"  {m.message()}" for m in record.mismatches[:20]]
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


def _describe(item: pytest.Item) -> ItemRef | None:
    if isinstance(item, CaseErrorItem):
        return ItemRef(item.nodeid, item.case_id, "schema", _display(item.config, item.path))
    if isinstance(item, CaseItem):
        v = item.variant
        return ItemRef(item.nodeid, item.case_id, v.label, _display(item.config, item.path),
                       item.loaded.case.behavior, v.device, v.backend_label, v.mode)
    return None
