"""What the explorer hands back per finding: a case file that `validate` accepts and that fails the
same way when run, a short standalone reproducer, and findings.md / findings.json."""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from conformance.explore.engine import Explorer, Finding, Ran
from conformance.explore.releases import in_words
from conformance.explore.supervise import WriteFailed
from conformance.files import write_atomic
from conformance.loader import load_case


def _slug(signature: str) -> str:
    words = "_".join(w for w in "".join(c if c.isalnum() else " " for c in signature.lower()).split()[:6])
    return f"{words}_{hashlib.sha1(signature.encode()).hexdigest()[:6]}"  # noqa: S324  # a file name


def emit(explorer: Explorer, finding: Finding) -> Finding:
    """Write the finding's case file and reproducer under findings/, and rerun the case file."""
    from conformance.reproducer.full import render_full
    from conformance.reproducer.short import render_short

    folder = explorer.out / "findings"
    folder.mkdir(parents=True, exist_ok=True)
    backend, mode = finding.record.backend or "aot_eager", finding.record.mode or "inference"
    data = finding.program.case(seed=explorer.seed, backends=(backend,), modes=(mode,), compiles=finding.compiles)
    data["summary"] = (f"Explorer finding ({finding.signature}): "
                       + ("compiled differs from eager." if finding.compiles is None else
                          f"the sweep compiles other than the {finding.compiles} graph(s) the reference predicts."))
    name = _slug(finding.signature)
    case_path = folder / f"{name}.yaml"
    header = (f"# found by `torch-conformance explore` on torch {torch_version()} ({platform.machine()})\n"
              f"# {finding.signature}\n")
    write_atomic(case_path, header + yaml.safe_dump(data, sort_keys=False, width=120))
    lc = load_case(case_path, folder)
    ran = explorer.records(lc)
    reproduces = finding.signature in Ran(finding.program, "", [r for _, r in ran]).discrepancies()
    script = ""
    for v, r in ran:
        if r.status in ("fail", "error"):
            script = render_short(lc, v, r) or render_full(lc, v, r)
            break
    repro_path = folder / f"{name}.py"
    if script:
        write_atomic(repro_path, script)
    return replace(finding, case_path=str(case_path), reproducer_path=str(repro_path) if script else "",
                   reproduces=reproduces)


def torch_version() -> str:
    import torch

    return str(torch.__version__)


def with_sightings(record: dict[str, Any], explorer: Explorer) -> dict[str, Any]:
    """The finding's record with how many programs showed its cause so far, and a few of them as first
    seen (unshrunk, each with other ingredients): what else leads to the same cause."""
    sig = record["signature"]
    return {**record, "seen": max(explorer.seen.get(sig, 1), 1),
            "examples": [p.source() for p in explorer.sightings.get(sig, [])]}


def finding_record(f: Finding, out: Path) -> dict[str, Any]:
    """A finding as findings.json holds it (paths relative to the explorer's output folder)."""
    return {
        "signature": f.signature,
        "statements": len(f.program.statements),
        "kinds": list(f.program.kinds),
        "program": f.program.source(),
        "variant": f.record.variant,
        "where": f.signature,
        "mismatches": [m.message() for m in f.record.mismatches][:10],
        "reason": f.record.reason[:2000],
        "found_after_s": round(f.found_after, 1),
        "programs_before": f.programs_before,
        "shrunk": f.shrunk,
        "case": _relative(f.case_path, out),
        "case_yaml": Path(f.case_path).read_text(encoding="utf-8") if f.case_path else "",
        "reproducer": _relative(f.reproducer_path, out),
        "reproduces": f.reproduces,
    }


def to_json(explorer: Explorer, findings: list[Finding]) -> dict[str, Any]:
    """findings.json of an in-process exploration, in the shape the supervisor writes."""
    from conformance.explore.supervise import Totals, findings_report, rooted

    s = explorer.stats
    totals = Totals(programs=s.programs, eager_rejected=s.rejected, seconds_in_runs=s.seconds_in_runs,
                    seconds_compiling=s.seconds_compiling, flaky=set(s.flaky), interrupted=explorer.interrupted,
                    findings={f.signature: rooted(with_sightings(finding_record(f, explorer.out), explorer),
                                                  explorer.out) for f in findings})
    head = {"torch": torch_version(), "backends": list(explorer.backends), "modes": list(explorer.modes),
            "seed": explorer.seed}
    return findings_report(explorer.out, head, totals, s.seconds, parts=1, shard=explorer.shard)


def _relative(path: str, root: Path) -> str:
    """A path under the output folder as written there, so that the findings can move with it."""
    try:
        return Path(path).relative_to(root).as_posix() if path else ""
    except ValueError:
        return path


def _examples(f: dict[str, Any]) -> list[str]:
    """Other programs that showed the cause, as first seen (the shrunk one aside)."""
    others = [e for e in f.get("examples", []) if e.strip() != f["program"].strip()][:2]
    if not others:
        return []
    return ["Other programs that showed it (as first seen, not shrunk):", "",
            *[line for e in others for line in ("```python", e.rstrip(), "```", "")]]


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
                 "fail the same way on this build (same entry point and mode, same first check at the same place); "
                 "compare the programs before filing." if f.get("known_by") else "")
        out += [
            f"## {i}. {f['signature']}",
            "",
            f"Variant `{f['variant']}`; {f['statements']} statement(s) "
            f"{'after shrinking' if f.get('shrunk', True) else '(NOT shrunk: interrupted)'}; found after "
            f"{f['found_after_s']} s ({f['programs_before']} programs); the case file "
            f"{'reproduces it' if f['reproduces'] else 'does NOT reproduce it'}; {f.get('seen', 1)} program(s) "
            "showed this cause.",
            "",
            *([known, ""] if known else []),
            *([f"Builds: {in_words(f['releases'])}" + ("; **history**: fixed since" if f.get("history") else "")
               + ".", ""] if f.get("releases") else []),
            "```python",
            f["program"].rstrip(),
            "```",
            "",
            "Expected vs actual:",
            "",
            *[f"- {m}" for m in f["mismatches"]],
            *([f"- {f['reason'].splitlines()[0]}"] if not f["mismatches"] and f["reason"] else []),
            "",
            *_examples(f),
            f"Case file (`{f['case']}`; reproducer: `{f['reproducer'] or 'none'}`):",
            "",
            "```yaml",
            f["case_yaml"].rstrip(),
            "```",
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
            "```python",
            c["program"].rstrip(),
            "```",
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
    cause: conformance.causes) names those cases; warnings."""
    from conformance.explore.engine import signature_of
    from conformance.report.read import ReportInputError, read_results

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
        if r.status in ("xfail", "fail") and r.mismatches:
            by_where.setdefault(signature_of(r), set()).add(r.case_id)
    for f in report["findings"]:
        f["known_by"] = sorted(by_where.get(f.get("where", f["signature"]), ()))
    report["known_from"] = str(known)
    return warnings
