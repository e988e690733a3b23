"""Upstream-ready issue drafts: one per case that fails (or is a known failure) on the newest build
that ran it, with no upstream issue to point at (no expectation, or one whose link is a pull request or a change rather
than an issue). A person can file it as is: title, the case (program and inputs), expected vs actual
per variant, the releases affected and the first bad one, and the reproducer."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.report.history import BAD, history, labels

if TYPE_CHECKING:
    from conformance.report.model import Report
    from conformance.report.read import Sourced

DRAFTS = "issue-drafts"


def has_issue(link: str | None) -> bool:
    return bool(link) and "/issues/" in str(link)


def needs_draft(s: Sourced) -> bool:
    """A failing item whose failure no upstream issue describes."""
    status = s.record.status
    if status in ("fail", "error"):
        return s.record.known_failure is None or not has_issue(s.record.known_failure.link)
    return status == "xfail" and s.record.known_failure is not None and not has_issue(s.record.known_failure.link)


@dataclass(frozen=True)
class Draft:
    case_id: str
    name: str  # file name under issue-drafts/
    text: str


def case_text(s: Sourced) -> str | None:
    """The case file the record was made from, only if it is a YAML file under the current folder
    and still has the hash the record carries (records are data from elsewhere: never read more)."""
    path = Path(s.record.case_file)
    if not s.record.case_file or path.is_absolute() or ".." in path.parts or path.suffix not in (".yaml", ".yml"):
        return None
    try:
        if not path.resolve().is_relative_to(Path.cwd().resolve()) or not path.is_file():
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != s.record.case_sha256:
        return None
    return data.decode("utf-8", errors="replace")


def drafts(report: Report) -> list[Draft]:
    builds, rows = history(report)
    order = {b.id: i for i, b in enumerate(builds)}
    label = labels(builds)
    first_bad: dict[str, str] = {}
    for r in rows:
        if r.first_failing is not None:
            old = first_bad.get(r.case_id)
            if old is None or order[r.first_failing] < order[old]:
                first_bad[r.case_id] = r.first_failing
    by_case: dict[str, list[Sourced]] = {}
    for s in report.records:
        if needs_draft(s):
            by_case.setdefault(s.record.case_id, []).append(s)
    out = []
    for case_id, items in sorted(by_case.items()):
        ran = {s.build for s in report.records if s.record.case_id == case_id and s.record.status != "skip"}
        bad_builds = sorted({s.build for s in report.records if s.record.case_id == case_id
                             and s.record.status in BAD}, key=order.__getitem__)
        if max(ran, key=order.__getitem__) not in bad_builds:
            continue  # fixed on the newest release that ran it: history, not an issue to file
        out.append(Draft(case_id, case_id.replace("/", "__") + ".md",
                         _text(report, case_id, items, [label[b] for b in bad_builds],
                               label.get(first_bad.get(case_id, ""), "—"))))
    return out


def _text(report: Report, case_id: str, items: list[Sourced], affected: list[str], first: str) -> str:
    head = items[0].record
    kf = next((s.record.known_failure for s in items if s.record.known_failure is not None), None)
    lines = [
        f"# [torch.compile] does not hold: {head.summary.rstrip('.')}",
        "",
        f"Found by torch-conformance (case `{case_id}`, contract `{head.behavior or '?'}`). "
        "No upstream issue describes it" + (f"; the nearest change: {kf.link} ({kf.reason})." if kf else "."),
        "",
        f"- Releases affected (of those run): {', '.join(affected) or '—'}",
        f"- First bad release: {first}",
        "",
        "## Expected (eager) vs actual (compiled)",
        "",
    ]
    seen = set()
    for s in sorted(items, key=lambda x: (x.record.variant, x.build)):
        first_mismatch = (s.record.mismatches[0].message() if s.record.mismatches
                          else (s.record.reason.splitlines() or ["(no message)"])[0])
        key = (s.record.variant, first_mismatch)
        if key in seen:
            continue
        seen.add(key)
        where = report.build(s.build).torch_version
        link = report.links.get(report.key(s))
        lines.append(f"- `{s.record.variant}` on {where}: {first_mismatch}"
                     + (f" ([reproducer](../{link}))" if link else ""))
    text = next((t for t in (case_text(s) for s in items) if t), None)
    lines += ["", "## The program, its inputs and what is compared", ""]
    if text:
        lines += ["```yaml", text.rstrip(), "```"]
    else:
        lines.append(f"The case file `{head.case_file}` is not here as it ran (see the reproducer).")
    lines += ["", "Each reproducer above needs only torch: exit 3 when compiled differs from eager.", ""]
    return "\n".join(lines)
