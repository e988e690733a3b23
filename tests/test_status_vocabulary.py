"""One status vocabulary: the groupings of result statuses (failing, known, ran, compared, ...) are declared
once, beside `Status` in conformance/results.py; no other module spells a set of statuses of its own."""

from __future__ import annotations

import ast
from pathlib import Path

from conformance.results import (
    BROKEN,
    COMPARED,
    DIFFERED,
    FAILING,
    HOLDS,
    NOT_PASSING,
    RAN,
    STATUSES,
    UNEXPLAINED,
)

ROOT = Path(__file__).resolve().parents[1] / "conformance"


def spelled_sets(root: Path) -> list[str]:
    """`file:line` of every tuple, list or set literal of two or more statuses outside results.py."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "results.py" and path.parent == root:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if len(words) >= 2 and len(words) == len(node.elts) and set(words) <= set(STATUSES):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_no_module_spells_a_set_of_statuses_of_its_own() -> None:
    assert spelled_sets(ROOT) == []


def test_the_check_finds_a_set_spelled_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text('if s in ("fail", "error"):\n    pass\nx = ("fail", "other")\n')
    assert spelled_sets(tmp_path / "pkg") == ["pkg/m.py:1"]


def test_the_named_sets_nest_as_their_words_say() -> None:
    assert set(STATUSES) - {"skip"} == RAN and RAN - {"pass"} == NOT_PASSING
    assert UNEXPLAINED < FAILING < NOT_PASSING and UNEXPLAINED < BROKEN < NOT_PASSING
    assert DIFFERED < BROKEN and DIFFERED < COMPARED < RAN and HOLDS < COMPARED
    assert not HOLDS & BROKEN and HOLDS | BROKEN == RAN
