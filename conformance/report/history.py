"""A case's history across releases: its status on each build in release order, the first release
where it fails, the first where it is fixed, and each regression between consecutive releases;
and the same for each internals mechanism (absent -> conforms -> diverges)."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import Version

from conformance.report.kinds import counts_against
from conformance.results import BROKEN, HOLDS
from conformance.versions import version_key

if TYPE_CHECKING:
    from conformance.report.model import Build, Report



def release_key(build: Build) -> tuple[int, Version | str, str]:
    """Builds in release order (version_key), then by id."""
    return (*version_key(build.torch_version), build.id)


def in_release_order(builds: Sequence[Build]) -> list[Build]:
    return sorted(builds, key=release_key)


def environment_changes(builds: Sequence[Build]) -> list[str]:
    """Where consecutive builds (release order) differ in more than torch: the wheel's variant (the
    local tag: +cpu, +cu130), Python, platform, CUDA. A difference between two such builds, in a
    verdict or a bench ratio, may come from that too."""
    def variant(b: Build) -> str:
        return b.torch_version.partition("+")[2] or "no local tag"

    facts = (("wheel variant", variant), ("Python", lambda b: ", ".join(b.pythons) or "?"),
             ("platform", lambda b: ", ".join(b.platforms) or "?"), ("CUDA", lambda b: b.cuda or "none"))
    ordered = in_release_order(builds)
    out = []
    for before, after in itertools.pairwise(ordered):
        changed = [f"{name} {get(before)} → {get(after)}" for name, get in facts if get(before) != get(after)]
        if changed:
            out.append(f"{before.torch_version} → {after.torch_version}: {'; '.join(changed)}")
    return out


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


def history(report: Report) -> tuple[list[Build], list[Row]]:
    """Every case x variant of the report, with its status per build in release order; it fails where it
    counts against the build (a known failure by design or benign does not: Note [A difference is not a
    failure])."""
    return report.cached("history", lambda: _history(report))


def _history(report: Report) -> tuple[list[Build], list[Row]]:
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


def labels(builds: Sequence[Build]) -> dict[str, str]:
    """How a build is named in the history: its torch version."""
    return {b.id: b.torch_version for b in builds}


def regressed(report: Report) -> list[tuple[Row, str]]:
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


def regression_words(report: Report, row: Row) -> str:
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


def mechanism_history(report: Report) -> list[tuple[str, list[str]]]:
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
