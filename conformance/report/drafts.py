"""Issue drafts a maintainer files as they are: one per cause (conformance/report/causes.py) that fails on
the newest build that ran it and that no linked upstream issue describes, in the shape of PyTorch's
bug template: a short title in PyTorch's words, a description, the program (the short reproducer,
plain torch, runnable as is) with what it showed on the newest build, the versions as observed
(where it fails, where it passes, a regression only where an older build passes), the inner cause
of a backend failure, and the upstream pages the cases link as "possibly related". No project
internals in the body; one footer line names the case file."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.core.entry import in_user_words
from conformance.report.causes import Cause, cause_of, innermost_as_raised
from conformance.report.history import BAD, in_release_order
from conformance.report.scripts import reproducer_text
from conformance.reproducer import VERDICT_LINE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from conformance.report.model import Build, Report
    from conformance.report.read import Sourced

DRAFTS = "issue-drafts"
TITLE_MAX = 89  # under 90, as the issue template asks
PROGRAM_MAX = 60
FILED = ("bug", "eager_bug")  # the kinds of known failure a draft is written for


def has_issue(link: str | None) -> bool:
    return bool(link) and "/issues/" in str(link)


def needs_draft(s: Sourced) -> bool:
    """A failing item whose failure no upstream issue describes; a known failure only where it is a
    bug (compiled's or eager's): a benign or by-design difference is nothing to file."""
    status = s.record.status
    known = s.record.known_failure
    if status in ("fail", "error"):
        return known is None or not has_issue(known.link)
    return status == "xfail" and known is not None and known.kind in FILED and not has_issue(known.link)


@dataclass(frozen=True)
class Draft:
    case_id: str  # the representative item's case
    name: str  # file name under issue-drafts/
    text: str
    cause: str = ""


def _file_name(key: str) -> str:
    """The cause's words, cut short, and a digest of the whole key: two causes that read alike for
    70 characters (the same check and place, exceptions apart) still get a file each."""
    words = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")[:70]
    return f"{words}_{hashlib.sha256(key.encode()).hexdigest()[:8]}.md"


def _exception_title(cause: Cause) -> str:
    """Which side raised: the cause's exception is compiled's, or eager's where compiled did not raise."""
    kind = cause.exception.split(":", 1)[0] or "an error"
    if cause.direction == "compiled does not raise":
        return f"does not raise the {kind} eager raises"
    if cause.direction == "compiled raises otherwise":
        return f"raises {kind} where eager raises otherwise"
    return f"raises {kind} where eager runs"


def title(cause: Cause, backends: list[str]) -> str:
    """What goes wrong, under which API, in under 90 characters."""
    api = "aot_function" if cause.entry == "aot_function" else f"torch.compile ({'/'.join(backends)})"
    where = cause.place.replace("an input's gradient", "a gradient").replace(", after writing through the outputs",
                                                                                  " (seen through an output)")
    what = {
        "exception": _exception_title(cause),
        "values": f"wrong values in {where}",
        "storage contents": f"wrong values beside {where} in its storage",
        "graphs compiled": f"{cause.direction}",
        "_version moved": f"{where}'s version counter "
                          + ("stays where eager's moves" if cause.direction.endswith("eager True")
                             else "moves where eager's stays"),
        "_version delta": f"{where}'s version counter: {cause.direction} than eager",
        ".grad": f"gradient missing or extra: {cause.direction}",
    }.get(cause.check, f"{cause.check} of {where} differs from eager")
    text = f"[{api}] {what}"
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1].rstrip() + "…"


def drafts(report: Report) -> list[Draft]:
    """One draft per cause failing on the newest build that ran the items showing it."""
    builds = in_release_order(report.builds)
    order = {b.id: i for i, b in enumerate(builds)}
    newest_of: dict[str, str] = {}
    for s in report.records:
        if s.record.status != "skip" and order[s.build] >= order.get(newest_of.get(s.record.case_id, ""), -1):
            newest_of[s.record.case_id] = s.build
    by_cause: dict[Cause, list[Sourced]] = {}
    for s in report.records:
        if s.build != newest_of.get(s.record.case_id) or not needs_draft(s):
            continue
        cause = cause_of(s.record)
        if cause is not None:
            by_cause.setdefault(cause, []).append(s)
    out = []
    for cause, items in sorted(by_cause.items()):
        items.sort(key=lambda s: (_length(report, s), s.record.case_id, s.record.variant))
        text = _text(report, cause, items, builds)
        out.append(Draft(items[0].record.case_id, _file_name(cause.key()), text, cause.key()))
    return out


def _length(report: Report, s: Sourced) -> int:
    """The shortest reproducer represents its cause (one that is missing comes last)."""
    text = reproducer_text(s)
    return len(text.splitlines()) if text else 10_000


def _program(report: Report, s: Sourced) -> list[str]:
    """The reproducer's code without its docstring (which names the case file), or []."""
    text = reproducer_text(s)
    if not text:
        return []
    lines = text.splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if lines and lines[0].startswith('"""'):
        end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip().endswith('"""')), 0)
        lines = lines[end + 1:]
    if VERDICT_LINE in lines:  # what it prints is the draft's evidence, not an exit status
        lines = lines[: lines.index(VERDICT_LINE)]
        if not any("sys." in line for line in lines):
            lines = [line for line in lines if line != "import sys"]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return lines


def _text(report: Report, cause: Cause, items: list[Sourced], builds: Sequence[Build]) -> str:
    head = items[0]
    record = head.record
    newest = report.build(head.build)
    backends = sorted({in_user_words(s.record.backend or "?") for s in items})
    m = record.mismatches[0] if record.mismatches else None
    program = _program(report, head)
    lines = [f"# {title(cause, backends)}", "", "### 🐛 Describe the bug", "", record.summary.strip(), ""]
    if m is not None:
        lines.append(f"Compiled, the call differs from eager at {_place(m)}: {m.check} is {m.actual}, eager gives "
                     f"{m.expected}.")
    else:
        lines.append(f"The compiled call cannot run: {record.reason.splitlines()[0] if record.reason else '?'}")
    if cause.exception:
        # as the build wrote it (the cause's key has its numbers and names normalised away)
        summary = record.reason.split(": ", 1)[-1] if m is None else (
            m.actual if m.actual != "no exception" else m.expected)
        kind, message = innermost_as_raised(summary)
        error = f"{kind}: {message.strip()}" if kind else cause.exception
        lines += ["", f"The innermost error: `{error}`."]
    shown = sorted({f"{in_user_words(s.record.backend or '?')} ({s.record.mode})" for s in items})
    lines += ["", f"Seen with {', '.join(shown)}" + (f", in {len({s.record.case_id for s in items})} programs"
                                                    if len({s.record.case_id for s in items}) > 1 else "") + "."]
    if program and len(program) <= PROGRAM_MAX + 20:
        lines += ["", "```python", *program, "```", ""]
        if m is not None:
            lines += [f"On torch {newest.torch_version}:", "", "```", f"eager:    {m.expected}",
                      f"compiled: {m.actual}", "```"]
    lines += ["", "### Versions", "", *_versions(report, items, builds)]
    related = sorted({link for s in items for link in (*s.record.upstream,
                      *([s.record.known_failure.link] if s.record.known_failure else []))})
    if related:
        lines += ["", "### Possibly related", "", *(f"- {link}" for link in related)]
    lines += ["", "---", f"Found by a conformance harness from `{record.case_file}`.", ""]
    return "\n".join(lines)


def _place(m: object) -> str:
    call = getattr(m, "call", None)
    path = getattr(m, "path", "") or getattr(m, "where", "")
    phase = getattr(m, "phase", "")
    return (f"call {call}, " if call is not None else "") + (f"{phase}, " if phase else "") + path


def _versions(report: Report, items: list[Sourced], builds: Sequence[Build]) -> list[str]:
    cases = {(s.record.case_id, s.record.variant) for s in items}
    per_build: dict[str, set[str]] = {}
    for s in report.records:
        if (s.record.case_id, s.record.variant) in cases and s.record.status != "skip":
            per_build.setdefault(s.build, set()).add(s.record.status)
    tested = [b for b in builds if b.id in per_build]
    fails = [b.torch_version for b in tested if per_build[b.id] & BAD]
    passes = [b.torch_version for b in tested if not per_build[b.id] & BAD]
    lines = [f"- Builds tested: {', '.join(b.torch_version for b in tested)}",
             f"- Fails on: {', '.join(fails) or '—'}", f"- Passes on: {', '.join(passes) or '—'}"]
    bad_since = None  # the first build of the failing run that reaches the newest
    for b in tested:
        bad_since = (bad_since or b) if per_build[b.id] & BAD else None
    if bad_since is not None:
        before = [b for b in tested if b is not bad_since and tested.index(b) < tested.index(bad_since)]
        if before:
            lines.append(f"- Regressed in {bad_since.torch_version} ({before[-1].torch_version} passes)")
    devices = sorted({s.record.device or "?" for s in items})
    lines.append(f"- Device: {', '.join(devices)}; Python {', '.join(report.build(items[0].build).pythons) or '?'}")
    return lines
