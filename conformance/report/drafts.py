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
from conformance.report.builds import in_release_order
from conformance.report.causes import Cause, causes_of, innermost_as_raised
from conformance.report.draft_output import Captured
from conformance.report.draft_output import key as output_key
from conformance.report.scripts import reproducer_text
from conformance.report.words import fenced, inert
from conformance.reproducer import VERDICT_LINE
from conformance.results import BROKEN

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from conformance.report.builds import Build
    from conformance.report.model import Report
    from conformance.report.read import Sourced
    from conformance.results import MismatchRecord

DRAFTS = "issue-drafts"
FILED = ("bug", "eager_bug")  # the kinds of known failure a draft is written for


def has_issue(link: str | None) -> bool:
    return bool(link) and "/issues/" in str(link)


def needs_draft(s: Sourced, m: MismatchRecord | None) -> bool:
    """Whether one difference of an item (its mismatch; None for an error with none) is something to
    file: it fails untriaged, or a known failure of a kind a draft is written for (compiled's bug or
    eager's) covers it, and no upstream issue describes it. A benign or by-design difference never is."""
    status = s.record.status
    if status not in BROKEN or s.record.reason.startswith("case error"):
        return False  # a case error is the case's own, nothing to file upstream
    known = s.record.known_of(m) if m is not None else s.record.known_failure
    if known is None:
        return status != "xfail"
    return known.kind in FILED and not has_issue(known.link)


@dataclass(frozen=True)
class Draft:
    case_id: str  # the representative item's case
    name: str  # file name under issue-drafts/
    text: str
    cause: str = ""
    program: str = ""  # the program as the draft shows it, to run as published
    torch_version: str = ""  # the build the draft is for (the newest that shows the cause)
    causes: tuple[str, ...] = ()  # every cause the bug shows (the first is the title's)
    known: bool = False  # a reviewed known failure covers it: a known bug to file (else an untriaged failure's)


def _file_name(key: str) -> str:
    """The cause's words, cut short, and a digest of the whole key: two causes that read alike for
    70 characters (the same check and place, exceptions apart) still get a file each."""
    words = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")[:70]
    return f"{words}_{hashlib.sha256(key.encode()).hexdigest()[:8]}.md"


def title(cause: Cause, backends: list[str]) -> str:
    """What goes wrong, under which API, in plain words; never cut."""
    api = cause.entry if cause.entry != "torch.compile" else f"torch.compile ({'/'.join(backends)})"
    where = cause.place.replace("an input's gradient", "a gradient").replace(", after writing through the outputs",
                                                                                  " (seen through an output)")
    return f"[{api}] {cause.effect(where)}"


def drafts(report: Report, outputs: Mapping[str, Captured] | None = None) -> list[Draft]:
    """One draft per cause failing on the newest build that ran the items showing it; `outputs`: what
    the drafts' programs printed where they were run (conformance/report/draft_output.py)."""
    builds = in_release_order(report.builds)
    order = {b.id: i for i, b in enumerate(builds)}
    newest_of: dict[str, str] = {}
    for s in report.records:
        if s.record.status != "skip" and order[s.build] >= order.get(newest_of.get(s.record.case_id, ""), -1):
            newest_of[s.record.case_id] = s.build
    # One draft per bug: the causes one known failure covers in one item (or the untriaged ones) are one
    # report, however many mismatches show it; the same set of causes in other programs is the same bug.
    # A bug of eager's is filed apart from compiled's: the one wrong is another.
    by_bug: dict[tuple[tuple[str, ...], bool], list[tuple[Sourced, list[tuple[Cause, MismatchRecord | None]]]]] = {}
    for s in report.records:
        if s.build != newest_of.get(s.record.case_id):
            continue
        per_entry: dict[int | None, list[tuple[Cause, MismatchRecord | None]]] = {}
        for cause, m in causes_of(s.record):
            if needs_draft(s, m):
                per_entry.setdefault(m.known if m is not None else None, []).append((cause, m))
        for entry, found in per_entry.items():
            known = s.record.known_failures[entry] if entry is not None else None
            group = (tuple(sorted({c.key() for c, _ in found})), known is not None and known.kind == "eager_bug")
            by_bug.setdefault(group, []).append((s, found))
    out = []
    for (keys, of_eager), shown in sorted(_same_bugs(by_bug).items(), key=lambda kv: kv[0]):
        shown.sort(key=lambda sf: (_length(report, sf[0]), sf[0].record.case_id, sf[0].record.variant))
        program = "\n".join(_program(report, shown[0][0]))
        version = report.build(shown[0][0].build).torch_version
        ran = (outputs or {}).get(output_key(program + "\n", version)) if program else None
        text = _text(report, shown, builds, program=program, ran=ran)
        name = _file_name(" + ".join(keys) + (" | eager's bug" if of_eager else ""))
        triaged = any(_known_links(s, m) for s, found in shown for _, m in found)
        out.append(Draft(shown[0][0].record.case_id, name, text, shown[0][1][0][0].key(),
                         program + "\n" if program else "", version, keys, triaged))
    return out


Shown = list[tuple["Sourced", list[tuple[Cause, "MismatchRecord | None"]]]]


def _same_bugs(by_bug: dict[tuple[tuple[str, ...], bool], Shown]) -> dict[tuple[tuple[str, ...], bool], Shown]:
    """Groups that are one bug seen in several ways: they share a cause and the upstream link of the known
    failure covering it (a case's entries for two modes or backends that show the bug through more or
    fewer checks), merged; the merged group's causes are all of theirs."""
    def links(shown: Shown) -> set[str]:
        return {k.link for s, f in shown for _, m in f if m is not None and (k := s.record.known_of(m)) is not None}

    groups = [(set(keys), eager, links(shown), list(shown)) for (keys, eager), shown in by_bug.items()]
    merged = True
    while merged:
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                a, b = groups[i], groups[j]
                if a[1] == b[1] and a[0] & b[0] and a[2] & b[2]:
                    groups[i] = (a[0] | b[0], a[1], a[2] | b[2], a[3] + b[3])
                    del groups[j]
                    merged = True
                    break
            if merged:
                break
    return {(tuple(sorted(keys)), eager): shown for keys, eager, _, shown in groups}


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


def _text(report: Report, shown: list[tuple[Sourced, list[tuple[Cause, MismatchRecord | None]]]],
          builds: Sequence[Build], *, program: str, ran: Captured | None) -> str:
    items = [s for s, _ in shown]
    head, found = shown[0]
    cause, m = found[0]
    record = head.record
    newest = report.build(head.build)
    backends = sorted({in_user_words(s.record.backend or "?") for s in items})
    kinds = {k.kind for s, f in shown for _, sm in f if (k := s.record.known_of(sm) if sm is not None else None)}
    eager_wrong = kinds == {"eager_bug"}  # the audit found eager wrong and compiled right
    heading = title(cause, backends) + (" (eager is the one that is wrong)" if eager_wrong else "")
    lines = [f"# {heading}", "", "### 🐛 Describe the bug", ""]
    if m is not None and eager_wrong:
        lines.append(f"Eager differs from compiled at {_place(m)}, and eager is the one that is wrong: {m.check} is "
                     f"{m.expected} in eager, {m.actual} compiled.")
    elif m is not None:
        lines.append(f"Compiled, the call differs from eager at {_place(m)}: {m.check} is {m.actual}, eager gives "
                     f"{m.expected}.")
    else:
        lines.append(f"The compiled call cannot run: {record.reason.splitlines()[0] if record.reason else '?'}")
    more = [f"- at {_place(om)}: {om.check} is {om.actual}, eager gives {om.expected}" for _, om in found[1:]
            if om is not None]
    if more:
        lines += ["", "The same bug shows too:", *more[:8], *(["- …"] if len(more) > 8 else [])]
    lines += ["", record.summary.strip()]
    if cause.exception:
        # as the build wrote it (the cause's key has its numbers and names normalised away)
        summary = record.reason.split(": ", 1)[-1] if m is None else (
            m.actual if m.actual != "no exception" else m.expected)
        kind, message = innermost_as_raised(summary)
        error = f"{kind}: {message.strip()}" if kind else cause.exception
        lines += ["", f"The innermost error: `{error}`."]
    seen = sorted({f"{in_user_words(s.record.backend or '?')} ({s.record.mode})" for s in items})
    lines += ["", f"Seen with {', '.join(seen)}" + (f", in {len({s.record.case_id for s in items})} programs"
                                                    if len({s.record.case_id for s in items}) > 1 else "") + "."]
    if program:
        lines += ["", fenced(program, "python"), ""]
        if ran is not None:
            status = f" (and exits with status {ran.exit_status})" if ran.exit_status else ""
            lines += [f"Run as it is on torch {ran.torch_version}, it prints{status}:", "", fenced(ran.output)]
        else:
            lines.append(f"(Not yet run as published on torch {newest.torch_version}: `torch-conformance report "
                         "--capture-drafts` runs it there and shows what it prints.)")
    lines += ["", "### Versions", "", *_versions(report, {c for _, f in shown for c, _ in f}, items, builds)]
    related = sorted({link for s, f in shown for _, sm in f for link in (*s.record.upstream, *_known_links(s, sm))})
    if related:
        lines += ["", "### Possibly related", "", *(f"- {link}" for link in related)]
    lines += _searched([(head, sm) for _, sm in found])  # the shown program's bug
    lines += ["", "---", f"Found by a conformance harness from `{record.case_file}`.", ""]
    return inert("\n".join(lines))


def _searched(shown: list[tuple[Sourced, MismatchRecord | None]]) -> list[str]:
    """How upstream was searched for an issue that describes this (from the reviewed known failures)."""
    done = {}
    for s, m in shown:
        known = s.record.known_of(m) if m is not None else s.record.known_failure
        if known is not None and known.searched is not None:
            done[(known.searched.queries, known.searched.nearest)] = known.searched
    if not done:
        return ["", "### Searched upstream", "", "Not yet searched for an existing issue."]
    out = ["", "### Searched upstream", ""]
    for found in done.values():
        out += [f"- Queries: {'; '.join(f'`{q}`' for q in found.queries)}",
                f"- Nearest: {found.nearest} (not this bug: {found.why_not})"]
    return out


def _known_links(s: Sourced, m: MismatchRecord | None) -> list[str]:
    known = s.record.known_of(m) if m is not None else s.record.known_failure
    return [known.link] if known is not None else []


def _place(m: object) -> str:
    call = getattr(m, "call", None)
    path = getattr(m, "path", "") or getattr(m, "where", "")
    phase = getattr(m, "phase", "")
    return (f"call {call}, " if call is not None else "") + (f"{phase}, " if phase else "") + path


def _versions(report: Report, causes: set[Cause], items: list[Sourced], builds: Sequence[Build]) -> list[str]:
    """Where this cause shows (not merely where its items fail: an item may fail otherwise elsewhere)."""
    cases = {(s.record.case_id, s.record.variant) for s in items}
    per_build: dict[str, set[str]] = {}
    for s in report.records:
        if (s.record.case_id, s.record.variant) in cases and s.record.status != "skip":
            shows = any(c in causes for c, _ in causes_of(s.record))
            per_build.setdefault(s.build, set()).add("shows" if shows else "clean")
    tested = [b for b in builds if b.id in per_build]
    fails = [b.torch_version for b in tested if "shows" in per_build[b.id]]
    passes = [b.torch_version for b in tested if "shows" not in per_build[b.id]]
    lines = [f"- Builds tested: {', '.join(b.torch_version for b in tested)}",
             f"- Shows this on: {', '.join(fails) or '—'}", f"- Not on: {', '.join(passes) or '—'}"]
    bad_since = None  # the first build of the failing run that reaches the newest
    for b in tested:
        bad_since = (bad_since or b) if "shows" in per_build[b.id] else None
    if bad_since is not None:
        before = [b for b in tested if b is not bad_since and tested.index(b) < tested.index(bad_since)]
        if before:
            lines.append(f"- Regressed in {bad_since.torch_version} ({before[-1].torch_version} does not show it)")
    devices = sorted({s.record.device or "?" for s in items})
    lines.append(f"- Device: {', '.join(devices)}; Python {', '.join(report.build(items[0].build).pythons) or '?'}")
    return lines
