"""A case's history across releases: its status on each build in release order, the first release
where it fails, the first where it is fixed, and each regression between consecutive releases;
and the same for each internals mechanism (absent -> conforms -> diverges)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from conformance.report.builds import Build, in_release_order, labels
from conformance.report.kinds import counts_against
from conformance.report.read import Sourced
from conformance.results import BROKEN, HOLDS

T = TypeVar("T")


class Reading(Protocol):
    """What the history reads of a report (conformance/report/model.py's Report)."""

    builds: list[Build]
    records: list[Sourced]

    @property
    def declared(self) -> list[str]: ...

    def cached(self, name: str, make: Callable[[], T]) -> T: ...






@dataclass(frozen=True)
class Row:
    case_id: str
    variant: str
    statuses: tuple[str | None, ...]  # per build in release order; None: not run there (or skipped)
    first_failing: str | None  # the build id where it first fails
    first_fixed: str | None  # the first build after a failing one where it passes again
    regressions: tuple[str, ...]  # build ids where it fails after passing on the release before
    fixes: tuple[str, ...] = ()  # build ids where it passes after failing on the release before

    @property
    def changes(self) -> bool:
        seen = {s in BROKEN for s in self.statuses if s is not None}
        return len(seen) > 1


def moves(bad: Sequence[bool | None], ids: Sequence[str]) -> tuple[str | None, str | None, tuple[str, ...],
                                                                    tuple[str, ...]]:
    """(first failing, first fixed after it, regressions, fixes) over whether the item fails on each
    build in release order (None: it did not run there)."""
    first_failing = first_fixed = None
    regressions, fixes = [], []
    previous: bool | None = None
    for failing, build in zip(bad, ids, strict=True):
        if failing is None:
            continue
        if failing:
            first_failing = first_failing or build
            if previous is False:
                regressions.append(build)
        else:
            if first_failing is not None and first_fixed is None:
                first_fixed = build
            if previous:
                fixes.append(build)
        previous = failing
    return first_failing, first_fixed, tuple(regressions), tuple(fixes)


def timeline(statuses: Sequence[str | None], ids: Sequence[str]) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(first failing, first fixed after it, regressions) over statuses in release order."""
    first_failing, first_fixed, regressions, _ = moves([None if s is None else s in BROKEN for s in statuses], ids)
    return first_failing, first_fixed, regressions


def history(report: Reading) -> tuple[list[Build], list[Row]]:
    """Every case x variant of the report, with its status per build in release order; it fails where it
    counts against the build (a known failure by design or benign does not: Note [A difference is not a
    failure])."""
    return report.cached("history", lambda: _history(report))


def _history(report: Reading) -> tuple[list[Build], list[Row]]:
    builds = in_release_order(report.builds)
    ids = [b.id for b in builds]
    by_item: dict[tuple[str, str], dict[str, tuple[str, bool]]] = {}
    for s in report.records:
        if s.record.status == "skip":
            continue
        by_item.setdefault((s.record.case_id, s.record.variant), {})[s.build] = (s.record.status,
                                                                                counts_against(s.record))
    rows = []
    for (case_id, variant), per_build in sorted(by_item.items()):
        statuses = tuple(per_build[b][0] if b in per_build else None for b in ids)
        bad = [per_build[b][1] if b in per_build else None for b in ids]
        rows.append(Row(case_id, variant, statuses, *moves(bad, ids)))
    return builds, rows


def regressed(report: Reading) -> list[tuple[Row, str]]:
    """Each item that fails on a release after passing on the one before, with those releases named."""
    if len(report.builds) < 2:
        return []
    builds, rows = history(report)
    label = labels(builds)
    return [(r, ", ".join(label[b] for b in r.regressions)) for r in rows if r.regressions]


# how a regression reads, by the item's status on the release where it regressed: a known failure
# there is not a new, untriaged failure
REGRESSION_WORDS = {"fail": "fails (untriaged)", "error": "errors (untriaged)",
                    "xfail": "fails as a declared known failure", "xpass": "passes against its known failure"}


def regression_words(report: Reading, row: Row) -> str:
    """What the item does on the releases where it regressed, in REGRESSION_WORDS."""
    statuses = {s.record.status for s in report.records
                if s.build in row.regressions and (s.record.case_id, s.record.variant) == (row.case_id, row.variant)}
    return " / ".join(sorted(REGRESSION_WORDS.get(st, st) for st in statuses)) or "fails"


FAILING_ONLY = "differs only where the contract fails"
DECLARED = "diverges only as declared"


def mechanism_word(counts: dict[str, int], failing: dict[str, int] | None = None) -> str:
    """One word for a behaviour's probe verdicts on one build: over the items whose contract
    check passes (`counts`); where the probe diverges only on items whose contract fails
    (`failing`), it says so apart, since there the build is wrong, not the reference behind."""
    failing = failing or {}
    for word, here in (("diverges", counts), (DECLARED, counts), ("unknown-form", counts),
                       (FAILING_ONLY, failing), ("conforms", counts), ("conforms", failing)):
        status = {DECLARED: "declared", FAILING_ONLY: "diverges"}.get(word, word)
        if here.get(status):
            return word
    if counts.get("not-modelled") or failing.get("not-modelled"):
        return "not-modelled"
    return "absent" if counts.get("absent") or failing.get("absent") else "-"


def mechanism_history(report: Reading) -> list[tuple[str, list[str]]]:
    """Per behaviour, its internals verdict on each build in release order (see mechanism_word)."""
    builds = in_release_order(report.builds)
    passing: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    failing: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for s in report.records:
        into = passing if s.record.status in HOLDS else failing
        for res in s.record.probes.results:
            into[(s.build, res.behavior)]["declared" if res.declared else res.status] += 1
    return [(beh, [mechanism_word(passing[(b.id, beh)], failing[(b.id, beh)]) for b in builds])
            for beh in report.declared]
