"""Result records: one JSON object per (case, device, backend, mode), written as JSON Lines.

The results file is appended one flushed line per finished item under an exclusive lock, so
an interrupted or crashed run leaves every finished item's record readable. Beside it, the run
manifest says what the run selected and whether it finished (see `RunManifest`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import os
from pathlib import Path
from typing import IO, Annotated, Any, Literal, get_args

import pydantic.dataclasses
from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from conformance.core.mismatch import TEXT, Mismatch
from conformance.schema.known import KnownFailureKind, Searched

RESULT_SCHEMA = "torch-conformance.result/2"
# a record's durations: where the time went in torch, and in the harness around it ("total" holds all)
TORCH_BUCKETS = ("eager", "compile", "compiled_calls")
HARNESS_BUCKETS = ("build_inputs", "oracles", "probe")
Status = Literal["pass", "fail", "xfail", "xpass", "skip", "error"]
STATUSES: tuple[Status, ...] = get_args(Status)
# The groupings of statuses every reader uses, each said once (a reader never spells a set of its own).
RAN: frozenset[Status] = frozenset(STATUSES) - {"skip"}
NOT_PASSING: frozenset[Status] = RAN - {"pass"}  # every item a reader lists: a failure, known or not, or news
COMPARED: frozenset[Status] = frozenset({"pass", "fail", "xfail", "xpass"})  # compiled was compared with eager
HOLDS: frozenset[Status] = frozenset({"pass", "xpass"})  # the contract holds there
BROKEN: frozenset[Status] = frozenset({"fail", "xfail", "error"})  # it does not (known or not, bug or not)
FAILING: frozenset[Status] = frozenset({"fail", "error", "xpass"})  # the run is red: untriaged
UNEXPLAINED: frozenset[Status] = frozenset({"fail", "error"})  # broken, and no known failure says why
DIFFERED: frozenset[Status] = frozenset({"fail", "xfail"})  # a check of compiled differed from eager's


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Name = Annotated[str, Field(max_length=300)]
Text = Annotated[str, Field(max_length=200_000)]
Big = Annotated[str, Field(max_length=20_000_000)]  # generated sources and their diffs (compat.json keeps all)


class KnownFailureRef(_Record):
    reason: Text
    link: Text
    kind: KnownFailureKind = Field(
        "bug", description="The audit's classification (conformance.schema.KnownFailureKind); records older "
        "than it say bug.")
    source: Text = Field(description="Where the expectation is declared: a case file or expectations file.")
    searched: Searched | None = Field(None, description="How upstream was searched where `link` is no issue that "
                                      "describes this behaviour (the case file's record of it).")


def _where_published(schema: dict[str, Any]) -> None:
    """`where` is written (rendered from the location) but never read back: the schema says it is there."""
    schema["properties"]["where"] = {"type": "string", "maxLength": TEXT, "readOnly": True, "description": "The "
                                     "location as one phrase, rendered from path, phase, call_label and warm."}
    schema["required"] = [*schema.get("required", []), "where"]


@pydantic.dataclasses.dataclass(frozen=True, config=ConfigDict(extra="forbid", json_schema_extra=_where_published))
class MismatchRecord(Mismatch):
    """One difference as a record keeps it: the core's `Mismatch` (its fields are declared there, once), validated,
    with the known failure that covers it. Records of earlier harness versions have `where` alone: it becomes the
    path, which then renders the same phrase."""

    known: int | None = Field(default=None, ge=0, description="Which of the record's known_failures covers this "
                              "mismatch (its index); None where none does.")

    @classmethod
    def of(cls, m: Mismatch, known: int | None = None) -> MismatchRecord:
        return cls(**{f.name: getattr(m, f.name) for f in dataclasses.fields(Mismatch)}, known=known)

    @model_validator(mode="before")
    @classmethod
    def _rendered_where(cls, data: Any) -> Any:
        if isinstance(data, dict) and "where" in data:
            data = dict(data)
            where = data.pop("where")
            data.setdefault("path", where)
        return data

    @computed_field  # type: ignore[prop-decorator]  # mypy does not take a decorated property (pydantic's docs)
    @property
    def where(self) -> str:
        return super().where


ProbeStatus = Literal["conforms", "diverges", "unknown-form", "not-modelled", "absent"]


@pydantic.dataclasses.dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class ProbeResult:
    """One behaviour's internals-probe status, with both sources and a structural diff when it
    diverges (what conformance/probe/ returns, and what a record keeps)."""

    behavior: Name
    status: ProbeStatus
    artifacts: tuple[Name, ...] = ()
    diff: Big = ""
    reference_source: Big = ""
    build_source: Big = ""
    note: Text = ""
    #: where a diverging probe is a reviewed divergence: the declaring entry ("<kind> <link> at <file:line>")
    declared: Text = ""


GeneratedStatus = Literal["holds", "fails", "not observable"]


class GeneratedRecord(_Record):
    """One of the case's assertions on what the build generated (conformance/schema/generated.py), as
    checked on the cold pass's capture (conformance/probe/generated.py); never the item's status."""

    index: int = Field(ge=0, description="Which of the case's `generated:` entries.")
    artifact: Name
    status: GeneratedStatus
    detail: Text = Field("", description="What was seen: the instances, what is missing, a graph diff.")


# Per value: (attribute path, symbolic size dims, symbolic stride dims); "" is the value itself.
Symbolic = tuple[tuple[Name, tuple[int, ...], tuple[int, ...]], ...]


class GraphValue(_Record):
    """What one input (or output) of a compiled region is, in the program's terms: what the runner
    records per compile (conformance/run/compiles.py), the probe reads, and a record keeps.

    The probe needs this because generated code indexes the region, not the program: dynamo orders
    graph inputs by first use and inserts symbolic sizes, AOTAutograd lifts the graph module's
    parameters in front, so slot k of generated code is not argument k. Kinds: ``"input"``, a
    program value the graph input *is* (identity): `index` its position among the arguments, `name`
    the input (or `module.param`) name; ``"param"``, a parameter or buffer of the graph module,
    lifted in front of the graph inputs (`name` when it is a program value); ``"symint"``,
    ``"symfloat"``, ``"tensor"``... for values the program does not see (symbolic sizes, lifted or
    tensorified values); for a graph output, ``"output"`` with the program output `index` it is, or
    ``"other"``. `symbolic`: per subclass attribute path, the size and stride dims that were
    symbolic at compile time. `requires_grad`: for a graph output, what dynamo's tracing (eager
    semantics on fake tensors) says.
    """

    kind: Name
    name: Name | None = None
    index: int | None = None
    symbolic: Symbolic = ()
    requires_grad: bool = False


class ProbeRecord(_Record):
    """What the internals probe saw during an item's cold pass (empty where it did not run)."""

    results: tuple[ProbeResult, ...] = ()
    seen: tuple[Name, ...] = Field((), description="Names of the generated artifacts captured.")
    forms: tuple[Name, ...] = Field((), description="How they arrived: trace, trace-combined, module-logger.")
    unrecognised: tuple[Text, ...] = ()
    error: Text | None = Field(None, description="The probe itself failed (never the item's verdict).")
    graph_inputs: tuple[tuple[GraphValue, ...], ...] = ()
    graph_outputs: tuple[tuple[GraphValue, ...], ...] = ()
    partial: tuple[bool, ...] = ()

    def statuses(self) -> dict[str, str]:
        return {r.behavior: r.status for r in self.results}

    def __getitem__(self, behavior: str) -> ProbeResult:
        return next(r for r in self.results if r.behavior == behavior)


CorpusOrigin = Literal["bundled", "checkout", "folder"]


class CorpusRef(_Record):
    """The corpus a run ran (Note [The corpus]): where it was found, the package version whose
    corpus it is, a digest of its files, and how it differs from what it was taken from."""

    origin: CorpusOrigin = Field(
        description="bundled: the case files installed with the package; checkout: the cases folder of the "
        "source tree the package runs from; folder: any other folder (--cases, a cases/ in the working folder).")
    version: Annotated[str, Field(max_length=64)] | None = Field(
        None, description="The torch-conformance version whose corpus this is (None: a folder of one's own).")
    digest: Annotated[str, Field(max_length=64)] = Field(
        description="sha256 over every case file's path under the corpus and the sha256 of its bytes, in path order.")
    files: int = Field(description="The case files (and UPSTREAM.yaml) the digest covers.")
    base: Annotated[str, Field(max_length=200)] | None = Field(
        None, description="What the counts below compare with: the bundled corpus of an installed version, or the "
        "checkout's git HEAD; None where nothing could be compared.")
    added: int | None = None
    changed: int | None = None
    removed: int | None = None

    @property
    def local_changes(self) -> int | None:
        counts = (self.added, self.changed, self.removed)
        return None if None in counts else sum(c or 0 for c in counts)

    def describe(self) -> str:
        """One line: which corpus, and its local changes."""
        whose = f"torch-conformance {self.version}" if self.version else "a folder of its own"
        text = f"{whose} corpus ({self.origin}), {self.files} files, sha256 {self.digest[:12]}"
        if self.base is None:
            return text
        if not self.local_changes:
            return f"{text}, as in the {self.base}"
        return (f"{text}, with local changes to the {self.base}: {self.added} added, {self.changed} changed, "
                f"{self.removed} removed")


class Fingerprint(_Record):
    """The build and machine an item ran on."""

    torch_version: Annotated[str, Field(max_length=128)] | None = None
    torch_git: Annotated[str, Field(max_length=64)] | None = None
    cuda: Annotated[str, Field(max_length=64)] | None = None
    hip: Annotated[str, Field(max_length=64)] | None = None
    python: Annotated[str, Field(max_length=64)] | None = None
    python_implementation: Annotated[str, Field(max_length=64)] | None = None
    platform: Name | None = None
    machine: Annotated[str, Field(max_length=64)] | None = None
    harness_version: Annotated[str, Field(max_length=64)] | None = None
    date: Annotated[str, Field(max_length=64)] | None = None
    argv0: Name | None = None
    device: Annotated[str, Field(max_length=64)] | None = None
    device_name: Name | None = None
    capability: Annotated[str, Field(max_length=32)] | None = None
    device_error: Text | None = None
    corpus: CorpusRef | None = None


class ResultRecord(_Record):
    schema_: str = Field(RESULT_SCHEMA, alias="schema")
    case_id: Name
    variant: Name
    nodeid: Text = ""
    behavior: Name | None = None
    device: Name | None = None
    backend: Name | None = None
    mode: Name | None = None
    status: Status
    reason: Text = ""
    summary: Text = ""
    upstream: tuple[Text, ...] = ()
    mismatches: tuple[MismatchRecord, ...] = ()
    known_failures: tuple[KnownFailureRef, ...] = Field(
        (), description="The declared known failures whose conditions match this item's build, in the order "
        "declared; each mismatch names the one that covers it (MismatchRecord.known).")
    raised: tuple[Text, ...] = Field(
        (), description="The exceptions the compiled side raised as the case declares them (expect.raises, a "
        "call's raises), per call: '<call>: <exception>'. What upstream's assertRaises saw; not mismatches.")
    allowed: tuple[Text, ...] = Field(
        (), description="Differences a declared allowance accepts (conformance.core.checks.ALLOWANCES): "
        "'<allowance>: <the difference>'. They are not mismatches.")
    compile_counts: dict[Name, int | None] = Field(
        default_factory=dict, description="Graphs compiled: per pass (cold_graphs, warm_graphs: those whose compile "
        "returned), by the cold pass's first call (cold_first_call: more than one where dynamo broke the graph), "
        "and the graphs handed to the backend per pass (cold_backend_calls, warm_backend_calls: more where a "
        "compile was aborted and retried, as dynamo's tensorify restart does).")
    probes: ProbeRecord = Field(default_factory=ProbeRecord)
    generated: tuple[GeneratedRecord, ...] = Field(
        (), description="The case's assertions on what the build generated, upstream's source and graph checks.")
    durations: dict[Name, Annotated[float, Field(allow_inf_nan=False)]] = Field(
        default_factory=dict, description="Seconds by phase: in torch (eager, compile, compiled_calls), in the "
        "harness (build_inputs, oracles, probe), and total.")
    calls: int = 0
    recompiles: Text | None = Field(
        None, description="Graphs compiled after the first call of the cold pass where the case sets no "
        "expect.compiles: reported, never a silent pass (and never the verdict).")
    warnings: tuple[Text, ...] = Field((), description="Distinct warnings the build raised (first 10).")
    case_file: Text = ""
    case_sha256: Annotated[str, Field(max_length=64)] = ""
    reproducer: Text | None = None
    fingerprint: Fingerprint = Field(default_factory=Fingerprint)
    skip_kind: Literal["device", "feature", "fault"] | None = Field(
        None, description="Why a skip skipped: the device is absent here, the build lacks a feature, or a "
        "self-check fault does not apply.")

    @model_validator(mode="before")
    @classmethod
    def _one_known_failure(cls, data: Any) -> Any:
        """A record written before an item could carry several known failures has `known_failure`,
        which covered every mismatch of an xfail."""
        if not isinstance(data, dict) or "known_failure" not in data:
            return data
        data = dict(data)
        ref = data.pop("known_failure")
        if ref is not None and not data.get("known_failures"):
            data["known_failures"] = [ref]
            if data.get("status") == "xfail" and isinstance(data.get("mismatches"), list | tuple):
                data["mismatches"] = [{**m, "known": 0} if isinstance(m, dict) else m for m in data["mismatches"]]
        return data

    @model_validator(mode="after")
    def _known_in_range(self) -> ResultRecord:
        for i, m in enumerate(self.mismatches):
            if m.known is not None and m.known >= len(self.known_failures):
                raise ValueError(f"mismatches[{i}].known is {m.known}, but the record has "
                                 f"{len(self.known_failures)} known failure(s)")
        return self

    @property
    def known_failure(self) -> KnownFailureRef | None:
        """The first known failure that covers a mismatch (the first declared where none does)."""
        used = [m.known for m in self.mismatches if m.known is not None]
        if used:
            return self.known_failures[min(used)]
        return self.known_failures[0] if self.known_failures else None

    def idle_known_failures(self) -> tuple[KnownFailureRef, ...]:
        """The applying known failures that cover no mismatch of this item: to retire or narrow (an xpass)."""
        used = {m.known for m in self.mismatches}
        return tuple(k for i, k in enumerate(self.known_failures) if i not in used)

    def known_of(self, m: MismatchRecord) -> KnownFailureRef | None:
        return None if m.known is None or m.known >= len(self.known_failures) else self.known_failures[m.known]

    def to_json_line(self) -> str:
        data = self.model_dump(mode="json", by_alias=True, exclude_defaults=False)
        return json.dumps(data, sort_keys=True, allow_nan=False) + "\n"

    @property
    def key(self) -> tuple[str, str]:
        return (self.case_id, self.variant)


def lock_path(results: Path) -> Path:
    """The lock of a results file, named by the file's identity (device and inode) beside the file the name
    resolves to: every name of one file (a symlink, another relative path, a hard link in its folder) gets
    the one lock. The file must exist (hold_results makes it, empty, where it does not)."""
    real = Path(os.path.realpath(results))
    st = real.stat()
    return real.with_name(f".torch-conformance.{st.st_dev}.{st.st_ino}.lock")


def hold_results(results: Path) -> IO[str] | str:
    """The results file held for one run (an exclusive lock beside it, released when the process
    ends): a second run into the same file, by whatever name, would empty it under the first. The
    open lock file, or why it cannot be had."""
    try:
        results.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(results, os.O_WRONLY | os.O_CREAT, 0o644))  # an inode to name the lock by; not emptied
        path = lock_path(results)
        handle = path.open("a+", encoding="utf-8")
    except OSError as exc:
        return f"--results {results}: cannot hold it ({exc.strerror or exc})"
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        pid = handle.read().strip() or "?"
        handle.close()
        return (f"--results {results}: another run (pid {pid}) is writing this file; give this run a results file "
                "of its own (--results), or wait for that one to end")
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


class ResultsWriter:
    """Appends records to a JSONL file; safe across xdist workers and processes.

    The file is emptied by `begin()`, once the run knows it has items to run: a run that
    selects nothing leaves the previous results (and the report made from them) untouched."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def begin(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")

    def write(self, record: ResultRecord) -> None:
        self.write_line(record.to_json_line())

    def write_line(self, text: str) -> None:
        """Append one whole line, or nothing: a write the disk cannot take (ENOSPC, a short
        write) is undone back to the last whole line and raised as ResultsWriteError."""
        line = text.encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            try:
                done = 0
                while done < len(line):
                    written = os.write(fd, line[done:])
                    if written <= 0:
                        raise OSError(errno.ENOSPC, "no byte was written")
                    done += written
                os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise ResultsWriteError(f"{self.path}: a record could not be written ({exc.strerror or exc}); "
                                        "the file ends with the last whole record") from None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class ResultsWriteError(OSError):
    """The results file cannot take another record (a full disk): the run stops, saying so."""


# ----------------------------------------------------------------------------- run manifest

MANIFEST_SCHEMA = "torch-conformance.run/1"


class ManifestItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    case_id: str = Field(max_length=300)
    variant: str = Field(max_length=200)
    behavior: str | None = Field(None, max_length=100)
    device: str | None = Field(None, max_length=100)


class RunManifest(BaseModel):
    """What a run selected and whether it finished: the results file's sidecar
    (`results.manifest.json` beside `results.jsonl`). The report uses it to tell a run that was
    cut short, or narrowed on purpose (`-k`, `--devices`), from one that silently ran nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_: str = Field(MANIFEST_SCHEMA, alias="schema")
    results: str = Field(max_length=4096)
    started: str = Field(max_length=64)
    finished: str | None = Field(None, max_length=64)
    exit_status: int | None = None
    narrowed: bool = Field(description="The run selected a subset on purpose (-k, -m, --devices, --backends, "
                           "--modes, --shard, or case paths other than the whole cases folder).")
    selection: dict[str, str] = Field(default_factory=dict, description="The options that narrowed it.")
    shard: str | None = Field(None, max_length=32)
    items: tuple[ManifestItem, ...] = ()
    corpus: CorpusRef | None = None
    corpus_changes: tuple[Annotated[str, Field(max_length=400)], ...] = Field(
        (), description="The corpus's local changes, one per file ('added PATH', 'changed PATH', 'removed PATH'; "
        "the first 200).")


def _published(model: type[BaseModel], title: str) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = title
    return schema


def result_json_schema() -> dict[str, Any]:
    """The JSON Schema of one line of a results file (schemas/result.schema.json)."""
    return _published(ResultRecord, f"torch-conformance result record ({RESULT_SCHEMA})")


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of a run manifest (schemas/manifest.schema.json)."""
    return _published(RunManifest, f"torch-conformance run manifest ({MANIFEST_SCHEMA})")


def manifest_path(results: Path) -> Path:
    return results.with_name(results.stem + ".manifest.json")


def write_manifest(results: Path, manifest: RunManifest) -> None:
    path = manifest_path(results)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(manifest.model_dump(mode="json", by_alias=True), indent=1, sort_keys=True) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


DIVERGING: tuple[ProbeStatus, ...] = ("diverges", "unknown-form")


def undeclared_of(record: dict[str, Any]) -> list[str]:
    """The behaviours whose internals probe diverges, no reviewed divergence declaring it, on an item (a
    record as JSON) whose contract passes: untriaged, like a failure."""
    if record.get("status") != "pass":
        return []
    results = (record.get("probes") or {}).get("results") or []
    return [r["behavior"] for r in results if r.get("status") in DIVERGING and not r.get("declared")]


def undeclared(record: ResultRecord) -> list[ProbeResult]:
    """``undeclared_of`` for a record read back: its untriaged diverging probe results."""
    if record.status != "pass":
        return []
    return [r for r in record.probes.results if r.status in DIVERGING and not r.declared]
