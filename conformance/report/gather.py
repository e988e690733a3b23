"""Reading results files (or compat.json reports) into one report model: records attributed to their
builds, runs that were cut short, overlapping inputs, stale expectations (see conformance/report/model.py
for what the model then says)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from conformance.data.expectations import load_expectations
from conformance.data.loader import CaseLoadError
from conformance.data.parity import ParityFile
from conformance.report.builds import Build
from conformance.report.document import DroppedDoc, InputDoc, ProblemDoc, StaleDoc
from conformance.report.model import NO_DEVICE, Report, behavior_of, build_id
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
from conformance.results import ResultRecord, RunManifest, manifest_path
from conformance.versions import version_key


def _has_build(record: ResultRecord) -> bool:
    """Whether the record says which build it ran on (a case file's schema error does not)."""
    return record.fingerprint.torch_version is not None


def _date(s: Sourced) -> str:
    return s.record.fingerprint.date or ""


def merge(paths: Sequence[Path], *, expectations: Sequence[Path] = (), parity: ParityFile | None = None) -> Report:
    """Read and merge results files (or compat.json reports) into one report model.

    A results file's run manifest (beside it) adds what the run selected and whether it
    finished: an item it selected but has no record of becomes an `error` record here."""
    first: list[tuple[str, str]] = []
    loaded: list[Sourced] = []
    inputs: list[InputDoc] = []
    problems: list[ProblemDoc] = []
    runs: list[RunInfo] = []
    for path in paths:
        text = read_text(path)  # once: a compat.json.gz inflates to hundreds of MB
        records = read_results(path, first, text)
        if not records:
            raise ReportInputError(f"{path}:1: no records; a run that selects no item writes no results file (is "
                                   "this the wrong file, or a results file emptied by hand?)")
        inputs.append(InputDoc(path=str(path), records=len(records)))
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
    for b in builds:
        if len(b.harness_versions) > 1:  # its items were checked by different harnesses: say which
            problems.append(ProblemDoc(kind="mixed-harness", build=b.id, message=(
                f"{b.label}: records of {len(b.harness_versions)} harness versions ({', '.join(b.harness_versions)}); "
                "an item's verdict is its harness's, so rerun the build with one version to compare items")))
    for run in report.cut_short:
        problems.append(ProblemDoc(kind="run-cut-short", build=run.build, message=(
            f"{run.source}: the run started {run.manifest.started} never finished (its process was killed or "
            "crashed); items it had not finished are error records")))
    for c in report.empty_cells():
        skipped = [s.record.reason for s in kept if s.build == c.build and (s.record.device or NO_DEVICE) == c.device
                   and behavior_of(s.record) == c.behavior and s.record.status == "skip"]
        why = f"all {len(skipped)} item(s) skipped, e.g. {skipped[0]!r}" if skipped else "no records at all"
        problems.append(ProblemDoc(kind="no-case-ran", build=c.build, message=(
            f"{c.behavior} on {report.build(c.build).label} / {c.device}: no case ran ({why})")))
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


def _attribute(path: Path, records: list[Sourced], problems: list[ProblemDoc]) -> list[Sourced]:
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
        problems.append(ProblemDoc(kind="unattributed", build="", message=(
            f"{path}: {orphans} record(s) without a build fingerprint and {len(file_builds)} builds in the file: "
            "shown under build 'unknown'")))
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
        if fp.corpus is not None:
            b.corpora.setdefault(fp.corpus.digest, fp.corpus.describe())
        if s.record.device and fp.device_name:
            b.device_names.setdefault(s.record.device, fp.device_name + (f" (capability {fp.capability})"
                                                                          if fp.capability else ""))
    for b in builds.values():
        for attr in ("pythons", "platforms", "harness_versions", "dates"):
            getattr(b, attr).sort()
        b.device_names = dict(sorted(b.device_names.items()))
    return sorted(builds.values(), key=lambda b: (version_key(b.id), b.id))


def _latest(records: list[Sourced]) -> tuple[list[Sourced], list[DroppedDoc]]:
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
            dropped.append(DroppedDoc(build=key[0], case_id=key[1], variant=key[2], dropped=old.source,
                                      kept=group[-1].source))
    kept.sort(key=lambda s: (version_key(s.build), s.build, s.record.case_id, s.record.variant))
    dropped.sort(key=lambda d: (d.build, d.case_id, d.variant, d.dropped))
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


def _stale(paths: Sequence[Path], records: Sequence[Sourced]) -> list[StaleDoc]:

    try:
        expectations = load_expectations(list(paths))
    except CaseLoadError as exc:
        raise ReportInputError(f"--expectations: the file does not load:\n{exc}") from None
    used = {k.source for s in records for k in s.record.known_failures}  # every entry that applied was used
    return [
        StaleDoc(source=e.source, case=e.entry.case, reason=e.entry.reason, link=e.entry.link)
        for e in expectations
        if not any(_same_source(e.source, u) for u in used)
    ]
