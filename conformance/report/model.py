"""Merging results files into one report model: builds, the matrix, failures, problems.

Reading is strict: a line that is not a valid `torch-conformance.result/2` record, or inputs
that mix schema versions, stop the report with an error naming file:line (a report that
silently dropped records would show a wrong matrix). A build is the torch version plus git
hash of a record's fingerprint; where inputs overlap, the latest record per (build, case,
variant) is kept and the report says which were dropped. Everything is sorted, and nothing
depends on the time the report is made, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, get_args

from conformance.behaviors import IDS as BEHAVIORS
from conformance.core.entry import counts_graphs
from conformance.data.expectations import load_expectations
from conformance.data.loader import CaseLoadError
from conformance.data.parity import ParityFile
from conformance.data.parity import table as parity_table
from conformance.report.causes import cause_of
from conformance.report.document import CellVerdict
from conformance.report.history import BAD, in_release_order
from conformance.report.read import (
    ReportInputError,
    RunInfo,
    Sourced,
    compat_runs,
    is_compat,
    read_manifest,
    read_results,
    read_text,
)
from conformance.report.speed import speed
from conformance.results import (
    STATUSES,
    Fingerprint,
    ProbeStatus,
    ResultRecord,
    RunManifest,
    manifest_path,
)
from conformance.schema.case import KnownFailureKind
from conformance.versions import version_key

FAILING = ("fail", "error", "xpass")
COMPARED = ("pass", "fail", "xfail", "xpass")  # the item compared compiled with eager
RAN = ("pass", "fail", "xfail", "xpass", "error")
PROBE_STATUSES: tuple[str, ...] = get_args(ProbeStatus)
NO_DEVICE = "case file"  # the column of records that belong to no device (a case file that does not load)


SHOWN_CHARS = 20_000  # per text block in compat.md and index.html; compat.json keeps every character


def clip(text: object, limit: int = SHOWN_CHARS) -> str:
    """Text for a page: at most `limit` characters, saying how much was left out."""
    value = str(text or "")
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n… {len(value) - limit} more characters in compat.json"


def build_id(fp: Fingerprint) -> str:
    version = fp.torch_version or "unknown"
    git = fp.torch_git
    return f"{version}@{str(git)[:12]}" if git else str(version)


def _cause_key(s: Sourced) -> str:
    """The item's root cause (conformance.report.causes); one with no located difference is its known
    failure's link."""

    cause = cause_of(s.record)
    if cause is not None:
        return cause.key()
    return s.record.known_failure.link if s.record.known_failure else s.record.case_id


KNOWN_KINDS: tuple[str, ...] = get_args(KnownFailureKind)
# a known failure's kind in a verdict's words: only `bug` is counted as a known bug
KIND_WORDS = {"bug": "known bug(s)", "eager_bug": "bug(s) of eager's (compiled is right)",
              "benign": "benign difference(s)", "by_design": "difference(s) by design"}


def verdict_line(v: dict[str, Any]) -> str:
    """One build and device (Report.verdicts) in a sentence: what passes, what is known, what
    changed since the previous release, what needs a person."""
    text = f"passes {v['passed']:,} of {v['items']:,} items"
    if v["known"]:
        kinds = v.get("known_by_kind") or {"bug": {"items": v["known"], "causes": v["known_causes"]}}
        parts = [f"{kinds[k]['causes']} {KIND_WORDS[k]} ({kinds[k]['items']:,} items)"
                 for k in KNOWN_KINDS if k in kinds]
        text += f"; known: {', '.join(parts)} ({len(v['links'])} upstream link(s))"
    if v["previous"]:
        text += f"; since {v['previous']}: {v['new']} newly failing, {v['fixed']} fixed"
    return text + (f"; {v['untriaged']} UNTRIAGED" if v["untriaged"] else "; nothing untriaged")


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
    selected: bool = True
    unavailable: bool = False

    @property
    def ran(self) -> int:
        return sum(self.counts[s] for s in RAN)

    @property
    def verdict(self) -> CellVerdict:
        """fail (a fail or error), xpass (retire), pass; where no case ran: unavailable (every item skipped
        because the device is absent on the machine that ran it), not-selected (a run narrowed on purpose
        selected nothing here), or empty (an error: nothing says why no case ran)."""
        if self.ran == 0:
            if self.unavailable:
                return "unavailable"
            return "empty" if self.selected else "not-selected"
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


QUIET_VERDICTS = ("unavailable", "not-selected")  # no case ran, and that is not an error
VERDICT_WORD = {"pass": "ok", "fail": "FAIL", "xpass": "XPASS", "empty": "NO CASE RAN",
                "unavailable": "not available here", "not-selected": "not selected"}


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
    runs: list[RunInfo] = field(default_factory=list)
    links: dict[tuple[str, str, str], str] = field(default_factory=dict)  # key -> reproducer link, set on write
    parity: ParityFile | None = None  # the upstream parity mapping, when given
    drafts: list[tuple[str, str]] = field(default_factory=list)  # (title, issue draft path), set on write
    draft_paths: list[tuple[str, str]] = field(default_factory=list)  # (cause key, issue draft path), set on write
    bench: list[dict[str, Any]] = field(default_factory=list)  # bench.json documents of the builds, when given

    def speed(self) -> dict[str, Any] | None:
        """The bench tables release over release (Note [Before/after across releases])."""

        return speed(self.bench)

    def changed_cases(self) -> list[str]:
        """Case files (relative paths, as the runs named them) that changed or went away since their
        records were made: the report shows results of case files that are no longer these."""
        made: dict[str, set[str]] = {}
        for s in self.records:
            if s.record.case_file and s.record.case_sha256 and not Path(s.record.case_file).is_absolute():
                made.setdefault(s.record.case_file, set()).add(s.record.case_sha256)
        out = []
        for path, hashes in sorted(made.items()):
            p = Path(path)
            if not p.is_file():
                out.append(f"{path} (gone)")
            elif hashlib.sha256(p.read_bytes()).hexdigest() not in hashes:
                out.append(path)
        return out

    def parity_rows(self) -> list[dict[str, Any]]:
        """Per upstream test file and in total: tests, behavioural, mapped; per build, the mapped tests
        whose cases pass / are known failures / fail / did not run there, and those where the build
        behaves as upstream's test asserts / does not / cannot be told."""
        if self.parity is None:
            return []
        records: dict[str, dict[str, list[ResultRecord]]] = {b.id: {} for b in self.builds}
        for s in self.records:
            records.setdefault(s.build, {}).setdefault(s.record.case_id, []).append(s.record)
        return parity_table(self.parity, records)

    # ------------------------------------------------------------------ derived views
    @property
    def declared(self) -> list[str]:
        """The behaviours of the registry, in its order (the report's rows for the probes)."""
        return list(BEHAVIORS)

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
        skips = []
        for s in self.records:
            if s.build == build and (s.record.device or NO_DEVICE) == device and behavior_of(s.record) == behavior:
                counts[s.record.status] += 1
                if s.record.status == "skip":
                    skips.append(s.record.skip_kind)
        unavailable = bool(skips) and sum(counts.values()) == len(skips) and all(k == "device" for k in skips)
        return Cell(behavior, build, device, counts, self._selected(behavior, build, device, counts), unavailable)

    def _selected(self, behavior: str, build: str, device: str, counts: dict[str, int]) -> bool:
        """Whether the cell was meant to run: it has items, or some run of the build did not narrow
        its selection (then every behaviour should have had cases), or no run says (no manifest)."""
        runs = [r.manifest for r in self.runs if r.build == build]
        if any(counts.values()) or not runs or any(not m.narrowed for m in runs):
            return True
        return any(i.behavior == behavior and (i.device or NO_DEVICE) == device for m in runs for i in m.items)

    def cells(self) -> list[Cell]:
        return [self.cell(beh, b.id, d) for beh in self.behaviors for b, d in self.columns]

    def empty_cells(self) -> list[Cell]:
        """Cells of a real device in which no case ran and nothing says why: an error, never a silent green."""
        return [c for c in self.cells() if c.device != NO_DEVICE and c.verdict == "empty"]

    def quiet_cells(self) -> list[Cell]:
        """Cells where no case ran for a stated reason: the device is absent there, or the run was narrowed."""
        return [c for c in self.cells() if c.device != NO_DEVICE and c.verdict in QUIET_VERDICTS]

    def headline(self) -> tuple[str, str]:
        """(what needs a person, or '' when nothing does; what ran nowhere for a stated reason, or '')."""
        bad = []
        if self.failures:
            bad.append(f"{len(self.failures)} failing item(s)")
        if self.empty_cells():
            bad.append(f"{len(self.empty_cells())} cell(s) where no case ran and nothing says why")
        if self.cut_short:
            bad.append(f"{len(self.cut_short)} run(s) cut short")
        quiet = self.quiet_cells()
        unavailable = sorted({c.device for c in quiet if c.verdict == "unavailable"})
        notes = []
        if unavailable:
            n = sum(1 for c in quiet if c.verdict == "unavailable")
            notes.append(f"{n} cell(s) not available here: no {', '.join(unavailable)} device on the machine that ran "
                         "them (not an error)")
        if any(c.verdict == "not-selected" for c in quiet):
            n = sum(1 for c in quiet if c.verdict == "not-selected")
            notes.append(f"{n} cell(s) not selected by a narrowed run (-k, --devices, ...)")
        return ("Something needs a person: " + ", ".join(bad) + ".") if bad else "", "; ".join(notes)

    @property
    def cut_short(self) -> list[RunInfo]:
        return [r for r in self.runs if r.manifest.finished is None]

    @property
    def failures(self) -> list[Sourced]:
        return [s for s in self.records if s.record.status in FAILING]

    @property
    def xpasses(self) -> list[Sourced]:
        return [s for s in self.records if s.record.status == "xpass"]

    @property
    def recompiled(self) -> list[Sourced]:
        """Items that compiled graphs after their first call where the case sets no expect.compiles:
        not a verdict, never silent (the case owner decides whether the count is part of the contract)."""
        return [s for s in self.records if s.record.recompiles]

    @property
    def compiled_nothing(self) -> list[Sourced]:
        """Items that ran but whose torch.compile backend compiled no graph (dynamo ran the program
        eagerly): their verdict says nothing about the compiled path."""
        return [s for s in self.records if s.record.status in COMPARED and s.record.backend is not None
                and counts_graphs(s.record.backend)
                and s.record.compile_counts.get("cold_backend_calls", s.record.compile_counts.get("cold_graphs")) == 0]

    def causes(self) -> list[dict[str, Any]]:
        """The failing and known-failing items grouped by cause (conformance.report.causes), with the
        builds, cases and variants that show each; most items first."""

        groups: dict[str, dict[str, Any]] = {}
        for s in self.records:
            if s.record.status not in ("fail", "xfail", "error", "xpass"):
                continue
            cause = cause_of(s.record)
            if cause is None:
                continue
            g = groups.setdefault(cause.key(), {"key": cause.key(), "words": cause.words(), "items": 0,
                                                "builds": {}, "cases": set(), "links": set(), "kinds": set()})
            g["items"] += 1
            g["builds"].setdefault(s.build, {}).setdefault(s.record.status, 0)
            g["builds"][s.build][s.record.status] += 1
            g["cases"].add(s.record.case_id)
            if s.record.known_failure is not None:
                g["links"].add(s.record.known_failure.link)
            g["kinds"].add(s.record.known_failure.kind if s.record.status == "xfail" and s.record.known_failure
                           else "untriaged")
        return sorted(({**g, "cases": sorted(g["cases"]), "links": sorted(g["links"]),
                        "kinds": [k for k in (*KNOWN_KINDS, "untriaged") if k in g["kinds"]]} for g in groups.values()),
                      key=lambda g: (-g["items"], g["key"]))

    def verdicts(self) -> list[dict[str, Any]]:
        """One line per build and device, newest build first: items that ran (not skipped), how many
        pass, the known failures and the causes they come from (with their links), what changed
        since the previous release on that device (items failing now that passed there, and the
        reverse), and what no expectation covers (fail, error, xpass)."""

        order = in_release_order(self.builds)
        out = []
        for b in reversed(order):
            for device in self.devices(b.id):
                ran = {(s.record.case_id, s.record.variant): s for s in self.records
                       if s.build == b.id and (s.record.device or NO_DEVICE) == device and s.record.status != "skip"}
                earlier = [p for p in order[: order.index(b)] if device in self.devices(p.id)]
                before = {} if not earlier else {
                    (s.record.case_id, s.record.variant): s.record.status for s in self.records
                    if s.build == earlier[-1].id and (s.record.device or NO_DEVICE) == device
                    and s.record.status != "skip"}
                known = [s for s in ran.values() if s.record.status == "xfail"]
                causes = {_cause_key(s) for s in known}
                by_kind: dict[str, dict[str, int]] = {}
                for kind in KNOWN_KINDS:
                    of_kind = [s for s in known if s.record.known_failure and s.record.known_failure.kind == kind]
                    keys = {_cause_key(s) for s in of_kind}
                    if of_kind:
                        by_kind[kind] = {"items": len(of_kind), "causes": len(keys)}
                links = sorted({s.record.known_failure.link for s in known if s.record.known_failure})
                both = [k for k in ran if k in before]
                out.append({
                    "build": b.id, "label": b.label, "device": device, "items": len(ran),
                    "passed": sum(1 for s in ran.values() if s.record.status == "pass"),
                    "known": len(known), "known_causes": len(causes), "known_by_kind": by_kind, "links": links,
                    "untriaged": sum(1 for s in ran.values() if s.record.status in FAILING),
                    "previous": earlier[-1].label if earlier else None,
                    "new": sum(1 for k in both if ran[k].record.status in BAD and before[k] not in BAD),
                    "fixed": sum(1 for k in both if ran[k].record.status not in BAD and before[k] in BAD),
                })
        return out

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
            seen.update(set(s.record.probes.seen))
            for res in s.record.probes.results:
                probes.setdefault(res.behavior, Counter())[res.status] += 1
        return {
            "seen": dict(sorted(seen.items())),
            "probes": {b: {st: c[st] for st in PROBE_STATUSES} for b, c in sorted(probes.items())},
            "generated": sorted(b for b, c in probes.items() if c["conforms"] or c["diverges"] or c["unknown-form"]),
        }

    def exit_code(self) -> int:
        """1 when something needs a person: a fail, error or xpass, a cell where no case ran for no stated
        reason, or a run that was cut short."""
        return 1 if self.failures or self.empty_cells() or self.cut_short else 0

    def key(self, s: Sourced) -> tuple[str, str, str]:
        return (s.build, s.record.case_id, s.record.variant)


def _has_build(record: ResultRecord) -> bool:
    """Whether the record says which build it ran on (a case file's schema error does not)."""
    return record.fingerprint.torch_version is not None


def behavior_of(record: ResultRecord) -> str:
    if record.behavior:
        return record.behavior
    head = record.case_id.split("/", 1)[0]
    return head if head in BEHAVIORS else "(unknown)"


def _date(s: Sourced) -> str:
    return s.record.fingerprint.date or ""


def merge(paths: Sequence[Path], *, expectations: Sequence[Path] = (), parity: ParityFile | None = None) -> Report:
    """Read and merge results files (or compat.json reports) into one report model.

    A results file's run manifest (beside it) adds what the run selected and whether it
    finished: an item it selected but has no record of becomes an `error` record here."""
    first: list[tuple[str, str]] = []
    loaded: list[Sourced] = []
    inputs: list[dict[str, Any]] = []
    problems: list[Problem] = []
    runs: list[RunInfo] = []
    for path in paths:
        text = read_text(path)  # once: a compat.json.gz inflates to hundreds of MB
        records = read_results(path, first, text)
        if not records:
            raise ReportInputError(f"{path}:1: no records; a run that selects no item writes no results file (is "
                                   "this the wrong file, or a results file emptied by hand?)")
        inputs.append({"path": str(path), "records": len(records)})
        attributed = _attribute(path, records, problems)
        if is_compat(text):
            runs += compat_runs(path, text)
        else:
            manifest = read_manifest(path)
            if manifest is not None:
                build = _file_build(attributed)
                attributed += _unrecorded(path, manifest, attributed, build)
                runs.append(RunInfo(manifest, str(path), build))
        loaded += attributed
    builds = _builds(loaded)
    kept, dropped = _latest(loaded)
    for b in builds:
        b.records = sum(1 for s in kept if s.build == b.id)
    stale = _stale(expectations, kept) if expectations else []
    report = Report(inputs=inputs, builds=builds, records=kept, dropped=dropped, problems=problems, stale=stale,
                    expectation_files=[str(p) for p in expectations], runs=sorted(runs, key=lambda r: r.source),
                    parity=parity)
    for run in report.cut_short:
        problems.append(Problem("run-cut-short", f"{run.source}: the run started {run.manifest.started} never "
                                "finished (its process was killed or crashed); items it had not finished are error "
                                "records", run.build))
    for c in report.empty_cells():
        skipped = [s.record.reason for s in kept if s.build == c.build and (s.record.device or NO_DEVICE) == c.device
                   and behavior_of(s.record) == c.behavior and s.record.status == "skip"]
        why = f"all {len(skipped)} item(s) skipped, e.g. {skipped[0]!r}" if skipped else "no records at all"
        problems.append(Problem("no-case-ran", f"{c.behavior} on {report.build(c.build).label} / {c.device}: no "
                                f"case ran ({why})", c.build))
    return report


def _file_build(records: Sequence[Sourced]) -> str:
    builds = sorted({s.build for s in records if s.build and s.build != "unknown"})
    return builds[0] if len(builds) == 1 else "unknown"


def _unrecorded(path: Path, manifest: RunManifest, records: Sequence[Sourced], build: str) -> list[Sourced]:
    """An `error` record for every item the run selected but never recorded (it was cut short)."""
    have = {(s.record.case_id, s.record.variant) for s in records}
    out = []
    for item in manifest.items:
        if (item.case_id, item.variant) in have:
            continue
        record = ResultRecord(case_id=item.case_id, variant=item.variant, behavior=item.behavior, device=item.device,
                              status="error", reason=f"no record: the run ({manifest_path(path).name}, started "
                              f"{manifest.started}) ended before this item finished")
        out.append(Sourced(record, str(path), 0, build, origin=path))
    return out


def _attribute(path: Path, records: list[Sourced], problems: list[Problem]) -> list[Sourced]:
    """Give every record its build; records without a fingerprint (a case file that does not load,
    a crashed worker) take the build of the other records of the same file."""
    file_builds = sorted({build_id(s.record.fingerprint) for s in records if _has_build(s.record)})
    out = []
    orphans = 0
    for s in records:
        if s.build:
            out.append(s)
        elif _has_build(s.record):
            out.append(replace(s, build=build_id(s.record.fingerprint)))
        else:
            orphans += 1
            out.append(replace(s, build=file_builds[0] if len(file_builds) == 1 else "unknown"))
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
            b = builds[s.build] = Build(s.build, str(fp.torch_version or version), fp.torch_git)
        if not _has_build(s.record):
            continue
        b.cuda = b.cuda or fp.cuda
        b.hip = b.hip or fp.hip
        for attr, key in (("pythons", "python"), ("platforms", "platform"), ("harness_versions", "harness_version"),
                          ("dates", "date")):
            value = getattr(fp, key)
            if value and value not in getattr(b, attr):
                getattr(b, attr).append(str(value))
        if s.record.device and fp.device_name:
            b.device_names.setdefault(s.record.device, fp.device_name + (f" (capability {fp.capability})"
                                                                          if fp.capability else ""))
    for b in builds.values():
        for attr in ("pythons", "platforms", "harness_versions", "dates"):
            getattr(b, attr).sort()
        b.device_names = dict(sorted(b.device_names.items()))
    return sorted(builds.values(), key=lambda b: (version_key(b.id), b.id))


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
    kept.sort(key=lambda s: (version_key(s.build), s.build, s.record.case_id, s.record.variant))
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
