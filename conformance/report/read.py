"""Reading a report's inputs strictly: results files (one record per line), their run manifests,
and compat.json reports. Anything that is not a valid record is a ReportInputError naming
file:line (a report that silently dropped records would show a wrong matrix); records are data
from elsewhere (downloaded CI artifacts) and trusted for nothing."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from conformance.report.document import COMPAT_SCHEMA, CompatDoc
from conformance.results import RESULT_SCHEMA, ResultRecord, RunManifest, manifest_path


class ReportInputError(Exception):
    """An input the report cannot read; the message starts with file:line."""


@dataclass(frozen=True)
class Sourced:
    record: ResultRecord
    path: str
    line: int
    build: str = ""
    origin: Path | None = None  # the input file it was read from (a results file, or a compat.json)
    link: str | None = None  # a compat.json input's link to its own copy of the reproducer

    @property
    def source(self) -> str:
        return f"{self.path}:{self.line}"


def _schema_error(path: Path, lineno: int, got: object, first: tuple[str, str] | None) -> ReportInputError:
    where = f"{path}:{lineno}"
    if first is not None and got != first[0]:
        return ReportInputError(
            f"{where}: schema {got!r}, but {first[1]} is {first[0]!r}: the inputs mix schema versions; "
            "report each harness version's results separately"
        )
    if got == COMPAT_SCHEMA:
        return ReportInputError(f"{where}: this is a compat.json report, not a results file; pass the results "
                                "files it was made from (report diff takes compat.json)")
    if isinstance(got, str) and got.startswith("torch-conformance.result/"):
        return ReportInputError(f"{where}: schema {got!r}, but this harness reads {RESULT_SCHEMA!r}; report it "
                                "with the torch-conformance version that wrote it")
    return ReportInputError(f"{where}: not a torch-conformance result record (schema {got!r}); pass the JSON "
                            "Lines files written by `torch-conformance run --results`")


def _validation_text(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "<record>"
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more


MAX_INPUT_BYTES = 512 << 20  # an input, decompressed (the published six-build report is ~50 MB)
MAX_RECORDS = 200_000  # per input (a six-build, two-device matrix is ~17,000)


def input_text(path: Path) -> str:
    """A results file or compat.json as text; gzipped (a published report's compat.json.gz) or not.
    Never more than MAX_INPUT_BYTES, compressed or not: a gzip bomb is refused as it inflates."""
    pieces: list[bytes] = []
    with path.open("rb") as f:  # in pieces: read(bound) would allocate the whole bound for a small file
        while sum(map(len, pieces)) <= MAX_INPUT_BYTES and (piece := f.read(1 << 24)):
            pieces.append(piece)
    data = b"".join(pieces)
    if data[:2] == b"\x1f\x8b":
        inflate, out, size, rest = zlib.decompressobj(16 + zlib.MAX_WBITS), [], 0, data
        try:
            while rest and size <= MAX_INPUT_BYTES:  # in pieces: never more than the bound in memory
                out.append(inflate.decompress(rest, 1 << 24))
                size, rest = size + len(out[-1]), inflate.unconsumed_tail
        except zlib.error as exc:
            raise ReportInputError(f"{path}:0: cannot read: a damaged gzip file ({exc})") from None
        if not inflate.eof and size <= MAX_INPUT_BYTES:
            raise ReportInputError(f"{path}:0: cannot read: a damaged gzip file (it ends before its data does)")
        if inflate.unused_data:  # what a report writes is one gzip stream: more after it is not its data
            raise ReportInputError(f"{path}:0: cannot read: {len(inflate.unused_data)} byte(s) after the end of "
                                   "the gzip stream (a damaged or appended-to file)")
        if size > MAX_INPUT_BYTES:
            raise ReportInputError(f"{path}:0: cannot read: over {MAX_INPUT_BYTES >> 20} MiB of text once "
                                   "decompressed (a report is far smaller; is this the right file?)")
        data = b"".join(out)
    if len(data) > MAX_INPUT_BYTES:
        raise ReportInputError(f"{path}:0: cannot read: over {MAX_INPUT_BYTES >> 20} MiB of text (a results file or "
                               "report is far smaller; is this the right file?)")
    return data.decode("utf-8")


def read_text(path: Path) -> str:
    """input_text, its failures as `file:0` input errors."""
    try:
        return input_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}:0: cannot read: {exc}") from None


def read_results(path: Path, first: list[tuple[str, str]], text: str | None = None) -> list[Sourced]:
    """Every record of one results file, or ReportInputError at the first bad line.

    `first` carries (schema, file:line) of the first record across all inputs, so a second
    file with another schema version is named as mixing versions.
    """
    text = read_text(path) if text is None else text
    if is_compat(text):
        return _compat_records(path, text, first)
    lines = text.count("\n") + 1
    if lines > MAX_RECORDS:
        raise ReportInputError(f"{path}:{MAX_RECORDS + 1}: over {MAX_RECORDS:,} lines; one results file holds one "
                               "run's records (shard a bigger run, or split the file)")
    out: list[Sourced] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        data = loads(line, f"{path}:{lineno}", "a results file has one JSON record per line (a torn last line "
                     "from an interrupted run: delete that line)")
        s = _validated(path, lineno, data, first)
        fp = s.record.fingerprint
        item = (s.record.case_id, s.record.variant, str(fp.torch_version), str(fp.torch_git))
        if item in seen:  # of one build: a file may hold several builds' records (concatenated runs)
            raise ReportInputError(f"{path}:{lineno}: a second record of {item[0]} [{item[1]}] (the first is line "
                                   f"{seen[item]}): a run writes each item once, so two runs wrote this file or it "
                                   "was edited; rerun into a file of its own")
        seen[item] = lineno
        out.append(s)
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str, where: str, hint: str = "") -> Any:
    """Strict JSON: no NaN/Infinity, bounded nesting; ReportInputError naming `where` otherwise."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{where}: not JSON ({exc.msg} at column {exc.colno})" + (f"; {hint}" if hint else "")
                               ) from None
    except ValueError as exc:
        raise ReportInputError(f"{where}: {exc}; a record holds finite numbers only") from None
    except RecursionError:
        raise ReportInputError(f"{where}: JSON nested too deeply to be a record") from None


def _validated(path: Path, lineno: int, data: object, first: list[tuple[str, str]]) -> Sourced:
    if not isinstance(data, dict):
        raise ReportInputError(f"{path}:{lineno}: a JSON {type(data).__name__}, not a record object; a results file "
                               "has one JSON object per line")
    got = data.get("schema")
    head = first[0] if first else None
    if got != RESULT_SCHEMA or (head is not None and got != head[0]):
        raise _schema_error(path, lineno, got, head)
    if not first:
        first.append((RESULT_SCHEMA, f"{path}:{lineno}"))
    try:
        record = ResultRecord.model_validate(data)
    except ValidationError as exc:
        raise ReportInputError(f"{path}:{lineno}: invalid record: {_validation_text(exc)}") from None
    except RecursionError:
        raise ReportInputError(f"{path}:{lineno}: invalid record: nested too deeply") from None
    return Sourced(record, str(path), lineno, origin=path)


def is_compat(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith("{") and f'"{COMPAT_SCHEMA}"' in head and "\n" in text.strip()


def _compat_document(path: Path, text: str) -> tuple[CompatDoc, object]:
    """The document's head (everything but the records) as its model, and its records as they stand: the
    caller checks them one by one, each error naming its index."""
    data = loads(text, f"{path}:1")
    if not isinstance(data, dict) or data.get("schema") != COMPAT_SCHEMA:
        raise ReportInputError(f"{path}:1: not a {COMPAT_SCHEMA} report")
    try:
        head = CompatDoc.model_validate({**data, "records": []})
    except ValidationError as exc:
        raise ReportInputError(f"{path}:1: not a valid {COMPAT_SCHEMA} report: {_validation_text(exc)}") from None
    return head, data.get("records", [])


def _compat_records(path: Path, text: str, first: list[tuple[str, str]]) -> list[Sourced]:
    _, records = _compat_document(path, text)
    if not isinstance(records, list):
        raise ReportInputError(f"{path}:1: records is a {type(records).__name__}, not a list")
    if len(records) > MAX_RECORDS:
        raise ReportInputError(f"{path}:1: {len(records):,} records, over {MAX_RECORDS:,} in one report")
    out = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise ReportInputError(f"{path}:1: records[{i}] is not an object")
        extra = {k: rec.pop(k) for k in ("build", "source", "reproducer_link") if k in rec}
        for key, value in extra.items():
            if value is not None and (not isinstance(value, str) or len(value) > 4096):
                raise ReportInputError(f"{path}:1: records[{i}].{key} is not a short string")
        sourced = _validated(path, i + 1, rec, first)
        link = extra.get("reproducer_link")
        out.append(Sourced(sourced.record, str(extra.get("source") or sourced.path), sourced.line,
                           str(extra.get("build") or ""), path, link if isinstance(link, str) else None))
    return out


def compat_runs(path: Path, text: str) -> list[RunInfo]:
    """The runs a compat.json names, each as its manifest (checked with the document's head)."""
    head, _ = _compat_document(path, text)
    return [RunInfo(RunManifest(**run.model_dump(by_alias=True, exclude={"build", "source"})), run.source, run.build)
            for run in head.runs]


def _manifest(data: object, where: str) -> RunManifest:
    if not isinstance(data, dict):
        raise ReportInputError(f"{where}: a run manifest is a JSON object")
    try:
        return RunManifest.model_validate(data)
    except ValidationError as exc:
        raise ReportInputError(f"{where}: invalid run manifest: {_validation_text(exc)}") from None


def read_manifest(results: Path) -> RunManifest | None:
    """The run manifest beside a results file, or None for a file without one (older harness)."""
    path = manifest_path(results)
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}:1: cannot read: {exc}") from None
    return _manifest(loads(text, f"{path}:1"), f"{path}:1")


@dataclass(frozen=True)
class RunInfo:
    """One run's manifest, with the results file it belongs to and the build that ran it."""

    manifest: RunManifest
    source: str
    build: str


# ----------------------------------------------------------------------------- builds
