"""Which way a difference goes, read from the two sides as a mismatch shows them, and the words an issue draft's
title says it in; each check (conformance/core/checks.py) holds its ways and words."""

from __future__ import annotations

from dataclasses import dataclass


class Ways:
    """Which way compiled differs from eager (or from the case's expectation), read from the two sides as
    a mismatch shows them: `every` way there is, and `of` one difference. This one: it differs."""

    DIFFERS = "differs"
    every: tuple[str, ...] = (DIFFERS,)

    def of(self, actual: str, expected: str) -> str:
        return self.DIFFERS


class RaiseWays(Ways):
    """Which side raised (a side that did not shows 'no exception')."""

    RAISES, OTHERWISE, DOES_NOT = ("compiled raises where eager does not", "compiled raises otherwise",
                                   "compiled does not raise")
    every = (RAISES, OTHERWISE, DOES_NOT)

    def of(self, actual: str, expected: str) -> str:
        if expected == "no exception":
            return self.RAISES
        return self.OTHERWISE if actual != "no exception" else self.DOES_NOT


class CountWays(Ways):
    """More or fewer graphs than the case expects (exactly, or `at most`)."""

    MORE, FEWER, OTHER = "more graphs than expected", "fewer graphs than expected", "another number of graphs"
    every = (MORE, FEWER, OTHER)

    def of(self, actual: str, expected: str) -> str:
        try:
            return self.MORE if int(actual) > int(expected.removeprefix("at most ")) else self.FEWER
        except ValueError:
            return self.OTHER


class FlagWays(Ways):
    """A flag True on one side and False on the other (a side that could not read it: it differs)."""

    ON, OFF = "compiled True, eager False", "compiled False, eager True"
    every = (ON, OFF, Ways.DIFFERS)

    def of(self, actual: str, expected: str) -> str:
        a, e = actual.split(" ", 1)[0], expected.split(" ", 1)[0]
        return f"compiled {a}, eager {e}" if {a, e} == {"True", "False"} else self.DIFFERS


class PresenceWays(Ways):
    """Which side has a gradient ('a tensor' or 'None')."""

    HAS, LACKS = "compiled has a tensor, eager None", "compiled has None, eager a tensor"
    every = (HAS, LACKS)

    def of(self, actual: str, expected: str) -> str:
        return f"compiled has {actual}, eager {expected}"


_VIEW_KINDS = ("not a view", "a view of an intermediate", "a view of an input")


class ViewWays(Ways):
    """What each side's output is a view of: nothing, an intermediate, an input."""

    every = tuple(f"compiled {a}, eager {b}" for a in _VIEW_KINDS for b in _VIEW_KINDS)

    def of(self, actual: str, expected: str) -> str:
        return f"compiled {self.kind(actual)}, eager {self.kind(expected)}"

    @staticmethod
    def kind(base: str) -> str:
        if base == "None":
            return _VIEW_KINDS[0]
        return _VIEW_KINDS[1] if "intermediate" in base else _VIEW_KINDS[2]


class BumpWays(Ways):
    """A version counter that moved further or less far than eager's."""

    MORE, FEWER = "more bumps", "fewer bumps"
    every = (MORE, FEWER)

    def of(self, actual: str, expected: str) -> str:
        return self.MORE if self.bumps(actual) > self.bumps(expected) else self.FEWER

    @staticmethod
    def bumps(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            return 0


@dataclass(frozen=True)
class Words:
    """How an issue draft's title says a difference of the check: `title` at `{where}` (which may name `{check}`,
    `{direction}` and an exception's `{kind}`), or the title `by_direction` gives its direction; `verb`, what a
    cause's phrase says instead of the check's id (raises, compiles)."""

    title: str = "{where} has another {check} than eager's"
    by_direction: tuple[tuple[str, str], ...] = ()
    verb: str = ""

    def effect(self, check: str, where: str, direction: str, exception: str = "") -> str:
        template = dict(self.by_direction).get(direction, self.title)
        return template.format(where=where, check=check, direction=direction,
                               kind=exception.split(":", 1)[0] or "an error")


PLAIN_WAYS, PLAIN_WORDS = Ways(), Words()


def flag_words(on: str, off: str) -> Words:
    """A flag's title in each of its ways (compiled True, or compiled False), the plain title otherwise."""
    return Words(by_direction=((FlagWays.ON, on), (FlagWays.OFF, off)))


def present_words(what: str) -> Words:
    return flag_words(f"{what} where eager's does not", f"{what} in eager but not compiled")


MODE_WORDS = flag_words("{check} is on after the call where eager's is off",
                         "{check} is off after the call where eager's is on")
