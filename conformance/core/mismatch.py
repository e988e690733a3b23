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


@dataclass(frozen=True)
class Mismatch:
    check: str
    where: str
    expected: str
    actual: str
    detail: str = ""
    source: str = "eager"

    def message(self) -> str:
        return sentence(self.check, self.where, self.expected, self.actual, detail=self.detail, source=self.source)

    def to_json(self) -> dict[str, str]:
        return dataclasses.asdict(self)

    def at(self, prefix: str) -> Mismatch:
        """The same mismatch with its `where` prefixed (by the call or the pass it happened in)."""
        return dataclasses.replace(self, where=prefix + self.where)


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
