"""One item's status from what its run found: pass, fail, or, where a reviewed known failure
matches the build, xfail (it failed as declared) or xpass (it passed although declared)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from conformance.core.checks import CHECKS
from conformance.core.mismatch import Mismatch
from conformance.data.expectations import BuildFacts, condition_matches
from conformance.results import KnownFailureRef, ProbeRecord
from conformance.schema import KnownFailure

STRICT_SOURCE = "--strict-internals"


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str = ""
    known_failure: KnownFailureRef | None = None


def strict_mismatches(probes: ProbeRecord) -> list[Mismatch]:
    """Under --strict-internals, each diverging probe is a mismatch of its own."""
    return [CHECKS["internals probe"].mismatch(r.behavior, "conforms", "diverges",
                                               (r.diff.splitlines() or [""])[0][:300], source=STRICT_SOURCE)
            for r in probes.results if r.status == "diverges"]


def decide(mismatches: Sequence[Mismatch], known: Sequence[tuple[KnownFailure, str]], facts: BuildFacts) -> Verdict:
    """The first known failure whose conditions match the build applies; it covers only the
    mismatches its `mismatch` pattern matches (all of them when it has none)."""
    hit = next(((k, src) for k, src in known if condition_matches(k.when, facts)), None)
    if hit is None:
        if not mismatches:
            return Verdict("pass")
        more = f" (+{len(mismatches) - 1} more)" if len(mismatches) > 1 else ""
        return Verdict("fail", mismatches[0].message() + more)
    kf, src = hit
    ref = KnownFailureRef(reason=kf.reason, link=kf.link, kind=kf.kind, source=src)
    if not mismatches:
        return Verdict("xpass", f"passes although declared a known failure ({kf.link}); retire the expectation in "
                       f"{src}", ref)
    other = [m for m in mismatches if kf.mismatch is not None and not re.search(kf.mismatch, m.message())]
    if other:
        return Verdict("fail", f"{other[0].message()} (beyond the known failure {kf.link}, which covers only "
                       f"mismatches matching {kf.mismatch!r})", ref)
    return Verdict("xfail", f"known failure: {kf.reason} ({kf.link})", ref)
