"""How the report says things the same on every page: a cause, a link, a build's verdict."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from conformance.report.causes import Cause
from conformance.report.document import KindCountDoc, VerdictDoc
from conformance.report.kinds import KIND_WORDS, KNOWN_KINDS, NOT_BUGS


def corpora_words(per_build: dict[str, dict[str, str]]) -> str:
    """What a report says where its runs ran different corpora (digest -> description, per build), or ''."""
    digests = {d for corpora in per_build.values() for d in corpora}
    if len(digests) < 2:
        return ""
    ran = "; ".join(f"{build}: {', '.join(sorted(c[:12] for c in corpora))}" for build, corpora in per_build.items()
                    if corpora)
    return (f"the runs compared here ran {len(digests)} different corpora, so a difference between them may be a "
            f"difference of cases (corpus digests {ran})")


def cause_words(cause: Cause, code: Callable[[str], str] = str) -> str:
    """A cause in words, the same on every page: what goes wrong, where, which way, the exception
    (through `code`: compat.md shows it as code) and the entry point it was seen through."""
    words = cause.words()
    if cause.exception:
        words = words.removesuffix(f"({cause.exception})") + f"({code(cause.exception)})"
    return f"{words} ({cause.entry})"


_GITHUB = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/(?:(?:pull|issues)/(?P<number>\d+)|blob/(?P<ref>[^/]+)/(?P<path>.+))")


def link_label(url: str) -> str:
    """What a link links to, as its text: #177764 (a PyTorch PR or issue), owner/repo#12 (another
    repository's), utils.py@v2.13.0 (a file at a revision), the case id (a case file), else the
    address without its scheme."""
    try:
        parts = urlsplit(url)
    except ValueError:  # a record's link is text from an artifact: one urlsplit refuses is shown as it is
        return url
    if not parts.scheme and parts.path.endswith((".yaml", ".yml")):
        path = parts.path.removeprefix("./")
        return re.sub(r"\.ya?ml$", "", path.split("cases/", 1)[1] if "cases/" in path else path)
    found = _GITHUB.match(parts.path) if parts.netloc in ("github.com", "www.github.com") else None
    if found is not None:
        if found["number"]:
            repo = "" if found["repo"] == "pytorch/pytorch" else found["repo"]
            return f"{repo}#{found['number']}"
        return f"{found['path'].rsplit('/', 1)[-1]}@{found['ref']}" + (f"#{parts.fragment}" if parts.fragment else "")
    return (parts.netloc + parts.path).rstrip("/") or url


def verdict_line(v: VerdictDoc) -> str:
    """One build and device (Report.verdicts) in a sentence: what passes, what is known (bugs apart from
    differences by design or benign), what changed since the previous release, what needs a person."""
    text = f"passes {v.passed:,} of {v.items:,} items"
    if v.known:
        kinds: dict[str, KindCountDoc] = ({str(k): c for k, c in v.known_by_kind.items()}
                                          or {"bug": KindCountDoc(items=v.known, causes=v.known_causes)})

        def words(group: Iterable[str]) -> str:
            return ", ".join(f"{kinds[k].causes} {KIND_WORDS[k]} " + (
                f"({kinds[k].items:,} items)" if kinds[k].items else "(beside worse ones in the same items)")
                for k in group if k in kinds)

        fine = sum(kinds[k].items for k in NOT_BUGS if k in kinds)
        if fine:
            text += f", {v.passed + fine:,} with the {fine:,} that differ only by design or benignly"
        bugs = words(k for k in KNOWN_KINDS if k not in NOT_BUGS)
        others = words(k for k in KNOWN_KINDS if k in NOT_BUGS)
        text += "; known: " + "; ".join(p for p in (bugs, f"not bugs: {others}" if others else "") if p)
        text += f" ({len(v.links)} upstream link(s))"
    if v.previous:
        text += f"; since {v.previous}: {v.new} newly failing, {v.fixed} fixed"
    return text + (f"; {v.untriaged} UNTRIAGED" if v.untriaged else "; nothing untriaged")


def fenced(text: str, lang: str = "") -> str:
    """A Markdown code block of `text` as written: its fence longer than any run of backticks in it,
    so that nothing in a record, a program or a captured output can close the block early and be
    read as Markdown or HTML."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


_SPAN = re.compile(r"(`+).+?\1")


def _prose(text: str) -> str:
    return text.replace("\\", "\\\\").replace("<", "\\<")  # a backslash first: `\\<tag>` must not unescape it


def inert(markdown: str) -> str:
    """Markdown whose prose holds no HTML: a `<` outside code blocks and code spans is escaped (`\\<`),
    so that a tag in a record's text (a reason, a summary, a version) reads as itself and never
    becomes markup on the page that renders the draft. Code is shown as written already."""
    out, fence = [], ""
    for line in markdown.split("\n"):
        opening = re.match(r"^(`{3,})", line)
        if fence:
            fence = "" if line.strip() == fence else fence
        elif opening:
            fence = opening.group(1)
        else:
            pieces, last = [], 0
            for span in _SPAN.finditer(line):
                pieces += [_prose(line[last:span.start()]), span.group(0)]
                last = span.end()
            out.append("".join(pieces) + _prose(line[last:]))
            continue
        out.append(line)
    return "\n".join(out)

