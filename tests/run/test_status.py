"""Known failures cover mismatches by their cause, each mismatch by exactly one entry; allowances."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest
from pydantic import ValidationError

from conformance.core.cause import cause, normalise
from conformance.core.checks import CHECKS, allowance_for
from conformance.core.mismatch import Mismatch
from conformance.data.expectations import BuildFacts
from conformance.results import ResultRecord
from conformance.run.status import decide
from conformance.schema import KnownFailure

FACTS = BuildFacts("2.13.0+cpu", "cpu", "aot_eager", "training")
GRAD = CHECKS[".grad"].mismatch("grad of la", "None", "a tensor")
GRAD = Mismatch(GRAD.check, GRAD.path, GRAD.expected, GRAD.actual, role="grad", subject="la")
VALUES = Mismatch("values", "out[0]", "[1.0]", "[2.0]", role="output", subject="out[0]")
RAISES = Mismatch("exception", "backward", "no exception",
                  "BackendCompilerFailed: backend='aot_eager' raised: (caused by RuntimeError: Function MulBackward0 "
                  "returned an invalid gradient at index 1)")


def entry(*covers: dict[str, Any], kind: str = "bug", **more: Any) -> KnownFailure:
    return KnownFailure.model_validate({"reason": "r", "link": "https://github.com/pytorch/pytorch/issues/1",
                                       "kind": kind, "evidence": "e", "covers": list(covers), **more})


def test_each_mismatch_is_covered_by_its_own_entry_and_the_item_is_xfail() -> None:
    bug, design = entry({"check": ".grad"}), entry({"check": "values"}, kind="by_design")
    v = decide([GRAD, VALUES], [(bug, "c.yaml:3"), (design, "c.yaml:9")], FACTS)
    assert v.status == "xfail" and v.covered_by == (0, 1)
    assert [k.kind for k in v.known_failures] == ["bug", "by_design"] and "(bug, by_design)" in v.reason


def test_a_mismatch_no_entry_covers_fails_the_item_and_says_so() -> None:
    v = decide([GRAD, VALUES], [(entry({"check": "values"}), "c.yaml:3")], FACTS)
    assert v.status == "fail" and v.covered_by == (None, 0)
    assert v.reason.startswith(GRAD.message())
    assert "no known failure covers it; declared for this build: bug" in v.reason


def test_a_mismatch_two_entries_cover_is_a_case_error_naming_both() -> None:
    both = [(entry({"check": ".grad"}), "c.yaml:3"), (entry({"check": ".grad", "place": "grad"}), "c.yaml:9")]
    v = decide([VALUES, GRAD, RAISES], both, FACTS)
    assert v.status == "error" and "covered by 2 known failures (c.yaml:3, c.yaml:9)" in v.reason
    assert v.covered_by == (None, None, None)  # every mismatch is still recorded


def test_an_applying_entry_that_covers_nothing_is_an_xpass_naming_it() -> None:
    v = decide([GRAD], [(entry({"check": ".grad"}), "c.yaml:3"), (entry({"check": "values"}), "c.yaml:9")], FACTS)
    assert v.status == "xpass" and "covers none of its differences" in v.reason and "at c.yaml:9" in v.reason
    assert decide([], [(entry({"check": "values"}), "c.yaml:3")], FACTS).status == "xpass"


def test_an_entry_whose_conditions_do_not_match_the_build_covers_nothing() -> None:
    other = entry({"check": ".grad"}, when={"torch": "<2.12"})
    assert decide([GRAD], [(other, "c.yaml:3")], FACTS).status == "fail"
    assert decide([], [(other, "c.yaml:3")], FACTS).status == "pass"


@pytest.mark.parametrize(("narrowing", "covered"), [
    ({"place": "grad"}, True), ({"place": "input"}, False),
    ({"direction": "compiled has a tensor, eager None"}, True),
    ({"direction": "compiled has None, eager a tensor"}, False),
    ({"subject": "la"}, True), ({"subject": "lb"}, False),
    ({"entry": "torch.compile"}, True), ({"entry": "aot_function"}, False),
    ({"mismatch": "grad of la"}, True), ({"mismatch": "grad of lb"}, False),
])
def test_each_part_of_a_cover_narrows_it(narrowing: dict[str, Any], covered: bool) -> None:
    regex = {"mismatch": narrowing.pop("mismatch")} if "mismatch" in narrowing else {}
    v = decide([GRAD], [(entry({"check": ".grad", **narrowing}, **regex), "c.yaml:3")], FACTS)
    assert v.status == ("xfail" if covered else "fail")


@pytest.mark.parametrize(("narrowing", "covered"), [
    ({"exception": "RuntimeError"}, True), ({"exception": "BackendCompilerFailed"}, False),
    ({"message": "invalid gradient at index"}, True), ({"message": "guessed its metadata"}, False),
])
def test_an_exception_is_covered_by_its_innermost_type_and_message(narrowing: dict[str, Any], covered: bool) -> None:
    v = decide([RAISES], [(entry({"check": "exception", "place": "backward", **narrowing}), "c.yaml:3")], FACTS)
    assert v.status == ("xfail" if covered else "fail")


@pytest.mark.parametrize(("cover", "says"), [
    ({"check": "gradient"}, "'gradient' is no check; write one of: "),
    ({"check": ".grad", "direction": "more"}, "'more' is no direction of check '.grad'; write one of: "
                                               "'compiled has a tensor, eager None'"),
    ({"check": "values", "exception": "RuntimeError"}, "only a mismatch of check 'exception' has an exception"),
    ({"check": "values", "place": "somewhere"}, "Input should be 'output', 'input', 'grad'"),
    ({"check": "exception", "message": "("}, "not a regular expression"),
])
def test_a_cover_is_checked_against_the_check_registry(cover: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError) as info:
        entry(cover)
    assert says in str(info.value)


def test_an_entry_without_covers_is_refused() -> None:
    with pytest.raises(ValidationError, match="covers"):
        entry()


def test_the_cause_of_an_invalid_gradient_does_not_depend_on_the_autograd_node() -> None:
    keys = {cause(Mismatch("exception", "backward", "no exception", f"RuntimeError: Function {node} returned an "
                           "invalid gradient at index 2 - got [3] but expected shape compatible with [4]"),
                  "torch.compile").key()
            for node in ("MulBackward0", "AddBackward0", "ZeroBackward0", "DivBackward0", "FillBackward0",
                         "CopyBackwards")}
    assert len(keys) == 1
    assert normalise("Function ZeroBackwardN returned x") == "Function ?Backward returned x"  # an older key, read again


def flat(actual: str, expected: str, check: str = "structure") -> Mismatch:
    return Mismatch(check, "outputs", expected, actual)


@pytest.mark.parametrize(("mismatch", "backend", "allowed"), [
    (flat("list(*, *)", "tuple(*, *)"), "aot_function", True),
    (flat("list(*, *)", "tuple(*, *)"), "aot_function-kiim", True),
    (flat("list(*, *)", "tuple(*, *)"), "aot_eager", False),
    (flat("list(*, tuple(*))", "tuple(*, tuple(*))"), "aot_function", False),  # not a flat spec: unflattened
    (flat("tuple(*, *)", "list(*, *)"), "aot_function", False),
    (flat("list(*)", "tuple(*, *)"), "aot_function", False),
    (flat("2", "1", "_version delta"), "aot_eager", True),
    (flat("1", "2", "_version delta"), "aot_eager", False),
    (flat("1", "0", "_version delta"), "aot_eager", False),  # eager does not bump: not an extra bump
])
def test_a_documented_allowance_accepts_exactly_its_difference(mismatch: Mismatch, backend: str, allowed: bool) -> None:
    assert (allowance_for(mismatch, backend) is not None) == allowed


def test_a_record_of_one_known_failure_reads_as_one_covering_every_mismatch() -> None:
    old = {"case_id": "c", "variant": "cpu-aot_eager-training", "status": "xfail",
           "mismatches": [{**asdict(GRAD), "where": GRAD.where}, {**asdict(VALUES), "where": VALUES.where}],
           "known_failure": {"reason": "r", "link": "https://x", "kind": "bug", "source": "c.yaml"}}
    record = ResultRecord.model_validate(old)
    assert [m.known for m in record.mismatches] == [0, 0] and record.known_failure is not None
    assert record.known_of(record.mismatches[1]) == record.known_failures[0]


@pytest.mark.parametrize(("first", "second", "overlap"), [
    ({}, {}, True),
    ({"when": {"torch": "<2.12"}}, {"when": {"torch": ">=2.12"}}, False),
    ({"when": {"torch": "<2.13"}}, {"when": {"torch": ">=2.12"}}, True),
    ({"when": {"torch": "==2.5.7"}}, {"when": {"torch": ">=2.5"}}, True),
    ({"when": {"device": ["cuda"]}}, {"when": {"device": ["cuda:0"]}}, True),
    ({"when": {"device": ["cuda"]}}, {"when": {"device": ["cpu"]}}, False),
    ({"when": {"mode": ["training"]}}, {"when": {"mode": ["inference"]}}, False),
    ({"when": {"backend": ["aot_function"]}}, {"when": {"mode": ["training"]}}, True),
    ({"covers": [{"check": ".grad", "subject": "la"}]}, {"covers": [{"check": ".grad", "subject": "lb"}]}, False),
    ({"covers": [{"check": ".grad", "subject": "la"}]}, {"covers": [{"check": ".grad", "place": "grad"}]}, True),
    ({"mismatch": "grad of la"}, {"mismatch": "grad of lb"}, False),
    ({"mismatch": "grad of la"}, {"mismatch": "grad of la"}, True),
])
def test_validate_refuses_two_entries_that_may_cover_one_mismatch(first: dict[str, Any], second: dict[str, Any],
                                                                   overlap: bool) -> None:
    from conformance.schema.known import overlapping_known_failures

    a = entry(*first.pop("covers", [{"check": ".grad"}]), **first)
    b = entry(*second.pop("covers", [{"check": ".grad"}]), **second)
    found = overlapping_known_failures((a, b))
    assert bool(found) == overlap
    if overlap:
        assert found[0][0] == ("known_failures", 1)
        assert "may cover the same mismatches as known_failures[0]" in found[0][1]


def test_a_corpus_entry_that_links_no_issue_must_say_how_upstream_was_searched() -> None:
    from conformance.schema.case import Case

    base = {"behavior": "mutation_epilogue", "summary": "s", "upstream": ["https://github.com/pytorch/pytorch/pull/9"],
            "inputs": {"x": {"tensor": {"shape": [2]}}},
            "program": "def f(x):\n    return x + 1\n"}
    pr = {"reason": "r", "link": "https://github.com/pytorch/pytorch/pull/1", "kind": "bug", "evidence": "e",
          "covers": [{"check": "values"}]}
    searched = {"queries": ["x plus one"], "nearest": "https://github.com/pytorch/pytorch/issues/2", "why_not": "w"}

    def problems(entry: dict[str, Any]) -> list[str]:
        return [m for _, m in Case.model_validate({**base, "known_failures": [entry]}).problems()]

    assert any("add `searched:`" in m for m in problems(pr))
    assert problems({**pr, "searched": searched}) == []
    assert problems({**pr, "link": "https://github.com/pytorch/pytorch/issues/1"}) == []
    assert problems({**pr, "kind": "by_design"}) == []  # a design choice links the change that made it
    assert any("add `searched:`" in m for m in problems({**pr, "kind": "by_design", "reason": "no upstream issue"}))
