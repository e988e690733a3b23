"""A difference between compiled and eager, and the one sentence that says it."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any


def sentence(check: str, where: str, expected: str, actual: str, *, detail: str = "", source: str = "eager") -> str:
    """`<where>: <check> is <actual>, but <source> gives <expected> (<detail>)`: how every
    mismatch is worded, in records, reports, terminal output and reproducers."""
    text = f"{where}: {check} is {actual}, but {source} gives {expected}"
    return f"{text} ({detail})" if detail else text


WRITE_THROUGH = "after writing through the outputs"


@dataclass(frozen=True)
class Mismatch:
    """One difference, located structurally: `path` names what differs (`out[0]`, `input x`,
    `grad of w`, `outputs`, `call`, `backward`, `after the call`, `calls[1].after`, `cold pass over
    3 call(s)`), `phase` when it was seen (empty, or `WRITE_THROUGH`), `call` which call of the
    pass (1-based; None where the pass has one call or the check speaks of the whole pass) with
    `call_label` its words, `warm` whether in the warm rerun; `role`, `subject` and `inner` name
    the tensor a check read. `where` renders them as one phrase; nothing parses it back."""

    check: str
    path: str
    expected: str
    actual: str
    detail: str = ""
    source: str = "eager"
    phase: str = ""
    call: int | None = None
    call_label: str = ""
    warm: bool = False
    role: str = ""  # what `subject` is: output, input, grad (of an input), or empty (the call, the outputs...)
    subject: str = ""  # out[0]; an input tensor as tensors_of names it (x, net.fc1.weight); a grad leaf (x.leaf)
    inner: tuple[str, ...] = ()  # inner tensors of a subclass, outermost first

    @property
    def where(self) -> str:
        return (("warm rerun, " if self.warm else "") + (f"{self.call_label}: " if self.call_label else "")
                + (f"{self.phase}: " if self.phase else "") + self.path)

    def message(self) -> str:
        return sentence(self.check, self.where, self.expected, self.actual, detail=self.detail, source=self.source)

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "where": self.where}

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
