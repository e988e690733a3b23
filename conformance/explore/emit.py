"""What the explorer hands back per finding: a case file that `validate` accepts and that fails the
same way when run, a short standalone reproducer, and findings.md / findings.json."""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from conformance.explore.engine import Explorer, Finding, Ran
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
    data = finding.program.case(seed=explorer.seed, backends=(backend,), modes=(mode,))
    data["summary"] = f"Explorer finding ({finding.signature}): compiled differs from eager."
    name = _slug(finding.signature)
    case_path = folder / f"{name}.yaml"
    header = (f"# found by `torch-conformance explore` on torch {_torch_version()} ({platform.machine()})\n"
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


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def to_json(explorer: Explorer, findings: list[Finding]) -> dict[str, Any]:
    s = explorer.stats
    return {
        "torch": _torch_version(),
        "backends": list(explorer.backends),
        "modes": list(explorer.modes),
        "seed": explorer.seed,
        "seconds": round(s.seconds, 1),
        "programs": s.programs,
        "eager_rejected": s.rejected,
        "valid_share": round(s.valid_share, 3),
        "programs_per_hour": s.per_hour,
        "compile_share": round(s.compile_share, 3),
        "harness_share": round(1 - s.compile_share, 3) if s.seconds else 0.0,
        "flaky": sorted(set(s.flaky)),
        "findings": [
            {
                "signature": f.signature,
                "statements": len(f.program.statements),
                "kinds": list(f.program.kinds),
                "program": f.program.source(),
                "variant": f.record.variant,
                "mismatches": [m.message() for m in f.record.mismatches][:10],
                "reason": f.record.reason[:2000],
                "found_after_s": round(f.found_after, 1),
                "programs_before": f.programs_before,
                "case": _relative(f.case_path, explorer.out),
                "case_yaml": Path(f.case_path).read_text(encoding="utf-8") if f.case_path else "",
                "reproducer": _relative(f.reproducer_path, explorer.out),
                "reproduces": f.reproduces,
            }
            for f in findings
        ],
    }


def _relative(path: str, root: Path) -> str:
    """A path under the output folder as written there, so that the findings can move with it."""
    try:
        return Path(path).relative_to(root).as_posix() if path else ""
    except ValueError:
        return path


def to_markdown(report: dict[str, Any]) -> str:
    out = [
        "# Explorer findings",
        "",
        f"torch {report['torch']}, backends {', '.join(report['backends'])}, modes {', '.join(report['modes'])}, "
        f"seed {report['seed']}: {report['programs']} programs in {report['seconds']} s "
        f"({report['programs_per_hour']}/hour), {report['valid_share']:.0%} accepted by eager, "
        f"{len(report['findings'])} distinct finding(s), {len(report['flaky'])} flaky.",
        "",
    ]
    for i, f in enumerate(report["findings"], 1):
        out += [
            f"## {i}. {f['signature']}",
            "",
            f"Variant `{f['variant']}`; {f['statements']} statement(s) after shrinking; found after "
            f"{f['found_after_s']} s ({f['programs_before']} programs); the case file "
            f"{'reproduces it' if f['reproduces'] else 'does NOT reproduce it'}.",
            "",
            "```python",
            f["program"].rstrip(),
            "```",
            "",
            "Expected vs actual:",
            "",
            *[f"- {m}" for m in f["mismatches"]],
            *([f"- {f['reason'].splitlines()[0]}"] if not f["mismatches"] and f["reason"] else []),
            "",
            f"Case file (`{f['case']}`; reproducer: `{f['reproducer'] or 'none'}`):",
            "",
            "```yaml",
            f["case_yaml"].rstrip(),
            "```",
            "",
        ]
    if report["flaky"]:
        out += ["## Flaky (did not reproduce on a second run; not findings)", ""]
        out += [f"- {s}" for s in report["flaky"]] + [""]
    return "\n".join(out)


def write_findings(explorer: Explorer, findings: list[Finding]) -> dict[str, Any]:
    report = to_json(explorer, findings)
    write_atomic(explorer.out / "findings.json", json.dumps(report, indent=2) + "\n")
    write_atomic(explorer.out / "findings.md", to_markdown(report))
    return report
