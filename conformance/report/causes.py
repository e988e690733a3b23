"""One root cause, however many items, variants, builds and explorer findings show it.

A cause is what differs, where and which way, apart from the program that shows it: the check
(its id), the kind of place (an output, an input, a gradient, the call, the backward, a caller
action, the pass; no names or indices), the entry point (torch.compile, or aot_function), the
direction (moved where eager did not, raises where eager does not, more graphs...), and for an
exception the innermost one's type and its message with addresses, numbers, shapes and quoted
names normalised. The corpus report and the explorer group by it; a case whose variants show two
causes shows two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance.core.entry import is_aot_function
from conformance.results import MismatchRecord, ResultRecord

# a summary may be cut before its closing parenthesis
_CAUSED_BY = re.compile(r"\(caused by (?P<type>[\w.]+): (?P<message>.*?)\)?\s*$", re.DOTALL)
_TYPE = re.compile(r"^(?P<type>[\w.]+): ?(?P<message>.*)$", re.DOTALL)
_NORMALISE = (
    # where in the case it was raised (the harness's ' at calls[0].after of cases/x.yaml:3'), cut or not
    (re.compile(r"\s+at (?:program|calls\[\d+\]\.(?:before|after)|classes) of \S*(?::\d+)?\s*$"), ""),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"torch\.Size\(\[[^\]]*\]\)"), "torch.Size([?])"),
    (re.compile(r"[(\[]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[)\]]"), "(?)"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "'?'"),
    (re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"), "N"),
    # the program's own names: an input's in parentheses, the autograd node that made a tensor, the guard
    # dynamo printed (with the program's line), a list of names
    (re.compile(r"\(\w+\)"), "(?)"),
    (re.compile(r"\b(output N of) [\w:]+"), r"\1 ?"),
    # autograd's saved tensor modified in place: which tensor (its type and shape, the node that made
    # it, if any) is the program's
    (re.compile(r"\[torch\.\w+ (?:\(\?\)|\[\])\](?:, which is output N of \?,)?"), "[?]"),
    (re.compile(r"(Guard fail reason:).*"), r"\1 ?"),
    (re.compile(r"\['\?'(?:, '\?')*\]"), "[?]"),
    (re.compile(r"\s+"), " "),
)


@dataclass(frozen=True, order=True)
class Cause:
    check: str
    place: str
    entry: str
    direction: str
    exception: str = ""

    def key(self) -> str:
        return " | ".join(p for p in (self.entry, self.check, self.place, self.direction, self.exception) if p)

    def words(self) -> str:
        """The cause as a phrase for a title: what goes wrong, where, which way."""
        thing = {"exception": "raises", "graphs compiled": "compiles"}.get(self.check, self.check)
        text = f"{thing} at {self.place}: {self.direction}"
        return text + (f" ({self.exception})" if self.exception else "")


def normalise(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else ""
    for pattern, repl in _NORMALISE:
        text = pattern.sub(repl, text)
    return text.strip()[:160]


def read_again(key: str) -> str:
    """A cause's key as today's normalisation writes it (a key written before a normalisation was
    added, e.g. in an older findings.json, still matches its cause)."""
    parts = key.split(" | ")
    if len(parts) == 5 and ": " in parts[4]:
        kind, _, message = parts[4].partition(": ")
        parts[4] = f"{kind}: {normalise(message)}"
    return " | ".join(parts)


def same_cause(a: str, b: str) -> bool:
    """Two keys of one cause, read with today's normalisation; an exception's message is cut to a
    length after normalising, so a key written before a normalisation was added is compared up to
    the shorter of the two."""
    a, b = read_again(a), read_again(b)
    if a == b:
        return True
    pa, pb = a.split(" | "), b.split(" | ")
    if len(pa) != 5 or len(pb) != 5 or pa[:4] != pb[:4]:
        return False
    n = min(len(pa[4]), len(pb[4]))
    return pa[4][:n] == pb[4][:n]


def innermost(summary: str) -> tuple[str, str]:
    """(type, normalised message) of the innermost exception in an exception summary (the
    harness's `Type: first line (caused by Type: first line)`)."""
    kind, message = innermost_as_raised(summary)
    return kind, normalise(message)


def innermost_as_raised(summary: str) -> tuple[str, str]:
    """(type, message) of the innermost exception, its message as the build wrote it."""
    found = _CAUSED_BY.search(summary)
    if found is None:
        found = _TYPE.match(summary.strip())
    if found is None:
        return "", summary
    return found["type"].rsplit(".", 1)[-1], found["message"]


def place(m: MismatchRecord) -> str:
    """The kind of place, without names or indices."""
    if m.role:
        base = {"output": "an output", "input": "an input", "grad": "an input's gradient"}[m.role]
        base += " (inner tensor)" if m.inner else ""
    elif m.path.startswith("calls["):
        base = f"a caller action ({m.path.rsplit('.', 1)[-1]} the call)"
    elif m.check == "graphs compiled":
        base = "the pass"
    else:
        base = {"call": "the call", "backward": "the backward", "outputs": "the outputs",
                "after the call": "the global modes after the call"}.get(m.path) or _legacy(m.where)
    return (f"{base}, after writing through the outputs" if m.phase else base) + (" (warm rerun)" if m.warm else "")


def _legacy(where: str) -> str:
    """The kind of place of a record written before mismatches were located (its `where` alone)."""
    for word, kind in (("grad of ", "an input's gradient"), ("out[", "an output"), ("input ", "an input"),
                       ("pass over", "the pass"), ("backward", "the backward")):
        if word in where:
            return kind
    return "the call"


def direction(m: MismatchRecord) -> str:  # noqa: PLR0911  # one return per kind of check
    """Which way compiled differs from eager (or from the case's expectation)."""
    actual, expected = m.actual.strip(), m.expected.strip()
    if m.check == "exception":
        if expected == "no exception":
            return "compiled raises where eager does not"
        return "compiled raises otherwise" if actual != "no exception" else "compiled does not raise"
    if m.check == "graphs compiled":
        try:
            return "more graphs than expected" if int(actual) > int(expected) else "fewer graphs than expected"
        except ValueError:
            return "another number of graphs"
    if m.check in ("_version moved", "storage swapped (set_)", "requires_grad", "is_leaf", "grad mode",
                   "inference mode", "exists"):
        return f"compiled {actual.split(' ', 1)[0]}, eager {expected.split(' ', 1)[0]}"
    if m.check == ".grad":
        return f"compiled has {actual}, eager {expected}"
    if m.check == "view of (_base)":
        return f"compiled {_view(actual)}, eager {_view(expected)}"
    if m.check == "_version delta":
        return "more bumps" if _int(actual) > _int(expected) else "fewer bumps"
    return "differs"


def _view(base: str) -> str:
    if base == "None":
        return "not a view"
    return "a view of an intermediate" if "intermediate" in base else "a view of an input"


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


def cause_of(record: ResultRecord) -> Cause | None:
    """The cause of a failing or known-failing record (its first mismatch), or None."""
    entry = "aot_function" if is_aot_function(record.backend or "") else "torch.compile"
    if not record.mismatches:
        if record.status != "error":
            return None
        kind, message = innermost(record.reason.split(": ", 1)[-1])
        return Cause("error", "the item", entry, "the item could not run", f"{kind}: {message}" if kind else message)
    m = record.mismatches[0]
    exception = ""
    if m.check == "exception":
        kind, message = innermost(m.actual if m.actual != "no exception" else m.expected)
        exception = f"{kind}: {message}" if kind else message
    return Cause(m.check, place(m), entry, direction(m), exception)
