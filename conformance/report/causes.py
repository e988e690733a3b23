"""One root cause, however many items, variants, builds and explorer findings show it.

What a cause is (conformance/core/cause.py) is declared with the mismatch it is read from; here,
the causes of a record: one per mismatch, so that an item with a by-design difference and a bug
shows two causes, each with its own kind. The corpus report and the explorer group by them.
"""

from __future__ import annotations

from conformance.core.cause import (
    Cause,
    cause,
    direction,
    innermost,
    innermost_as_raised,
    normalise,
    place_words,
)
from conformance.core.entry import entry_of as label_entry
from conformance.results import MismatchRecord, ResultRecord

__all__ = ["Cause", "causes_of", "direction", "entry_of", "innermost", "innermost_as_raised", "normalise", "place",
           "read_again", "same_cause"]


def place(m: MismatchRecord) -> str:
    """The kind of place, without names or indices, in words."""
    return place_words(m)


def read_again(key: str) -> str:
    """A cause's key as today's normalisation writes it (a key written before a normalisation was
    added, e.g. in an older findings.json, still matches its cause)."""
    parts = key.split(" | ")
    if len(parts) == 5 and ": " in parts[4]:
        kind, _, message = parts[4].partition(": ")
        parts[4] = f"{kind}: {normalise(message)}"
    return " | ".join(parts)


def same_cause(a: str, b: str) -> bool:
    """Two keys of one cause, read with today's normalisation; an exception's message is cut to a
    length after normalising, so a key written before a normalisation was added is compared up to
    the shorter of the two."""
    a, b = read_again(a), read_again(b)
    if a == b:
        return True
    pa, pb = a.split(" | "), b.split(" | ")
    if len(pa) != 5 or len(pb) != 5 or pa[:4] != pb[:4]:
        return False
    n = min(len(pa[4]), len(pb[4]))
    return pa[4][:n] == pb[4][:n]


def entry_of(record: ResultRecord) -> str:
    return label_entry(record.backend or "")


def causes_of(record: ResultRecord) -> list[tuple[Cause, MismatchRecord | None]]:
    """One cause per mismatch of a record, in order, each with its mismatch (an error without a
    located difference has one cause, the error's, with None)."""
    entry = entry_of(record)
    if not record.mismatches:
        if record.status != "error":
            return []
        kind, message = innermost(record.reason.split(": ", 1)[-1])
        return [(Cause("error", "the item", entry, "the item could not run",
                       f"{kind}: {message}" if kind else message), None)]
    return [(cause(m, entry), m) for m in record.mismatches]


def cause_of(record: ResultRecord) -> Cause | None:
    """The cause of a record's first mismatch (or of its error), or None."""
    found = causes_of(record)
    return found[0][0] if found else None
