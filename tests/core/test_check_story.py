"""A check owns its story: which ways a difference of it goes, the words an issue draft's title says
it in, and what a reproducer reads to observe it, declared on the check; the causes, the drafts and
the short reproducer look them up there and name no check by a string."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

from conformance.core.cause import Cause, directions
from conformance.core.checks import CHECKS, C, Check, by_id
from conformance.core.mismatch import WRITE_THROUGH
from conformance.core.ways import CountWays, RaiseWays
from conformance.reproducer import carried
from conformance.reproducer.short import CORE_FUNCTIONS, _plain

ROOT = Path(__file__).parents[2]
# the names an observe expression may read, per family (besides builtins, torch and the core's functions)
NAMES: dict[str, set[str]] = {"tensor": {"t"}, "leaf": {"t"}, "before": {"t", "v0", "s0"}, "inputs": {"t", "tensors"},
                              "peers": {"t", "tensors"}, "modes": {"modes"}, "outputs": {"out", "outs"},
                              "raised": {"raised"}, "written": {"written"}, "pass": {"graphs"}, "nothing": {"t"}}


@pytest.mark.parametrize("check", CHECKS.values(), ids=CHECKS)
def test_an_observe_reads_only_what_its_family_says(check: Check) -> None:
    if not check.observe:
        assert check.reads == "nothing"
        return
    tree = ast.parse(check.observe, mode="eval")
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound
    assert read - set(dir(builtins)) - set(CORE_FUNCTIONS) - {"torch"} <= NAMES[check.reads], check.id


@pytest.mark.parametrize("check", CHECKS.values(), ids=CHECKS)
def test_every_way_a_check_declares_has_its_words(check: Check) -> None:
    assert directions(check.id) == check.directions
    for way in (*check.directions, "differs"):
        title = Cause(check.id, "an output", "torch.compile", way, "RuntimeError: boom").effect("an output")
        assert title and "{" not in title, (check.id, way, title)


def test_a_direction_is_read_from_the_two_sides_as_a_mismatch_shows_them() -> None:
    assert C.EXCEPTION.direction("RuntimeError: x", "no exception") == RaiseWays.RAISES
    assert C.EXCEPTION.direction("no exception", "ValueError: y") == RaiseWays.DOES_NOT
    assert C.GRAPHS_COMPILED.direction("3", "at most 2") == CountWays.MORE
    assert C.GRAPHS_COMPILED.direction("?", "2") == CountWays.OTHER
    assert C.REQUIRES_GRAD.direction("True", "False") == "compiled True, eager False"
    assert C.REQUIRES_GRAD.direction("unreadable", "False") == "differs"
    assert C.GRAD.direction("None", "a tensor") == "compiled has None, eager a tensor"
    assert C.VIEW_OF.direction("None", "x") == "compiled not a view, eager a view of an input"
    assert C.VERSION_DELTA.direction(" 2 ", "1") == "more bumps"
    assert C.VALUES.direction("[1.0]", "[2.0]") == "differs"
    assert directions("error") == ("differs",) and by_id("error") is None  # an item's error names no check


def test_a_draft_title_says_what_the_check_declares() -> None:
    def effect(check: Check, way: str, exception: str = "") -> str:
        return Cause(check.id, "an output", "torch.compile", way, exception).effect("an output")

    assert effect(C.EXCEPTION, RaiseWays.DOES_NOT, "IndexError: x") == "does not raise the IndexError eager raises"
    assert effect(C.GRAPHS_COMPILED, CountWays.OTHER) == "compiles another number of graphs than the contract allows"
    assert effect(C.GRAD_MODE, "compiled False, eager True") == "grad mode is off after the call where eager's is on"
    assert effect(C.VIEW_OF, "compiled not a view, eager a view of an input") == (
        "an output is not a view where eager gives a view of an input")
    assert effect(C.VERSION_MOVED, "differs") == "an output has another _version moved than eager's"
    assert Cause("error", "the item", "torch.compile", "differs").effect("the item") == (
        "the item has another error than eager's")
    assert Cause(C.EXCEPTION.id, "the call", "torch.compile", RaiseWays.RAISES).words().startswith("raises at")


def test_the_write_through_opens_its_phase_and_the_pass_is_a_place() -> None:
    assert C.WRITE_THROUGH.phase == WRITE_THROUGH
    assert [c.id for c in CHECKS.values() if c.phase] == [C.WRITE_THROUGH.id]
    assert [c.id for c in CHECKS.values() if c.reads == "pass"] == [C.GRAPHS_COMPILED.id]


def test_a_carried_function_names_a_check_by_its_id() -> None:
    """carried.py names checks through the registry; the script it is pasted into has none."""
    source = _plain(carried.differences)
    assert f"check == {C.EXCEPTION.id!r}" in source and f"check == {C.GRAD.id!r}" in source
    assert "C." not in source


def test_no_code_outside_the_core_compares_a_check_with_a_string() -> None:
    def is_check(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id == "check") or (
            isinstance(node, ast.Attribute) and node.attr == "check")

    def literal(node: ast.AST) -> bool:
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(literal(e) for e in node.elts)
        return isinstance(node, ast.Constant) and isinstance(node.value, str)

    for path in sorted(ROOT.joinpath("conformance").rglob("*.py")):
        if path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                assert not (any(map(is_check, sides)) and any(map(literal, sides))), (
                    f"{path.relative_to(ROOT)}:{node.lineno}: a check compared with a string (name it: C.<CHECK>)")
