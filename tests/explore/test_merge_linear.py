"""Merging findings compares a cause only with the kept keys that could be the same cause (issue: nothing lost,
round 4): keys that differ only by an older, shorter message still merge; others never do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.explore.findings import Totals


def _finding(sig: str, after: float) -> dict[str, Any]:
    return {"signature": sig, "found_after_s": after, "statements": 3, "seen": 1, "examples": [], "case": "",
            "reproducer": ""}


def test_a_cause_written_with_a_shorter_message_merges_and_others_stay_apart(tmp_path: Path) -> None:
    head = "values | output | compiled 1, eager 0 | aot_eager"
    totals = Totals()
    totals.absorb({"findings": [_finding(f"{head} | ValueError: a long message cut later", 1.0),
                                _finding(f"{head} | ValueError: a long message", 2.0),
                                _finding(f"{head} | ValueError: another message", 3.0),
                                _finding("values | output | compiled 2, eager 0 | aot_eager | ValueError: a long",
                                         4.0)]},
                  tmp_path)
    assert sorted(f["seen"] for f in totals.findings.values()) == [1, 1, 2]
    assert len(totals.findings) == 3


def test_findings_given_at_construction_are_found_by_their_cause(tmp_path: Path) -> None:
    sig = "values | output | compiled 1, eager 0 | aot_eager | ValueError: a long message cut later"
    totals = Totals(findings={sig: _finding(sig, 1.0)})
    totals.absorb({"findings": [_finding(sig[: sig.index(" cut")], 2.0)]}, tmp_path)
    assert list(totals.findings) == [sig] and totals.findings[sig]["seen"] == 2
