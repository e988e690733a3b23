"""One item's status from what its run found: pass, fail, or, where reviewed known failures match the
build, xfail (every mismatch is covered, each by exactly one of them) or xpass (a known failure that
applies covers nothing: it is to be retired or narrowed)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from conformance.core.cause import direction, innermost_as_raised, place_of, raised
from conformance.core.checks import C
from conformance.core.entry import entry_of
from conformance.core.mismatch import Mismatch
from conformance.data.expectations import BuildFacts, condition_matches
from conformance.results import DIVERGING, KnownFailureRef, ProbeRecord, ProbeResult, Status
from conformance.schema import Covers, Divergence, KnownFailure

STRICT_SOURCE = "--strict-internals"


@dataclass(frozen=True)
class Verdict:
    status: Status
    reason: str = ""
    known_failures: tuple[KnownFailureRef, ...] = ()
    covered_by: tuple[int | None, ...] = ()  # per mismatch: the index in known_failures of the entry covering it


def strict_mismatches(probes: ProbeRecord) -> list[Mismatch]:
    """Under --strict-internals, each diverging probe no reviewed divergence declares is a mismatch of its own."""
    return [C.INTERNALS_PROBE.mismatch(r.behavior, "conforms", "diverges",
                                               (r.diff.splitlines() or [""])[0][:300], source=STRICT_SOURCE)
            for r in probes.results if r.status == "diverges" and not r.declared]


def _entry(backend: str) -> str:
    return entry_of(backend)


def covered(c: Covers, m: Mismatch, backend: str) -> bool:
    """Whether one `covers` item of a known failure matches a mismatch, by its cause's parts."""
    if c.check != m.check or (c.place is not None and c.place != place_of(m)):
        return False
    if c.direction is not None and c.direction != direction(m):
        return False
    if c.entry is not None and c.entry != _entry(backend):
        return False
    if c.subject is not None and c.subject != m.subject:
        return False
    if c.exception is None and c.message is None:
        return True
    kind, message = innermost_as_raised(raised(m))
    return (c.exception is None or c.exception == kind) and (
        c.message is None or re.search(c.message, message) is not None)


def covers(kf: KnownFailure, m: Mismatch, backend: str) -> bool:
    return any(covered(c, m, backend) for c in kf.covers) and (
        kf.mismatch is None or re.search(kf.mismatch, m.message()) is not None)


def _ref(kf: KnownFailure, source: str) -> KnownFailureRef:
    return KnownFailureRef(reason=kf.reason, link=kf.link, kind=kf.kind, source=source, searched=kf.searched)


def decide(mismatches: Sequence[Mismatch], known: Sequence[tuple[KnownFailure, str]], facts: BuildFacts) -> Verdict:
    """Every known failure whose conditions match the build applies; each mismatch must be covered by
    exactly one of them for the item to be a known failure, and each of them must cover something."""
    applying = [(k, src) for k, src in known if condition_matches(k.when, facts)]
    refs = tuple(_ref(k, src) for k, src in applying)
    hits = [[i for i, (k, _) in enumerate(applying) if covers(k, m, facts.backend)] for m in mismatches]
    by = tuple(h[0] if len(h) == 1 else None for h in hits)
    doubly = next(((m, h) for m, h in zip(mismatches, hits, strict=True) if len(h) > 1), None)
    if doubly is not None:
        m, h = doubly
        return Verdict("error", f"case error: {m.message()} is covered by {len(h)} known failures ("
                       + ", ".join(applying[i][1] for i in h) + "); make their conditions or covers disjoint",
                       refs, by)
    uncovered = [m for m, i in zip(mismatches, by, strict=True) if i is None]
    if uncovered:
        more = f" (+{len(uncovered) - 1} more)" if len(uncovered) > 1 else ""
        beyond = ""
        if applying:
            beyond = " (no known failure covers it; declared for this build: " + ", ".join(
                f"{k.kind} {k.link} at {src}" for k, src in applying) + ")"
        return Verdict("fail", uncovered[0].message() + more + beyond, refs, by)
    idle = [i for i in range(len(applying)) if i not in by]
    if idle:
        k, src = applying[idle[0]]
        what = "passes although declared a known failure" if not mismatches else (
            "a declared known failure covers none of its differences")
        return Verdict("xpass", f"{what} ({k.link}); retire or narrow the expectation at {src}", refs, by)
    if not mismatches:
        return Verdict("pass")
    kinds = sorted({applying[i][0].kind for i in by if i is not None})
    first = applying[by[0]][0] if by[0] is not None else applying[0][0]
    return Verdict("xfail", f"known failure ({', '.join(kinds)}): {first.reason} ({first.link})", refs, by)


def declare(probes: ProbeRecord, declared: Sequence[tuple[Divergence, str]], facts: BuildFacts) -> ProbeRecord:
    """Each diverging probe result with the reviewed divergence that declares it, if one applies to the
    build (its behaviour, and its diff pattern where it has one)."""

    def mark(r: ProbeResult) -> ProbeResult:
        if r.status not in DIVERGING:
            return r
        for d, src in declared:
            if d.probe == r.behavior and condition_matches(d.when, facts) and (
                    d.diff is None or re.search(d.diff, r.diff) is not None):
                return replace(r, declared=f"{d.kind} {d.link} at {src}")
        return r

    return probes.model_copy(update={"results": tuple(mark(r) for r in probes.results)})

