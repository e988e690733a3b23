"""Upstream parity: which of PyTorch's own tests for the five changes run here, as which cases.

The mapping is data, `cases/UPSTREAM.yaml`: per upstream test file the revision read, and per test
either the case ids that check its scenario black-box, or why none does (`white_box`: nothing in it
compiles and calls a program; `not_portable`: it needs what a case cannot be). `validate`
checks every case id it names. Each mapped test also says what upstream's test itself asserts
(`expects`), and the report counts two things per build, never one in place of the other: whether
the cases conform to eager (`outcome`), and whether the build behaves as upstream's test asserts
(`asserted`, Note [As upstream asserts]).

Note [As upstream asserts]
~~~~~~~~~~~~~~~~~~~~~~~~~~
A mapped test holds on a build only where every part of its `expects` holds there: `eager` (every item
that ran passed), `runs` (nothing raised), `error <Type>` (compiled raised it), `count` (the cold pass
compiled that many graphs), `source` (the case's `generated:` assertions, checked on what the build
generated). One part that fails makes it `fails`. A part the build does not let us see (no generated
source logged, no compile counted) makes it `not observable`, never `holds`; a `source` part whose
case states no assertion yet makes it `not checked`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from conformance.core.checks import C
from conformance.core.entry import counts_graphs
from conformance.data.loader import load_model
from conformance.results import FAILING
from conformance.results import HOLDS as CONTRACT_HOLDS

if TYPE_CHECKING:
    from conformance.results import ResultRecord

PARITY_FILE = "UPSTREAM.yaml"

_Text = Annotated[str, StringConstraints(min_length=1, max_length=400)]
_CaseId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+(/[a-z0-9_.-]+)+$", max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_ASSERTS = r"(?:eager|runs|source|error [A-Za-z_]\w*|count (?:==|<=) \d+|count per call)"
PER_CALL = "count per call"  # upstream reads its counter after particular calls: the cases' per-call `compiles:`
EXPECTS = rf"^{_ASSERTS}(?: and {_ASSERTS})*$"


class UpstreamTest(_Strict):
    file: Annotated[str, StringConstraints(pattern=r"^test/.+\.py$")]
    test: Annotated[str, StringConstraints(pattern=r"^([A-Za-z_]\w*\.)?test\w*$")]
    cases: tuple[_CaseId, ...] = Field((), description="cases that check this test's scenario black-box")
    white_box: _Text | None = Field(
        None, description="why it has no program to port (nothing in it compiles and calls one)")
    not_portable: _Text | None = Field(None, description="what a case cannot express for it")
    note: _Text | None = Field(None, description="how the case departs from the upstream scenario")
    expects: Annotated[str, StringConstraints(pattern=EXPECTS)] | None = Field(
        None, description="what the upstream test itself asserts, one or more of: eager (compiled equals eager), "
        "runs (the call does not raise), error <Type> (it raises that), count == N / count <= N (compiles over "
        "the pass), count per call (counts upstream reads after particular calls or per counter, which the cases "
        "state as per-call compiles:), source (generated text only), joined by ' and '; required where cases are "
        "given")

    @model_validator(mode="after")
    def _one_kind(self) -> UpstreamTest:
        given = [k for k in ("cases", "white_box", "not_portable") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"give exactly one of cases, white_box, not_portable (got {', '.join(given) or 'none'})")
        if self.cases and self.expects is None:
            raise ValueError("a mapped test says what upstream asserts: expects (eager, runs, error <Type>, count ...)")
        return self

    @property
    def behavioural(self) -> bool:
        return self.white_box is None


class ParityFile(_Strict):
    revisions: dict[Annotated[str, StringConstraints(pattern=r"^test/.+\.py$")], _Text] = Field(
        description="upstream test file -> the revision read (a commit, or `unknown` with where it was read)")
    tests: tuple[UpstreamTest, ...]

    @model_validator(mode="after")
    def _consistent(self) -> ParityFile:
        seen: Counter[tuple[str, str]] = Counter((t.file, t.test) for t in self.tests)
        twice = [f"{f}::{t}" for (f, t), n in seen.items() if n > 1]
        if twice:
            raise ValueError(f"tests listed twice: {', '.join(twice[:5])}")
        unread = sorted({t.file for t in self.tests} - set(self.revisions))
        if unread:
            raise ValueError(f"no revision given for {', '.join(unread)}")
        shared = self.shared()
        if shared:
            listed = "; ".join(f"{cid} ({', '.join(tests)})" for cid, tests in list(shared.items())[:5])
            raise ValueError(f"{len(shared)} case(s) stand in for several upstream tests: {listed}; "
                             "give each test a case of its own")
        return self

    def shared(self) -> dict[str, list[str]]:
        """Case ids named by entries of more than one upstream test function (a test inherited by
        another class, e.g. run again with the cache on, is one test function)."""
        named: dict[str, set[str]] = {}
        for t in self.tests:
            for cid in t.cases:
                named.setdefault(cid, set()).add(t.test.rsplit(".", 1)[-1])
        return {cid: sorted(tests) for cid, tests in sorted(named.items()) if len(tests) > 1}


@dataclass(frozen=True)
class Parity:
    mapping: ParityFile
    lines: Mapping[tuple[str | int, ...], int]
    path: str

    def dangling(self, case_ids: Iterable[str]) -> list[str]:
        """`path:line: field: message` for every case id the mapping names that no case file has."""
        known = set(case_ids)
        out = []
        for i, t in enumerate(self.mapping.tests):
            for j, cid in enumerate(t.cases):
                if cid not in known:
                    line = self.lines.get(("tests", i, "cases", j), self.lines.get(("tests", i), 1))
                    out.append(f"{self.path}:{line}: tests.{i}.cases.{j}: no case {cid!r} ({t.file}::{t.test})")
        return out


    def miscounted(self, counts: Mapping[str, tuple[str | None, bool]]) -> list[str]:
        """`path:line: field: message` for every `count == N` / `count <= N` upstream asserts that a mapped case
        states otherwise (`counts`: case id -> (`== N`, `<= N` or None; whether it states per-call counts)): the
        parity column reads each item's cold-pass graphs against upstream's N, so a case that compiles another
        number by design would read `fails` on a build that behaves as upstream asserts; and every `count per
        call` none of whose mapped cases states a per-call count, which the column would read as holding unseen."""
        out = []
        for i, t in enumerate(self.mapping.tests):
            parts = (t.expects or "").split(" and ")
            asserted = [p.removeprefix("count ") for p in parts if p.startswith("count ") and p != PER_CALL]
            line = self.lines.get(("tests", i, "expects"), self.lines.get(("tests", i), 1))
            for cid in t.cases:
                stated = counts.get(cid, (None, False))[0]
                if asserted and stated is not None and not _within(stated, asserted[0]):
                    out.append(f"{self.path}:{line}: tests.{i}.expects: count {asserted[0]} where {cid} states "
                               f"expect.compiles {stated} ({t.file}::{t.test}): the column would read its items "
                               "against the other count")
            known = [counts[cid][1] for cid in t.cases if cid in counts]
            if PER_CALL in parts and known and not any(known):
                out.append(f"{self.path}:{line}: tests.{i}.expects: {PER_CALL} where none of its cases states "
                           f"per-call compiles: ({t.file}::{t.test})")
        return out


def _within(stated: str, asserted: str) -> bool:
    """Whether every count a case's statement allows satisfies upstream's (`== 2` within `<= 2`; `<= 1` too)."""
    (s_op, s_n), (a_op, a_n) = stated.split(), asserted.split()
    return int(s_n) == int(a_n) and s_op == a_op if a_op == "==" else int(s_n) <= int(a_n)


def parity_path(cases_root: Path) -> Path:
    return cases_root / PARITY_FILE


def load_parity(path: Path) -> Parity:
    """The mapping, or CaseLoadError with `path:line: field: message` errors."""

    mapping, lines = load_model(path, ParityFile, "an upstream parity file")
    return Parity(mapping, lines, str(path))


Outcome = Literal["pass", "known", "fail", "not run"]  # a mapped test on one build, against eager
# the same, against what upstream asserts (Note [As upstream asserts])
Asserted = Literal["holds", "fails", "not observable", "not checked", "not run"]
ASSERTED: tuple[Asserted, ...] = get_args(Asserted)


def outcome(statuses: Iterable[str]) -> Outcome:
    """One mapped test on one build, from the statuses of its cases' items there: `pass` when every
    item that ran passed; `known` when the rest are known failures; `fail` when any failed or
    errored; `not run` when none ran (all skipped, or the cases are not in the results)."""
    ran = [s for s in statuses if s not in ("skip",)]
    if not ran:
        return "not run"
    if any(s in FAILING for s in ran):
        return "fail"
    return "known" if any(s == "xfail" for s in ran) else "pass"


HOLDS: Final = "holds"
FAILS: Final = "fails"
NOT_OBSERVABLE: Final = "not observable"
NOT_CHECKED: Final = "not checked"


def _source(ran: list[ResultRecord]) -> Asserted:
    """The case's assertions on generated source and graphs (conformance/probe/generated.py): each one
    holds where some item saw it hold and none saw it fail; an item that could not observe it (a backend
    that generates nothing) neither confirms nor refutes it."""
    seen: dict[int, set[str]] = {}
    for r in ran:
        for g in r.generated:
            seen.setdefault(g.index, set()).add(g.status)
    if not seen:
        return NOT_CHECKED  # the case states none of upstream's source assertions
    if any(FAILS in s for s in seen.values()):
        return FAILS
    return HOLDS if all(HOLDS in s for s in seen.values()) else NOT_OBSERVABLE


def _part(part: str, ran: list[ResultRecord]) -> Asserted:
    """Whether one thing upstream asserts holds over the items that ran."""
    raised = [m.actual for r in ran for m in r.mismatches if m.check == C.EXCEPTION.id and m.actual != "no exception"]
    raised += [said.split(": ", 1)[-1] for r in ran for said in r.raised]  # as the case declares it
    if part == "eager":
        return HOLDS if all(r.status in CONTRACT_HOLDS for r in ran) else FAILS
    if part == "runs":
        return HOLDS if not raised and all(r.status != "error" for r in ran) else FAILS
    if part.startswith("error "):
        kind = part.removeprefix("error ")
        return HOLDS if any(kind == "Exception" or kind in a.replace(":", " ").split() for a in raised) else FAILS
    if part.startswith("count "):
        return _count(part, ran)
    return _source(ran)


def _count(part: str, ran: list[ResultRecord]) -> Asserted:
    """A count upstream asserts: over the pass (`count == N`, `count <= N`: each item's cold-pass graphs), or
    after particular calls (`count per call`: the per-call counts the cases state, where the backend counts)."""
    if part == PER_CALL:
        counted = [r for r in ran if r.backend is not None and counts_graphs(r.backend)]
        if not counted:
            return NOT_OBSERVABLE
        return FAILS if any(m.check == C.GRAPHS_COMPILED.id and m.source.endswith(".compiles")
                            and not m.source.startswith("expect.") for r in counted for m in r.mismatches) else HOLDS
    op, n = part.split()[1:]
    counts = [c for r in ran if r.backend != "none"  # `none` compiles nothing: a control
              if (c := r.compile_counts.get("cold_graphs")) is not None]
    if not counts:
        return NOT_OBSERVABLE
    return HOLDS if all(c == int(n) if op == "==" else c <= int(n) for c in counts) else FAILS


def asserted(expects: str | None, records: Iterable[ResultRecord]) -> Asserted:
    """One mapped test on one build (Note [As upstream asserts]): `holds` where every part of what upstream
    asserts holds; `fails` where one does not; else `not observable` where a part cannot be seen on this
    build, `not checked` where the case does not state a part (generated source not ported); `not run`
    where no item ran."""
    ran = [r for r in records if r.status != "skip"]
    if not ran:
        return "not run"
    parts = {_part(p, ran) for p in (expects or "").split(" and ") if p}
    for status in (FAILS, NOT_OBSERVABLE, NOT_CHECKED):
        if status in parts:
            return status
    return HOLDS


class ParityRowDoc(BaseModel):
    """One upstream test file (or the total): its tests, and per build how the mapped ones fare."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # as the compat document's own models

    file: str
    revision: str
    tests: int
    behavioural: int
    mapped: int
    white_box: int
    not_portable: int
    builds: dict[str, dict[Outcome, int]] = Field(description="Conforming to eager, per build.")
    asserts: dict[str, dict[Asserted, int]] = Field(description="Behaving as upstream's test asserts, per build.")


def table(mapping: ParityFile, records: Mapping[str, Mapping[str, list[ResultRecord]]]) -> list[ParityRowDoc]:
    """Per upstream file (then the total): tests, behavioural tests, mapped, white-box, not portable; and per
    build, how the mapped tests fare (records[build][case_id] -> its items there; none: no build): `builds`,
    conforming to eager (`outcome`), and `asserts`, behaving as upstream's test asserts."""
    files = sorted({t.file for t in mapping.tests})
    return [*(_row(f, mapping.revisions[f], [t for t in mapping.tests if t.file == f], records) for f in files),
            _row("total", "", list(mapping.tests), records)]


def _row(file: str, revision: str, tests: list[UpstreamTest],
         records: Mapping[str, Mapping[str, list[ResultRecord]]]) -> ParityRowDoc:
    mapped = [t for t in tests if t.cases]
    return ParityRowDoc(
        file=file, revision=revision, tests=len(tests), behavioural=sum(t.behavioural for t in tests),
        mapped=len(mapped), white_box=sum(t.white_box is not None for t in tests),
        not_portable=sum(t.not_portable is not None for t in tests),
        builds={build: dict(Counter(outcome(r.status for cid in t.cases for r in by_case.get(cid, ())) for t in mapped))
                for build, by_case in records.items()},
        asserts={build: dict(Counter(asserted(t.expects, [r for cid in t.cases for r in by_case.get(cid, ())])
                                     for t in mapped))
                 for build, by_case in records.items()})
