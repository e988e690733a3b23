"""A difference between compiled and eager, and the one sentence that says it."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any


def sentence(check: str, where: str, expected: str, actual: str, *, detail: str = "", source: str = "eager") -> str:
    """`<where>: <check> is <actual>, but <source> gives <expected> (<detail>)`: how every
    mismatch is worded, in records, reports, terminal output and reproducers."""
    text = f"{where}: {check} is {actual}, but {source} gives {expected}"
    return f"{text} ({detail})" if detail else text


WRITE_THROUGH = "after writing through the outputs"


# A field's words and size limit, as the result record publishes them (conformance/results.py's MismatchRecord is
# this class validated: pydantic reads `description` and `max_length` from a dataclass field's metadata).
NAME, TEXT = 300, 200_000


def _about(words: str, limit: int | None = None) -> dict[str, object]:
    return {"description": words} | ({"max_length": limit} if limit else {})


@dataclass(frozen=True)
class Mismatch:
    """One difference, located structurally: `path` names what differs, `phase` when it was seen, `call` which
    call of the pass with `call_label` its words, `warm` whether in the warm rerun; `role`, `subject` and `inner`
    name the tensor a check read. `where` renders them as one phrase; nothing parses it back. The one declaration
    of a mismatch's fields: the result record (conformance/results.py) is this class, validated."""

    check: str = field(metadata=_about("The check's id (conformance.core.checks).", NAME))
    path: str = field(metadata=_about("What differs: out[0], input x, grad of w, outputs, call, backward, after the "
                                      "call, calls[1].after, cold pass over 3 call(s).", TEXT))
    expected: str = field(metadata=_about("What the source gives.", TEXT))
    actual: str = field(metadata=_about("What the compiled side gives.", TEXT))
    detail: str = field(default="", metadata=_about("The judge's words on how the two differ (assert_close's, the "
                                                    "keys gained or lost).", TEXT))
    source: str = field(default="eager", metadata=_about("What gave the expected value: eager, or the case's "
                                                         "expect.*.", NAME))
    phase: str = field(default="", metadata=_about("When it was seen: empty, or after writing through the outputs.",
                                                   NAME))
    call: int | None = field(default=None, metadata=_about("Which call of the pass (1-based), where the pass has "
                                                           "several and the check speaks of one."))
    call_label: str = field(default="", metadata=_about("That call in words: call 2 (x: tensor[7, 3]).", TEXT))
    warm: bool = field(default=False, metadata=_about("Seen in the warm rerun (expect.warm_rerun)."))
    role: str = field(default="", metadata=_about("What the subject is: output, input, grad (of an input leaf), or "
                                                  "empty (the call, the outputs...).", NAME))
    subject: str = field(default="", metadata=_about("The tensor read: out[0], an input tensor as tensors_of names "
                                                     "it (x, net.fc1.weight), a grad leaf (x.leaf).", TEXT))
    inner: tuple[str, ...] = field(default=(), metadata=_about("Inner tensors of a subclass subject, outermost "
                                                               "first.", 64))

    @property
    def where(self) -> str:
        return (("warm rerun, " if self.warm else "") + (f"{self.call_label}: " if self.call_label else "")
                + (f"{self.phase}: " if self.phase else "") + self.path)

    def message(self) -> str:
        return sentence(self.check, self.where, self.expected, self.actual, detail=self.detail, source=self.source)

    def located(self, *, call: int | None, call_label: str, warm: bool) -> Mismatch:
        """The same mismatch placed in its call and pass."""
        return dataclasses.replace(self, call=call, call_label=call_label, warm=warm)

    def seen(self, phase: str) -> Mismatch:
        return dataclasses.replace(self, phase=phase)


@dataclass(frozen=True)
class Tolerance:
    rtol: float | None = None
    atol: float | None = None


class CaseBroken(Exception):
    """The case itself is wrong (eager fails, a config key is unknown): an `error`, not a verdict.
    `line`: where in the case file, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class FeatureUnavailable(Exception):
    """The build lacks something a case needs (a subclass, an entry point): the item skips."""


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _exception_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def exception_summary(exc: BaseException | None) -> str:
    """The exception's type and first line, and its cause's when it wraps one (a backend's failure
    says only `backend=... raised:`); object addresses left out, so that runs compare equal."""
    if exc is None:
        return "no exception"
    text = f"{type(exc).__name__}: {_exception_line(exc)}"
    cause = exc.__cause__ or getattr(exc, "inner_exception", None)
    if isinstance(cause, BaseException) and cause is not exc:
        text += f" (caused by {type(cause).__name__}: {_exception_line(cause)})"
    return _ADDRESS.sub(" at 0x...", text)[:400]
