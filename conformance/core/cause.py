"""What a mismatch is, apart from the program that shows it: its cause.

A cause is what differs, where and which way: the check (its id), the kind of place (an output, an
input, a gradient, the call, the backward, a caller action, the pass; no names or indices), the
entry point (torch.compile, or aot_function), the direction (moved where eager did not, raises where
eager does not, more graphs...), and for an exception the innermost one's type and its message with
addresses, numbers, shapes, quoted names and autograd node names normalised.

Every mismatch has one cause. Known failures cover mismatches by it (conformance/run/status.py), the
report and the explorer group by it; nothing here parses a mismatch's sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from conformance.core.checks import by_id
from conformance.core.ways import PLAIN_WORDS, Ways, Words

# a summary may be cut before its closing parenthesis
_CAUSED_BY = re.compile(r"\(caused by (?P<type>[\w.]+): (?P<message>.*?)\)?\s*$", re.DOTALL)
_TYPE = re.compile(r"^(?P<type>[\w.]+): ?(?P<message>.*)$", re.DOTALL)
_NORMALISE = (
    # where in the case it was raised (the harness's ' at calls[0].after of cases/x.yaml:3', or first_call.after), cut
    # or not
    (re.compile(r"\s+at (?:program|(?:calls\[\d+\]|first_call)\.(?:before|after)|classes) of \S*(?::\d+)?\s*$"), ""),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"torch\.Size\(\[[^\]]*\]\)"), "torch.Size([?])"),
    # the autograd node that raised or made a tensor is the program's op (MulBackward0, CopyBackwards)
    (re.compile(r"\b[A-Z]\w*?Backwards?(?:\d+|N)?\b"), "?Backward"),
    (re.compile(r"[(\[]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[)\]]"), "(?)"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "'?'"),
    (re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"), "N"),
    # the program's own names: an input's in parentheses, the autograd node that made a tensor, the guard
    # dynamo printed (with the program's line), a list of names
    (re.compile(r"\(\w+\)"), "(?)"),
    (re.compile(r"\b(output N of) [\w:?]+"), r"\1 ?"),
    # autograd's saved tensor modified in place: which tensor (its type and shape, the node that made
    # it, if any) is the program's
    (re.compile(r"\[torch\.\w+ (?:\(\?\)|\[\])\](?:, which is output N of \?,)?"), "[?]"),
    (re.compile(r"(Guard fail reason:).*"), r"\1 ?"),
    (re.compile(r"\['\?'(?:, '\?')*\]"), "[?]"),
    (re.compile(r"\s+"), " "),
)

Place = Literal["output", "input", "grad", "call", "backward", "outputs", "modes", "caller action", "pass"]
PLACES: tuple[str, ...] = get_args(Place)
TORCH_COMPILE = "torch.compile"
ENTRIES = (TORCH_COMPILE, "aot_function", "aot_module_simplified", "aot_module", "make_fx")


class Located(Protocol):
    """What a cause is read from: a core Mismatch or a record's MismatchRecord."""

    @property
    def check(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def where(self) -> str: ...
    @property
    def phase(self) -> str: ...
    @property
    def warm(self) -> bool: ...
    @property
    def role(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def inner(self) -> tuple[str, ...]: ...
    @property
    def actual(self) -> str: ...
    @property
    def expected(self) -> str: ...


def normalise(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else ""
    for pattern, repl in _NORMALISE:
        text = pattern.sub(repl, text)
    return text.strip()[:160]


def innermost_as_raised(summary: str) -> tuple[str, str]:
    """(type, message) of the innermost exception in an exception summary (the harness's
    `Type: first line (caused by Type: first line)`), its message as the build wrote it."""
    found = _CAUSED_BY.search(summary)
    if found is None:
        found = _TYPE.match(summary.strip())
    if found is None:
        return "", summary
    return found["type"].rsplit(".", 1)[-1], found["message"]


def innermost(summary: str) -> tuple[str, str]:
    """(type, normalised message) of the innermost exception in an exception summary."""
    kind, message = innermost_as_raised(summary)
    return kind, normalise(message)


def raised(m: Located) -> str:
    """The exception summary of the side that raised (compiled's, else eager's), for an exception mismatch."""
    return m.actual if m.actual.strip() != "no exception" else m.expected


_PATHS: dict[str, Place] = {"call": "call", "backward": "backward", "outputs": "outputs", "after the call": "modes"}
_LEGACY: tuple[tuple[str, Place], ...] = (("grad of ", "grad"), ("out[", "output"), ("input ", "input"),
                                          ("pass over", "pass"), ("backward", "backward"))


def place_of(m: Located) -> Place:
    """The kind of place, without names or indices."""
    if m.role in ("output", "input", "grad"):
        return m.role  # type: ignore[return-value]  # narrowed by the membership test
    if m.path.startswith(("calls[", "first_call.")):
        return "caller action"
    if (declared := by_id(m.check)) is not None and declared.reads == "pass":
        return "pass"
    if m.path in _PATHS:
        return _PATHS[m.path]
    # a record written before mismatches were located has its `where` alone
    return next((kind for word, kind in _LEGACY if word in m.where), "call")


_PLACE_WORDS: dict[str, str] = {"output": "an output", "input": "an input", "grad": "an input's gradient",
                                "call": "the call", "backward": "the backward", "outputs": "the outputs",
                                "modes": "the global modes after the call", "pass": "the pass"}


def place_words(m: Located) -> str:
    """The kind of place in words, with what else locates it (inner tensor, caller action, phase, rerun)."""
    kind = place_of(m)
    if kind == "caller action":
        base = f"a caller action ({m.path.rsplit('.', 1)[-1]} the call)"
    else:
        base = _PLACE_WORDS[kind] + (" (inner tensor)" if m.inner and kind in ("output", "input", "grad") else "")
    return (f"{base}, after writing through the outputs" if m.phase else base) + (" (warm rerun)" if m.warm else "")


def directions(check: str) -> tuple[str, ...]:
    """Every direction `direction` can give for a mismatch of `check`."""
    declared = by_id(check)
    return declared.directions if declared is not None else Ways.every


def direction(m: Located) -> str:
    """Which way compiled differs from eager (or from the case's expectation)."""
    declared = by_id(m.check)
    return declared.direction(m.actual, m.expected) if declared is not None else Ways.DIFFERS


@dataclass(frozen=True, order=True)
class Cause:
    check: str
    place: str
    entry: str
    direction: str
    exception: str = ""

    def key(self) -> str:
        return " | ".join(p for p in (self.entry, self.check, self.place, self.direction, self.exception) if p)

    def _words(self) -> Words:
        declared = by_id(self.check)
        return declared.words if declared is not None else PLAIN_WORDS

    def words(self) -> str:
        """The cause as a phrase for a title: what goes wrong, where, which way."""
        text = f"{self._words().verb or self.check} at {self.place}: {self.direction}"
        return text + (f" ({self.exception})" if self.exception else "")

    def effect(self, where: str) -> str:
        """What goes wrong at `where` (the place in the reader's words), the way it goes: an issue draft's title."""
        return self._words().effect(self.check, where, self.direction, self.exception)


def cause(m: Located, entry: str) -> Cause:
    """The cause of one mismatch seen through `entry` (torch.compile or aot_function)."""
    exception = ""
    if (declared := by_id(m.check)) is not None and declared.reads == "raised":
        kind, message = innermost(raised(m))
        exception = f"{kind}: {message}" if kind else message
    return Cause(m.check, place_words(m), entry, direction(m), exception)
