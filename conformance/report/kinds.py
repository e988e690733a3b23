"""What a known failure's kind means for a build: the one place the report reads kinds.

A record's known failures cover its mismatches (conformance/run/status.py); an item counts under its
worst kind, a cause under the kind of the entry that covers it (Note [A difference is not a failure]).
"""

from __future__ import annotations

from typing import get_args

from conformance.report.causes import causes_of
from conformance.report.read import Sourced
from conformance.results import UNEXPLAINED, KnownFailureRef, ResultRecord
from conformance.schema.known import KnownFailureKind

KNOWN_KINDS: tuple[str, ...] = get_args(KnownFailureKind)
NOT_BUGS = frozenset({"benign", "by_design"})  # the build is right: never counted against it
# a known failure's kind in a verdict's words: only `bug` is counted as a known bug
KIND_WORDS = {"bug": "known bug(s)", "eager_bug": "bug(s) of eager's (compiled is right)",
              "benign": "benign difference(s)", "by_design": "difference(s) by design"}
KIND_SHORT = {"bug": "known bug", "eager_bug": "eager's bug", "benign": "benign", "by_design": "by design"}


def _known(record: ResultRecord) -> tuple[KnownFailureRef, ...]:
    """The known failures that cover the record's mismatches (every one that applied, where none is named)."""
    covering = tuple(dict.fromkeys(k for m in record.mismatches if (k := record.known_of(m)) is not None))
    return covering or record.known_failures


def known_kinds(record: ResultRecord) -> tuple[str, ...]:
    """The kinds of the record's known failures: the one place the report reads them."""
    return tuple(k.kind for k in _known(record))


def known_links(record: ResultRecord) -> tuple[str, ...]:
    """The upstream links of the record's known failures: the one place the report reads them."""
    return tuple(k.link for k in _known(record))


def known_kind(record: ResultRecord) -> str | None:
    """The kind an xfail counts as: its worst known failure's (a bug outweighs a difference by design),
    so that every known-failing item counts under exactly one kind; None when it is no xfail."""
    if record.status != "xfail":
        return None
    kinds = known_kinds(record)
    return next((k for k in KNOWN_KINDS if k in kinds), "bug")  # an xfail that names no kind: a bug


def counts_against(record: ResultRecord) -> bool:
    """Whether the item counts against its build: it fails untriaged, or as a known bug (the build's or
    eager's). A difference by design or benign never does (Note [A difference is not a failure])."""
    kind = known_kind(record)
    return record.status in UNEXPLAINED or (kind is not None and kind not in NOT_BUGS)


# Note [A difference is not a failure]
# A known failure of kind by_design or benign says the build is right where compiled differs from
# eager. It is counted apart everywhere (verdict, matrix, score, regressions), so that it never makes
# a build look worse than one without it: what counts against a build is `counts_against`.


def known_causes(s: Sourced) -> list[tuple[str, str]]:
    """(cause key, kind) per covered mismatch of an item (conformance.report.causes); an item with no
    located difference is its known failure's link."""
    out = []
    for cause, m in causes_of(s.record):
        known = s.record.known_of(m) if m is not None else s.record.known_failure
        if known is not None:
            out.append((cause.key(), str(known.kind)))
    if not out and s.record.known_failure is not None:
        out.append((s.record.known_failure.link, str(s.record.known_failure.kind)))
    return out
