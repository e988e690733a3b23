"""Merging results files into one report model: builds, the matrix, failures, problems.

Reading is strict: a line that is not a valid `torch-conformance.result/1` record, or inputs
that mix schema versions, stop the report with an error naming file:line (a report that
silently dropped records would show a wrong matrix). A build is the torch version plus git
hash of a record's fingerprint; where inputs overlap, the latest record per (build, case,
variant) is kept and the report says which were dropped. Everything is sorted, and nothing
depends on the time the report is made, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version
from pydantic import ValidationError

from conformance.results import RESULT_SCHEMA, STATUSES, ResultRecord
from conformance.schema import BEHAVIORS

COMPAT_SCHEMA = "torch-conformance.compat/1"
FAILING = ("fail", "error", "xpass")
RAN = ("pass", "fail", "xfail", "xpass", "error")
PROBE_STATUSES = ("conforms", "diverges", "absent")
NO_DEVICE = "case file"  # the column of records that belong to no device (a case file that does not load)


SHOWN_CHARS = 20_000  # per text block in compat.md and index.html; compat.json keeps every character


def clip(text: object, limit: int = SHOWN_CHARS) -> str:
    """Text for a page: at most `limit` characters, saying how much was left out."""
    value = str(text or "")
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n… {len(value) - limit} more characters in compat.json"


class ReportInputError(Exception):
    """An input the report cannot read; the message starts with file:line."""


@dataclass(frozen=True)
class Sourced:
    record: ResultRecord
    path: str
    line: int
    build: str = ""

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


def read_results(path: Path, first: list[tuple[str, str]]) -> list[Sourced]:
    """Every record of one results file, or ReportInputError at the first bad line.

    `first` carries (schema, file:line) of the first record across all inputs, so a second
    file with another schema version is named as mixing versions.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}:0: cannot read: {exc}") from None
    if _is_compat(text):
        return _compat_records(path, text, first)
    out: list[Sourced] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportInputError(
                f"{path}:{lineno}: not JSON ({exc.msg} at column {exc.colno}); a results file has one JSON "
                "record per line (a torn last line from an interrupted run: delete that line)"
            ) from None
        out.append(_validated(path, lineno, data, first))
    return out


def _validated(path: Path, lineno: int, data: object, first: list[tuple[str, str]]) -> Sourced:
    got = data.get("schema") if isinstance(data, dict) else type(data).__name__
    head = first[0] if first else None
    if got != RESULT_SCHEMA or (head is not None and got != head[0]):
        raise _schema_error(path, lineno, got, head)
    if not first:
        first.append((RESULT_SCHEMA, f"{path}:{lineno}"))
    try:
        record = ResultRecord.model_validate(data)
    except ValidationError as exc:
        raise ReportInputError(f"{path}:{lineno}: invalid record: {_validation_text(exc)}") from None
    return Sourced(record, str(path), lineno)


def _is_compat(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith("{") and f'"{COMPAT_SCHEMA}"' in head and "\n" in text.strip()


def _compat_records(path: Path, text: str, first: list[tuple[str, str]]) -> list[Sourced]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("schema") != COMPAT_SCHEMA:
        raise ReportInputError(f"{path}:1: not a {COMPAT_SCHEMA} report")
    out = []
    for i, rec in enumerate(data.get("records", [])):
        if not isinstance(rec, dict):
            raise ReportInputError(f"{path}:1: records[{i}] is not an object")
        extra = {k: rec.pop(k) for k in ("build", "source", "reproducer_link") if k in rec}
        sourced = _validated(path, i + 1, rec, first)
        out.append(Sourced(sourced.record, str(extra.get("source", sourced.path)), sourced.line,
                           str(extra.get("build", ""))))
    return out


# ----------------------------------------------------------------------------- builds


def build_id(fp: dict[str, Any]) -> str:
    version = fp.get("torch_version") or "unknown"
    git = fp.get("torch_git")
    return f"{version}@{str(git)[:12]}" if git else str(version)


def _version_key(version: str) -> tuple[int, Any, str]:
    try:
        return (0, Version(version.split("@", maxsplit=1)[0]), version)
    except InvalidVersion:
        return (1, version, version)


@dataclass
class Build:
    id: str
    torch_version: str
    torch_git: str | None
    cuda: str | None = None
    hip: str | None = None
    pythons: list[str] = field(default_factory=list)
    platforms: list[str] = field(default_factory=list)
    harness_versions: list[str] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    device_names: dict[str, str] = field(default_factory=dict)
    records: int = 0

    @property
    def label(self) -> str:
        return f"torch {self.torch_version}" + (f" ({self.torch_git[:7]})" if self.torch_git else "")

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.id)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "torch_version": self.torch_version, "torch_git": self.torch_git,
                "cuda": self.cuda, "hip": self.hip, "python": self.pythons, "platform": self.platforms,
                "harness_version": self.harness_versions, "dates": self.dates, "device_names": self.device_names,
                "records": self.records}


@dataclass
class Cell:
    behavior: str
    build: str
    device: str
    counts: dict[str, int]

    @property
    def ran(self) -> int:
        return sum(self.counts[s] for s in RAN)

    @property
    def verdict(self) -> str:
        """empty (no case ran: an error), fail (a fail or error), xpass (retire), or pass."""
        if self.ran == 0:
            return "empty"
        if self.counts["fail"] or self.counts["error"]:
            return "fail"
        if self.counts["xpass"]:
            return "xpass"
        return "pass"

    @property
    def good_fraction(self) -> float:
        return (self.counts["pass"] + self.counts["xfail"]) / self.ran if self.ran else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"behavior": self.behavior, "build": self.build, "device": self.device, "counts": self.counts,
                "ran": self.ran, "verdict": self.verdict}


@dataclass
class Problem:
    kind: str
    message: str
    build: str = ""

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "build": self.build, "message": self.message}


@dataclass
class Report:
    inputs: list[dict[str, Any]]
    builds: list[Build]
    records: list[Sourced]
    dropped: list[dict[str, str]]
    problems: list[Problem]
    stale: list[dict[str, str]] = field(default_factory=list)
    expectation_files: list[str] = field(default_factory=list)
    links: dict[tuple[str, str, str], str] = field(default_factory=dict)  # key -> reproducer link, set on write

    # ------------------------------------------------------------------ derived views
    @property
    def behaviors(self) -> list[str]:
        seen = {behavior_of(s.record) for s in self.records}
        return [*BEHAVIORS, *sorted(seen - set(BEHAVIORS))]

    def devices(self, build: str) -> list[str]:
        devs = {s.record.device or NO_DEVICE for s in self.records if s.build == build}
        return sorted(devs - {NO_DEVICE}) + ([NO_DEVICE] if NO_DEVICE in devs else [])

    @property
    def columns(self) -> list[tuple[Build, str]]:
        return [(b, d) for b in self.builds for d in self.devices(b.id)]

    def cell(self, behavior: str, build: str, device: str) -> Cell:
        counts = dict.fromkeys(STATUSES, 0)
        for s in self.records:
            if s.build == build and (s.record.device or NO_DEVICE) == device and behavior_of(s.record) == behavior:
                counts[s.record.status] += 1
        return Cell(behavior, build, device, counts)

    def cells(self) -> list[Cell]:
        return [self.cell(beh, b.id, d) for beh in self.behaviors for b, d in self.columns]

    def empty_cells(self) -> list[Cell]:
        """Cells of a real device in which no case ran: an error, never a silent green."""
        return [c for c in self.cells() if c.device != NO_DEVICE and c.verdict == "empty"]

    @property
    def failures(self) -> list[Sourced]:
        return [s for s in self.records if s.record.status in FAILING]

    @property
    def xpasses(self) -> list[Sourced]:
        return [s for s in self.records if s.record.status == "xpass"]

    def build(self, build_id_: str) -> Build:
        return next(b for b in self.builds if b.id == build_id_)

    def mechanisms(self, build: str) -> dict[str, Any]:
        """What the build was seen to generate: artifact names with the records that saw them,
        and per behaviour the internals-probe verdicts."""
        seen: Counter[str] = Counter()
        probes: dict[str, Counter[str]] = {b: Counter() for b in BEHAVIORS}
        for s in self.records:
            if s.build != build:
                continue
            seen.update(set(s.record.probes.get("seen", ())))
            for res in s.record.probes.get("results", ()):
                probes.setdefault(str(res.get("behaviour")), Counter())[str(res.get("status"))] += 1
        return {
            "seen": dict(sorted(seen.items())),
            "probes": {b: {st: c[st] for st in PROBE_STATUSES} for b, c in sorted(probes.items())},
            "generated": sorted(b for b, c in probes.items() if c["conforms"] or c["diverges"]),
        }

    def exit_code(self) -> int:
        """1 when something needs a person: a fail, error or xpass, or a cell where no case ran."""
        return 1 if self.failures or self.empty_cells() else 0

    def key(self, s: Sourced) -> tuple[str, str, str]:
        return (s.build, s.record.case_id, s.record.variant)


def behavior_of(record: ResultRecord) -> str:
    if record.behavior:
        return record.behavior
    head = record.case_id.split("/", 1)[0]
    return head if head in BEHAVIORS else "(unknown)"


def _date(s: Sourced) -> str:
    return str(s.record.fingerprint.get("date") or "")


def merge(paths: Sequence[Path], *, expectations: Sequence[Path] = ()) -> Report:
    """Read and merge results files (or compat.json reports) into one report model."""
    first: list[tuple[str, str]] = []
    loaded: list[Sourced] = []
    inputs: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for path in paths:
        records = read_results(path, first)
        inputs.append({"path": str(path), "records": len(records)})
        if not records:
            problems.append(Problem("empty-input", f"{path}: no records (a shard that ran nothing, or the wrong "
                                                   "file?)"))
        loaded += _attribute(path, records, problems)
    builds = _builds(loaded)
    kept, dropped = _latest(loaded)
    for b in builds:
        b.records = sum(1 for s in kept if s.build == b.id)
    stale = _stale(expectations, kept) if expectations else []
    report = Report(inputs=inputs, builds=builds, records=kept, dropped=dropped, problems=problems, stale=stale,
                    expectation_files=[str(p) for p in expectations])
    for c in report.empty_cells():
        skipped = [s.record.reason for s in kept if s.build == c.build and (s.record.device or NO_DEVICE) == c.device
                   and behavior_of(s.record) == c.behavior and s.record.status == "skip"]
        why = f"all {len(skipped)} item(s) skipped, e.g. {skipped[0]!r}" if skipped else "no records at all"
        problems.append(Problem("no-case-ran", f"{c.behavior} on {report.build(c.build).label} / {c.device}: no "
                                f"case ran ({why})", c.build))
    return report


def _attribute(path: Path, records: list[Sourced], problems: list[Problem]) -> list[Sourced]:
    """Give every record its build; records without a fingerprint (a case file that does not load,
    a crashed worker) take the build of the other records of the same file."""
    file_builds = sorted({build_id(s.record.fingerprint) for s in records if s.record.fingerprint})
    out = []
    orphans = 0
    for s in records:
        if s.build:
            out.append(s)
        elif s.record.fingerprint:
            out.append(Sourced(s.record, s.path, s.line, build_id(s.record.fingerprint)))
        else:
            orphans += 1
            out.append(Sourced(s.record, s.path, s.line, file_builds[0] if len(file_builds) == 1 else "unknown"))
    if orphans and len(file_builds) != 1:
        problems.append(Problem("unattributed", f"{path}: {orphans} record(s) without a build fingerprint and "
                                f"{len(file_builds)} builds in the file: shown under build 'unknown'"))
    return out


def _builds(records: Iterable[Sourced]) -> list[Build]:
    builds: dict[str, Build] = {}
    for s in records:
        fp = s.record.fingerprint
        b = builds.get(s.build)
        if b is None:
            version = s.build.split("@")[0]
            b = builds[s.build] = Build(s.build, str(fp.get("torch_version") or version), fp.get("torch_git"))
        if not fp:
            continue
        b.cuda = b.cuda or fp.get("cuda")
        b.hip = b.hip or fp.get("hip")
        for attr, key in (("pythons", "python"), ("platforms", "platform"), ("harness_versions", "harness_version"),
                          ("dates", "date")):
            value = fp.get(key)
            if value and value not in getattr(b, attr):
                getattr(b, attr).append(str(value))
        if s.record.device and fp.get("device_name"):
            b.device_names.setdefault(s.record.device, str(fp["device_name"]))
    for b in builds.values():
        for attr in ("pythons", "platforms", "harness_versions", "dates"):
            getattr(b, attr).sort()
        b.device_names = dict(sorted(b.device_names.items()))
    return sorted(builds.values(), key=lambda b: _version_key(b.id))


def _latest(records: list[Sourced]) -> tuple[list[Sourced], list[dict[str, str]]]:
    """The latest record per (build, case, variant): by fingerprint date, then input order."""
    order = {id(s): i for i, s in enumerate(records)}
    groups: dict[tuple[str, str, str], list[Sourced]] = {}
    for s in records:
        groups.setdefault((s.build, s.record.case_id, s.record.variant), []).append(s)
    kept, dropped = [], []
    for key, group in groups.items():
        group.sort(key=lambda s: (_date(s), order[id(s)]))
        kept.append(group[-1])
        for old in group[:-1]:
            dropped.append({"build": key[0], "case_id": key[1], "variant": key[2], "dropped": old.source,
                            "kept": group[-1].source})
    kept.sort(key=lambda s: (_version_key(s.build), s.record.case_id, s.record.variant))
    dropped.sort(key=lambda d: (d["build"], d["case_id"], d["variant"], d["dropped"]))
    return kept, dropped


def _same_source(a: str, b: str) -> bool:
    """Whether two `path:line` sources name the same entry (paths may be relative to other folders)."""
    pa, _, la = a.rpartition(":")
    pb, _, lb = b.rpartition(":")
    if la != lb:
        return False
    parts_a, parts_b = Path(pa).parts, Path(pb).parts
    n = min(len(parts_a), len(parts_b))
    return Path(pa).resolve() == Path(pb).resolve() or (n > 0 and parts_a[-n:] == parts_b[-n:])


def _stale(paths: Sequence[Path], records: Sequence[Sourced]) -> list[dict[str, str]]:
    from conformance.expectations import load_expectations
    from conformance.loader import CaseLoadError

    try:
        expectations = load_expectations(list(paths))
    except CaseLoadError as exc:
        raise ReportInputError(f"--expectations: the file does not load:\n{exc}") from None
    used = {s.record.known_failure.source for s in records if s.record.known_failure is not None}
    return [
        {"source": e.source, "case": e.entry.case, "reason": e.entry.reason, "link": e.entry.link}
        for e in expectations
        if not any(_same_source(e.source, u) for u in used)
    ]
