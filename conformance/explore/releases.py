"""Where each finding fails: its case file rerun on other builds of torch (`explore --builds`),
each from an environment of its own (the matrix's, .nox/_torch/<choice>, or any folder holding a
torch), through the same runner in a child process. A finding that passes on every build newer
than the one it was found on is history (fixed since), not news."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from conformance.data.loader import case_id_for
from conformance.explore.engine import signatures_of
from conformance.report.causes import same_cause
from conformance.results import UNEXPLAINED, ResultRecord
from conformance.versions import version_key

TORCH_ENVS = Path(".nox") / "_torch"  # where `nox -s matrix` keeps each build's environment
TIMEOUT = 3600.0  # seconds for one build to rerun every finding

FAILS, PASSES = "fails", "passes"


def torch_site(build: str) -> Path | None:
    """The folder to import torch from for `build`: a folder holding torch/, an environment whose
    lib/python*/site-packages holds it, or the matrix's environment of that name."""
    for root in (Path(build), TORCH_ENVS / build):
        if (root / "torch" / "__init__.py").is_file():
            return root
        sites = sorted(root.glob("lib/python*/site-packages"))
        for site in sites:
            if (site / "torch" / "__init__.py").is_file():
                return site
    return None


def check_builds(builds: list[str]) -> list[str]:
    """Usage errors: a build whose torch cannot be found."""
    return [f"--builds {b}: no torch there, nor in {TORCH_ENVS / b} (install it with "
            f"`nox -s matrix -- --torch {b}`, or give a folder holding torch)" for b in builds if torch_site(b) is None]


def rerun(cases: list[Path], root: Path, site: Path) -> tuple[str, list[Any]]:
    """Every case run with torch from `site`: (the build's torch version, the records), or
    (a line saying why not, [])."""

    with tempfile.TemporaryDirectory(prefix="explore-builds-") as tmp:
        results = Path(tmp) / "results.jsonl"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
        cmd = [sys.executable, "-m", "conformance", "run", "--cases", str(root), "--devices", "cpu",
               "--results", str(results), "-q", *map(str, cases)]
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)  # noqa: S603  # our own CLI
        except subprocess.TimeoutExpired:
            return f"timed out after {TIMEOUT:.0f} s", []
        if not results.is_file():
            return f"no results (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-300:]}", []
        records = [ResultRecord.model_validate_json(line) for line in results.read_text().splitlines() if line]
    version = next((r.fingerprint.torch_version for r in records if r.fingerprint.torch_version), None)
    return version or "an unknown build", records


def outcome(signature: str, records: list[Any]) -> str:
    """What one build did with a finding's case: fails (the same cause), passes, or what else."""
    if not records:
        return "not run"
    seen = [sig for r in records if r.status in UNEXPLAINED for sig in signatures_of(r)]
    if any(same_cause(signature, s) for s in seen):
        return FAILS
    if seen:
        return f"fails otherwise: {seen[0]}"
    if all(r.status == "pass" for r in records):
        return PASSES
    return "could not tell: " + ", ".join(sorted({r.status for r in records}))


def add_releases(report: dict[str, Any], out: Path, builds: list[str], say: Any = print) -> None:
    """Each finding's `releases` (build → outcome, the explored build included) and `history`."""

    findings = [f for f in report["findings"] if f.get("case")]
    cases = {f["signature"]: (out / f["case"]).resolve() for f in findings}
    ids = {sig: case_id_for(path, out) for sig, path in cases.items()}  # the explorer's case files set no id
    for build in builds:
        site = torch_site(build)
        if site is None:
            continue
        say(f"explore: rerunning {len(cases)} finding(s) with torch from {site}")
        version, records = rerun(list(cases.values()), out, site)
        by_id: dict[str, list[Any]] = {}
        for r in records:
            by_id.setdefault(r.case_id, []).append(r)
        for f in findings:
            got = by_id.get(ids[f["signature"]], [])
            f.setdefault("releases", {})[version if records else build] = (
                outcome(f["signature"], got) if records else f"not run: {version}")
    for f in findings:
        f.setdefault("releases", {}).setdefault(report["torch"], FAILS)  # a rerun on that build says itself
        f["releases"] = dict(sorted(f["releases"].items(), key=lambda kv: version_key(kv[0])))
        f["history"] = history(report["torch"], f["releases"])


def history(found_on: str, releases: dict[str, str]) -> bool:
    """Fixed since: some build newer than the one it was found on passes, and none fails."""
    newer = [outcome for build, outcome in releases.items() if version_key(build) > version_key(found_on)]
    return PASSES in newer and not any(o.startswith(FAILS) for o in newer)


def in_words(releases: dict[str, str]) -> str:
    """`fails on 2.13.0, 2.15.0; passes on 2.10.0; 2.11.0: not run`."""
    fails = [b for b, o in releases.items() if o == FAILS]
    passes = [b for b, o in releases.items() if o == PASSES]
    other = [f"{b}: {o}" for b, o in releases.items() if o not in (FAILS, PASSES)]
    parts = ([f"fails on {', '.join(fails)}"] if fails else []) + ([f"passes on {', '.join(passes)}"] if passes else [])
    return "; ".join(parts + other)
