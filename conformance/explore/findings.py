"""The findings report: what the workers saved, summed (Totals), findings.json as one document
(several jobs' merged), findings.md, both written whole or not at all, and the corpus's known
failures matched against the findings."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.explore.emit import finding_record, torch_version, with_sightings
from conformance.explore.engine import Explorer, Finding, signatures_of
from conformance.explore.layout import EXAMPLES, WriteFailed
from conformance.explore.releases import in_words
from conformance.files import write_atomic
from conformance.report.causes import read_again, same_cause
from conformance.report.read import ReportInputError, read_results
from conformance.report.words import fenced
from conformance.results import DIFFERED

if TYPE_CHECKING:
    from conformance.explore.findings_file import FindingsFile


@dataclass
class Totals:
    """What the workers saved, summed over their lives."""

    programs: int = 0
    eager_rejected: int = 0
    seconds_in_runs: float = 0.0
    seconds_compiling: float = 0.0
    seconds_in_torch: float = 0.0
    flaky: set[str] = field(default_factory=set)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    crashes: dict[str, dict[str, Any]] = field(default_factory=dict)
    worker_errors: list[str] = field(default_factory=list)
    interrupted: bool = False
    # the kept keys by their first four parts (all but the message), so that a finding's cause is compared
    # only with the keys that could be the same cause: merging is linear in the findings, not quadratic
    _by_head: dict[tuple[str, ...], list[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for key in self.findings:
            self._by_head.setdefault(tuple(key.split(" | ")[:4]), []).append(key)

    def _kept_key(self, sig: str) -> str:
        """The key this cause is already kept under (same_cause), else `sig` itself, now kept."""
        if sig in self.findings:
            return sig
        head = tuple(sig.split(" | ")[:4])
        group = self._by_head.setdefault(head, [])
        found = next((k for k in group if same_cause(k, sig)), None)
        if found is None:
            group.append(sig)
        return found or sig

    def absorb(self, state: dict[str, Any], root: Path, offset: float = 0.0) -> None:
        """A worker's saved state or a job's findings.json (paths in it relative to `root`)."""
        self.programs += state.get("programs", 0)
        self.eager_rejected += state.get("eager_rejected", 0)
        self.seconds_in_runs += state.get("seconds_in_runs", 0.0)
        self.seconds_compiling += state.get("seconds_compiling", 0.0)
        self.seconds_in_torch += state.get("seconds_in_torch", 0.0)
        self.flaky.update(state.get("flaky", ()))
        self.worker_errors += state.get("worker_errors", [])
        self.interrupted |= bool(state.get("interrupted"))
        for found in state.get("findings", ()):
            f = rooted({**found, "found_after_s": round(found["found_after_s"] + offset, 1)}, root)
            # a key an older run wrote groups as today's normalisation groups it
            sig = read_again(f["signature"])
            f["signature"] = self._kept_key(sig)
            old = self.findings.get(f["signature"])
            if old is not None:  # the same cause in two workers or shards: its sightings add up
                f["seen"] = f.get("seen", 1) + old.get("seen", 1)
                f["examples"] = list(dict.fromkeys([*old.get("examples", []), *f.get("examples", [])]))[:EXAMPLES]
            if old is None or (f["statements"], f["found_after_s"]) < (old["statements"], old["found_after_s"]):
                self.findings[f["signature"]] = f  # of two, the fewer statements, then the first found
            else:
                old.update(seen=f["seen"], examples=f["examples"])
        for crash in state.get("crashes", ()):
            if crash["signature"] in self.crashes:
                self.crashes[crash["signature"]]["count"] += crash.get("count", 1)
            else:
                self.crashes[crash["signature"]] = rooted(crash, root)


def rooted(f: dict[str, Any], root: Path) -> dict[str, Any]:
    """The finding's file paths made absolute (they are relative to the folder that wrote them); a
    path that leads out of that folder (a findings.json from elsewhere is data) is dropped."""
    out = dict(f)
    for key in ("case", "reproducer"):
        if f.get(key):
            path = (root / str(f[key])).resolve()
            out[key] = str(path) if path.is_relative_to(root.resolve()) else ""
    return out


def merge_into(out: Path, parts: Sequence[tuple[Path, FindingsFile]]) -> dict[str, Any]:
    """One report from several jobs' findings.json (shards of one exploration): findings by signature,
    counts summed, the wall time the longest job's."""
    totals = Totals()
    for root, doc in parts:
        totals.absorb(doc.model_dump(exclude_unset=True), root)  # a finding keeps the keys its file had
    first = parts[0][1]
    head = {"torch": first.torch, "backends": first.backends, "modes": first.modes, "seed": first.seed}
    seconds = max(doc.seconds for _, doc in parts)
    workers = sum(doc.parts for _, doc in parts)  # each ran this many at once
    return findings_report(out, head, totals, seconds, parts=workers, shard=(0, 1))


def _copied(f: dict[str, Any], out: Path) -> dict[str, Any]:
    """A finding's files copied to out/findings/ (from a shard's folder), paths relative to out."""
    f = dict(f)
    for key in ("case", "reproducer"):
        if not f.get(key):
            continue
        src = Path(f[key])
        dst = out / "findings" / src.name
        if src.exists() and src.resolve() != dst.resolve():
            try:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
            except OSError as exc:
                raise WriteFailed(dst, exc) from exc
        f[key] = dst.relative_to(out).as_posix() if dst.exists() else f[key]
    return f


def findings_report(out: Path, head: dict[str, Any], totals: Totals, seconds: float, *, parts: int,
            shard: tuple[int, int]) -> dict[str, Any]:
    t = totals
    seconds = round(seconds, 1)  # 0, or at least 0.1: the rates below stay finite
    return {
        **head,
        "shard": f"{shard[0] + 1}/{shard[1]}",
        "parts": parts,
        "seconds": seconds,
        "programs": t.programs,
        "eager_rejected": t.eager_rejected,
        "seconds_in_runs": round(t.seconds_in_runs, 1),
        "seconds_compiling": round(t.seconds_compiling, 1),
        "seconds_in_torch": round(t.seconds_in_torch, 1),
        "valid_share": round(1 - t.eager_rejected / max(t.programs, 1), 3),
        "programs_per_hour": round(t.programs / seconds * 3600) if seconds else 0,
        "compile_share": round(t.seconds_compiling / (seconds * parts), 3) if seconds else 0.0,  # parts ran at once
        "torch_share": round(t.seconds_in_torch / (seconds * parts), 3) if seconds else 0.0,
        "interrupted": t.interrupted,
        "flaky": sorted(t.flaky),
        "worker_errors": t.worker_errors,
        "findings": sorted((_copied(f, out) for f in t.findings.values()), key=lambda f: f["found_after_s"]),
        "crashes": sorted((_copied(c, out) for c in t.crashes.values()), key=lambda c: c["found_after_s"]),
    }


def to_json(explorer: Explorer, findings: list[Finding]) -> dict[str, Any]:
    """findings.json of an in-process exploration, in the shape the supervisor writes."""
    s = explorer.stats
    totals = Totals(programs=s.programs, eager_rejected=s.rejected, seconds_in_runs=s.seconds_in_runs,
                    seconds_compiling=s.seconds_compiling, seconds_in_torch=s.seconds_in_torch,
                    flaky=set(s.flaky), interrupted=explorer.interrupted,
                    findings={f.signature: rooted(with_sightings(finding_record(f, explorer.out), explorer),
                                                  explorer.out) for f in findings})
    head = {"torch": torch_version(), "backends": list(explorer.backends), "modes": list(explorer.modes),
            "seed": explorer.seed}
    return findings_report(explorer.out, head, totals, s.seconds, parts=1, shard=explorer.shard)


def _examples(f: dict[str, Any]) -> list[str]:
    """Other programs that showed the cause, as first seen (the shrunk one aside)."""
    others = [e for e in f.get("examples", []) if e.strip() != f["program"].strip()][:2]
    if not others:
        return []
    return ["Other programs that showed it (as first seen, not shrunk):", "",
            *[line for e in others for line in (fenced(e, "python"), "")]]


def to_markdown(report: dict[str, Any]) -> str:
    new = [f for f in report["findings"] if not f.get("known_by")]
    # with no corpus results read, nothing was compared: the report may not say the findings are new
    compared = (f"{len(new)} unlike any of the corpus's known failures" if report.get("known_from")
                else "not compared with the corpus's known failures: no corpus results were read")
    if any(f.get("releases") for f in report["findings"]):
        compared += f"; {sum(bool(f.get('history')) for f in report['findings'])} fixed on a newer build"
    out = [
        "# Explorer findings",
        "",
        f"torch {report['torch']}, backends {', '.join(report['backends'])}, modes {', '.join(report['modes'])}, "
        f"seed {report['seed']}: {report['programs']} programs in {report['seconds']} s "
        f"({report['programs_per_hour']}/hour), {report['valid_share']:.0%} accepted by eager, "
        f"{len(report['findings'])} distinct finding(s) ({compared}), "
        f"{len(report.get('crashes', []))} crash(es), {len(report['flaky'])} flaky.",
        "",
    ]
    if report.get("interrupted"):
        out += ["**Interrupted**: what was found until then is below; a finding not yet shrunk is as first seen.", ""]
    if report.get("known_from"):
        out += [f"Known failures read from `{report['known_from']}`.", ""]
    for i, f in enumerate(report["findings"], 1):
        known = (f"**Probably known**: the corpus's known failure(s) {', '.join(f'`{k}`' for k in f['known_by'])} "
                 "fail the same way on this build (the same cause: entry point, first check, kind of place, direction "
                 "and exception); "
                 "compare the programs before filing." if f.get("known_by") else "")
        out += [
            f"## {i}. {f['signature']}",
            "",
            f"Variant `{f['variant']}`; {f['statements']} statement(s) "
            f"{'after shrinking' if f.get('shrunk', True) else '(NOT shrunk: interrupted)'}; found after "
            f"{f['found_after_s']} s ({f['programs_before']} programs); the case file "
            f"{'reproduces it' if f['reproduces'] else 'does NOT reproduce it'}; {f.get('seen', 1)} program(s) "
            "showed this cause." + ("" if f.get("real_code") is None else " " + (
                f"Its statements call what torch's optimizers or modules call: "
                f"{', '.join(f'`{o}`' for o in f['real_code'])}." if f["real_code"] else
                "None of its statements' calls occur in torch's optimizers or modules.")),
            "",
            *([known, ""] if known else []),
            *([f"Builds: {in_words(f['releases'])}" + ("; **history**: fixed since" if f.get("history") else "")
               + ".", ""] if f.get("releases") else []),
            fenced(f["program"], "python"),
            "",
            "Expected vs actual:",
            "",
            *[f"- {m}" for m in f["mismatches"]],
            *([f"- {f['reason'].splitlines()[0]}"] if not f["mismatches"] and f["reason"] else []),
            "",
            *_examples(f),
            f"Case file (`{f['case']}`; reproducer: `{f['reproducer'] or 'none'}`):",
            "",
            fenced(f["case_yaml"], "yaml"),
            "",
        ]
    for c in report.get("crashes", []):
        out += [
            f"## {c['signature']} ({c['count']} program(s))",
            "",
            f"The worker process died running the program below; it was started again on the next round. "
            f"Rerun: {c['rerun']} ({'reproduces' if c['reproduces'] else 'does NOT reproduce'}). "
            f"Case file: `{c['case']}`.",
            "",
            fenced(c["program"], "python"),
            "",
        ]
    if report["flaky"]:
        out += ["## Flaky (did not reproduce on a second run; not findings)", ""]
        out += [f"- {s}" for s in report["flaky"]] + [""]
    if report.get("worker_errors"):
        out += ["## The explorer's own errors (a bug of ours: please report)", ""]
        out += [f"- {e}" for e in report["worker_errors"]] + [""]
    return "\n".join(out)


REPORT_FILES = ("findings.json", "findings.md")


def write_report(out: Path, report: dict[str, Any]) -> None:
    """findings.json and findings.md, each whole or not at all (a temporary file, then os.replace);
    WriteFailed names the one the disk did not take."""
    texts = dict(zip(REPORT_FILES, (json.dumps(report, indent=2, allow_nan=False) + "\n", to_markdown(report)),
                     strict=True))
    for name, text in texts.items():
        try:
            write_atomic(out / name, text)
        except OSError as exc:
            raise WriteFailed(out / name, exc) from exc


def discard_report(out: Path) -> None:
    """After a failed write, neither file is left: an earlier run's (or half of this one's pair)
    would read as this run's report. What the workers saved stays under shards/."""
    for name in REPORT_FILES:
        with contextlib.suppress(OSError):
            (out / name).unlink(missing_ok=True)


def write_findings(explorer: Explorer, findings: list[Finding]) -> dict[str, Any]:
    report = to_json(explorer, findings)
    write_report(explorer.out, report)
    return report


def mark_known(report: dict[str, Any], known: Path) -> list[str]:
    """Each finding that a known failure of the corpus shows the same way on this build (the same
    cause: conformance.report.causes) names those cases; warnings."""
    try:
        records = [s.record for s in read_results(known, [])]
    except ReportInputError as exc:
        return [f"--known {known}: {exc}; findings not matched against known failures"]
    warnings = []
    builds = {r.fingerprint.torch_version for r in records if r.fingerprint.torch_version}
    if builds and report["torch"] not in builds:
        warnings.append(f"--known {known}: results of torch {', '.join(sorted(builds))}, not of this build "
                        f"({report['torch']}); matched all the same")
    by_where: dict[str, set[str]] = {}
    for r in records:
        if r.status in DIFFERED and r.mismatches:
            for sig in signatures_of(r):
                by_where.setdefault(sig, set()).add(r.case_id)
    for f in report["findings"]:
        f["known_by"] = sorted(by_where.get(f.get("where", f["signature"]), ()))
    report["known_from"] = str(known)
    return warnings
