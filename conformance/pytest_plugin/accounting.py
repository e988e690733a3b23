"""The controller's accounting of a run: one record per collected item, written as each item
finishes, and the run manifest beside the results (see Note [Every item accounted for] in
conformance/pytest_plugin/guard.py). Registered as a plugin object by conformance.pytest_plugin.plugin
in the controlling process only (the xdist controller, or the serial session)."""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.data.corpus import identity
from conformance.data.expectations import Expectation, stale
from conformance.data.loader import case_id_for, load_case
from conformance.pytest_plugin.guard import ITEMS_FILE, Journal, JournalEntry
from conformance.results import (
    ManifestItem,
    ResultRecord,
    ResultsWriteError,
    ResultsWriter,
    RunManifest,
    undeclared_of,
    write_manifest,
)

RECORD_KEY = "conformance_record"


SLOWEST = 10

# The reasons of the error records the controller writes for items that never ran to the end: a
# resumed run (scripts/gpu_run.py) runs them again, where every other record is a result.
NOT_RUN = "not run: the run was stopped"
NO_RESULT = "no result: the run ended without a record for this item"


def is_placeholder(status: str, reason: str) -> bool:
    """Whether a record stands for an item the run stopped or lost before it finished."""
    return status == "error" and reason.startswith((NOT_RUN, NO_RESULT))


def with_corpus(raw: str, root: Path) -> str:
    """A record's line naming its corpus: every record does, also those written on an item's behalf."""
    data = json.loads(raw)
    corpus = identity(root.resolve())[0].model_dump(mode="json")
    data["fingerprint"] = {**(data.get("fingerprint") or {}), "corpus": corpus}
    return json.dumps(data, sort_keys=True, allow_nan=False) + "\n"


def selection(config: pytest.Config, root: Path) -> dict[str, str]:
    """The options by which this run selected a subset of the cases on purpose."""
    chosen = {
        "-k": config.getoption("keyword", default="") or "",
        "-m": config.getoption("markexpr", default="") or "",
        "--devices": config.getoption("conformance_devices") or "",
        "--backends": config.getoption("conformance_backends") or "",
        "--modes": config.getoption("conformance_modes") or "",
        "--shard": config.getoption("conformance_shard") or "",
        "--deselect": ",".join(config.getoption("deselect", default=None) or []),
    }
    if getattr(config.option, "lf", False) or getattr(config.option, "failedfirst", False):
        chosen["--lf"] = "yes"
    args = [a for a in config.args if a]
    whole = [str(root)]
    given = [str((config.invocation_params.dir / a.split("::", 1)[0]).resolve()) for a in args]
    if given and given != whole:
        chosen["paths"] = " ".join(args)
    return {k: str(v) for k, v in chosen.items() if v}


class ResultsSink:
    """Writes each finished item's record; registered only in the controlling process.

    It also accounts for every collected item (see Note [Every item accounted for]): a worker
    that died gets its item's record from its journal, and at the end every item still without
    a record gets an `error` one, so records == items."""

    def __init__(self, config: pytest.Config, writer: ResultsWriter, expectations: list[Expectation],
                 journal_dir: Path, *, root: Path, distributed: bool,
                 describe: Callable[[pytest.Item], ItemRef | None]) -> None:
        self.config = config
        self.writer = writer
        self.expectations = expectations
        self.journal_dir = journal_dir
        self.root = root
        self.distributed = distributed
        self.describe = describe
        self.used: set[str] = set()
        self.slowest: list[tuple[float, str, str, dict[str, float]]] = []
        self.collected: list[str] | None = None
        self.written: set[str] = set()
        self.manifest: RunManifest | None = None
        self.skips: Counter[str] = Counter()
        self.recompiled: list[str] = []
        self.diverging: list[str] = []  # passing items whose probe diverges undeclared
        self._refs: dict[str, ItemRef] = {}
        self.write_error: str | None = None
        self.session: pytest.Session | None = None

    # ------------------------------------------------------------------ collection
    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.collected is None:
            self._begin(list(ids))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.distributed:
            for item in session.items:
                ref = self.describe(item)
                if ref is not None:
                    self._refs[item.nodeid] = ref
            self._begin([item.nodeid for item in session.items])

    def _begin(self, ids: list[str]) -> None:
        self.collected = ids
        if not ids:
            return  # nothing selected: the previous results stay as they were
        self.writer.begin()
        chosen = selection(self.config, self.root)
        items = tuple(ManifestItem(case_id=r.case_id, variant=r.variant, behavior=r.behavior, device=r.device)
                      for r in (self._ref(i) for i in ids))
        corpus, changes = identity(self.root.resolve())
        self.manifest = RunManifest(results=self.writer.path.name, started=_now(), narrowed=bool(chosen),
                                    selection=chosen, shard=self.config.getoption("conformance_shard") or None,
                                    items=items, corpus=corpus, corpus_changes=changes)
        self._manifest()
        if not self.distributed:  # for whoever accounts for them should this process end mid-run (run -n 0)
            refs = [asdict(self._ref(i)) for i in ids]
            (self.journal_dir / ITEMS_FILE).write_text(json.dumps(refs), encoding="utf-8")

    def _ref(self, nodeid: str) -> ItemRef:
        if nodeid not in self._refs:
            self._refs[nodeid] = ref_of_nodeid(nodeid, self.config.rootpath, self.root)
        return self._refs[nodeid]

    # ------------------------------------------------------------------ records
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        raw = next((v for k, v in report.user_properties if k == RECORD_KEY), None)
        if raw is not None and report.when == "call":
            self._write(report.nodeid, str(raw))
        elif report.when not in ("setup", "call", "teardown"):
            # xdist reports a crashed worker's item with when="???" and no properties
            worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
            entry = Journal.read(self.journal_dir, str(worker), report.nodeid) if worker else None
            entry = entry or JournalEntry(report.nodeid, "", "")
            reason = entry.message()
            if entry.record:  # the worker wrote the item's whole record before it ended itself
                self._write(report.nodeid, entry.record)
            else:
                self.record_dead_item(report.nodeid, reason)
            report.longrepr = f"ERROR {report.nodeid}: {reason}"  # shown instead of xdist's "worker crashed"

    def record_dead_item(self, nodeid: str, reason: str) -> None:
        """The `error` record of an item whose process ended while running it, with its reproducer."""
        ref = self._ref(nodeid)
        record = with_reproducer(ref.record("error", reason), ref, self.root, self.writer.path,
                                 cwd=self.config.invocation_params.dir, rootpath=self.config.rootpath)
        self._write(nodeid, record.to_json_line())

    def _write(self, nodeid: str, raw: str) -> None:
        if nodeid in self.written:
            return  # exactly one record per item
        self.written.add(nodeid)
        data = json.loads(raw)
        raw = with_corpus(raw, self.root)
        try:
            self.writer.write_line(raw)
        except ResultsWriteError as exc:
            # a full disk: stop, say so, and end non-zero; the records written so far are whole
            self.write_error = self.write_error or str(exc)
            if self.session is not None:
                self.session.shouldstop = self.session.shouldstop or f"cannot write results: {exc}"
            return
        for known in data.get("known_failures") or []:  # every entry that applied to the item was used
            self.used.add(known["source"])
        if data.get("status") == "skip":
            self.skips[str(data.get("reason") or "")] += 1
        diverging = undeclared_of(data)
        if diverging:
            self.diverging.append(f"{data['case_id']} [{data['variant']}]: {', '.join(diverging)}")
        if data.get("recompiles"):
            self.recompiled.append(f"{data['case_id']} [{data['variant']}]: {data['recompiles']}")
        durations = data.get("durations") or {}
        self.slowest.append((float(durations.get("total", 0.0)), data["case_id"], data["variant"], durations))
        self.slowest = sorted(self.slowest, reverse=True)[:SLOWEST]

    # ------------------------------------------------------------------ the end
    def _manifest(self) -> None:
        assert self.manifest is not None
        try:
            write_manifest(self.writer.path, self.manifest)
        except OSError as exc:  # a full disk, as for a record
            self.write_error = self.write_error or f"{self.writer.path}: the run manifest could not be written " \
                                                    f"({exc.strerror or exc})"
            if self.session is not None:
                self.session.shouldstop = self.session.shouldstop or f"cannot write results: {self.write_error}"

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.collected:
            return
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop)
        missing = [n for n in self.collected if n not in self.written]
        why = (f"{NOT_RUN} ({session.shouldstop or 'interrupted'}) before this item finished" if interrupted else
               f"{NO_RESULT} (its worker ended without reporting it)")
        for nodeid in missing:
            self._write(nodeid, self._ref(nodeid).record("error", why).to_json_line())
        if ((missing or self.diverging) and session.exitstatus == pytest.ExitCode.OK) or self.write_error:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a full disk stops the run: a failure, not a Ctrl-C
        self.missing = len(missing)
        if self.manifest is not None:
            done = {"finished": _now(), "exit_status": int(session.exitstatus)}
            self.manifest = self.manifest.model_copy(update=done)
            self._manifest()

    def _diverging(self, terminalreporter: Any) -> None:
        if not self.diverging:
            return
        terminalreporter.section(f"{len(self.diverging)} passing items whose internals probe diverges, undeclared")
        terminalreporter.write_line("untriaged (the exit status says so): fix the reference, or declare the "
                                    "divergence in the case's `divergences:` with its reason and link")
        for line in self.diverging[:10]:
            terminalreporter.write_line(f"  {line}")
        if len(self.diverging) > 10:
            terminalreporter.write_line(f"  ... {len(self.diverging) - 10} more (the records' probes)")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.collected == []:
            terminalreporter.section("nothing selected")
            terminalreporter.write_line(f"no item was selected; {self.writer.path} was left as it was")
            return
        if self.skips:
            terminalreporter.section(f"skipped {sum(self.skips.values())} items")
            for reason, count in sorted(self.skips.items(), key=lambda kv: (-kv[1], kv[0]))[:10]:
                terminalreporter.write_line(f"{count:6d}  {reason}")
        if self.recompiled:
            terminalreporter.section(f"{len(self.recompiled)} items recompiled where no case bounds it")
            terminalreporter.write_line("not a verdict (set expect.compiles where the count is the contract):")
            for line in self.recompiled[:10]:
                terminalreporter.write_line(f"  {line}")
            if len(self.recompiled) > 10:
                terminalreporter.write_line(f"  ... {len(self.recompiled) - 10} more (the records' recompiles field)")
        self._diverging(terminalreporter)
        if self.write_error:
            terminalreporter.section("results not written")
            terminalreporter.write_line(f"{self.write_error}; the run stopped there")
        if getattr(self, "missing", 0):
            terminalreporter.section("items without a result")
            terminalreporter.write_line(f"{self.missing} collected item(s) had no record; " + (
                "none could be written" if self.write_error else "each was written as an error record"))
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


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class ItemRef:
    """An item as the controller knows it, for records it writes on an item's behalf."""

    nodeid: str
    case_id: str
    variant: str
    case_file: str
    behavior: str | None = None
    device: str | None = None
    backend: str | None = None
    mode: str | None = None

    def record(self, status: str, reason: str) -> ResultRecord:
        return ResultRecord.model_validate({
            "case_id": self.case_id, "variant": self.variant, "nodeid": self.nodeid, "status": status,
            "reason": reason, "case_file": self.case_file, "behavior": self.behavior, "device": self.device,
            "backend": self.backend, "mode": self.mode,
        })


def with_reproducer(record: ResultRecord, ref: ItemRef, root: Path, results: Path, *, cwd: Path,
                    rootpath: Path) -> ResultRecord:
    """A dead item's record with the script that runs its case as the harness did (a process death that
    is the build's ends the script the same way); the record unchanged where none can be made."""
    from conformance.data.variants import variants_of  # lazy: start-up
    from conformance.reproducer.write import attach  # lazy: start-up

    path = next((p for p in (rootpath / ref.case_file, cwd / ref.case_file) if p.is_file()), None)
    try:
        lc = load_case(path, root) if path is not None else None
    except Exception:  # a file that no longer loads: the record says what happened, without a script
        return record
    variant = next((v for v in variants_of(lc.case) if v.label == ref.variant), None) if lc is not None else None
    return attach(record, lc, variant, results, cwd) if lc is not None and variant is not None else record


def ref_of_nodeid(nodeid: str, rootpath: Path, root: Path) -> ItemRef:
    """An item known only by its node id (the xdist controller collects nothing itself)."""
    path_part, _, name = nodeid.partition("::")
    path = rootpath / path_part
    case_id, behavior = case_id_for(path, root), None
    try:
        lc = load_case(path, root)
        case_id, behavior = lc.id, lc.case.behavior
    except Exception:  # noqa: S110  # a file that does not load is named by its path
        pass
    if name == "schema":
        return ItemRef(nodeid, case_id, "schema", path_part)
    variant = name[name.find("[") + 1 : -1] if "[" in name else "?"
    device, _, rest = variant.partition("-")
    backend, _, mode = rest.rpartition("-")
    return ItemRef(nodeid, case_id, variant, path_part, behavior, device or None, backend or None, mode or None)
