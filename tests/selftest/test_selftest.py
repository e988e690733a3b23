"""The self-check: every fault is killed on the fast subset, and nothing leaks out of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.data.loader import load_all
from conformance.data.variants import Variant, variants_of
from conformance.probe.capture import capture_generated_sources
from conformance.run.runner import RunOptions, run_variant
from conformance.selftest import codegen
from conformance.selftest.cli import FAST_SUBSET
from conformance.selftest.codegen import codegen_exec_targets
from conformance.selftest.faults import FAULTS, INTERNAL_FAULTS
from conformance.selftest.run import run_selftest

REPO = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def fast_items() -> list[tuple[object, Variant]]:
    cases, errors = load_all([REPO / "cases"], REPO / "cases")
    assert not errors
    chosen = [c for c in cases if c.id in FAST_SUBSET]
    assert {c.id for c in chosen} == set(FAST_SUBSET), "a fast-subset case was renamed or removed"
    return [(lc, v) for lc in chosen
            for v in variants_of(lc.case, devices=["cpu"], backends=["aot_eager", "aot_function", "aot_function-kiim"])]


def test_fast_selftest_kills_every_reachable_fault_without_false_alarms(fast_items: list) -> None:  # type: ignore[type-arg]  # items are (LoadedCase, Variant)
    report = run_selftest(fast_items, stop_after=1)
    assert report.false_alarms == []
    assert report.gaps == [], report.to_markdown()
    status = {f.name: f.status for f in report.faults}
    assert set(status) == set(FAULTS)
    # the one branch 2.13 cannot reach through public entry points (see BRIEF): said, not hidden
    unreached = {f.name for f in report.unreached}
    assert unreached <= {"epilogue_set_as_copy"}
    assert "| epilogue_statement_dropped | internals |" in report.to_markdown()
    if not codegen_exec_targets():  # said, not passed: the generated-code faults have nothing to patch here
        pytest.skip("this build executes no generated wrapper code: its faults cannot be seeded")
    assert {n for n, s in status.items() if s == "killed"} >= set(FAULTS) - {"epilogue_set_as_copy"}


def test_nothing_leaks_into_a_normal_run_after_the_selftest(fast_items: list) -> None:  # type: ignore[type-arg]
    originals = [getattr(m, a) for m, a in codegen_exec_targets()]
    lc, variant = next((lc, v) for lc, v in fast_items
                       if lc.id == "mutation_epilogue/data_mutation_nonleaf" and v.mode == "training")
    extension = INTERNAL_FAULTS["epilogue_statement_dropped"].extension()
    assert run_variant(lc, variant, RunOptions(extensions=(extension,))).status == "fail"
    assert extension.hits == ["mutation_epilogue"]
    assert [getattr(m, a) for m, a in codegen_exec_targets()] == originals
    with capture_generated_sources() as cap:
        record = run_variant(lc, variant, RunOptions())
    assert record.status == "pass", record.reason
    assert any("copy_" in s for s in cap.sources("mutation_epilogue"))
    probe = record.probes.statuses()
    assert probe["mutation_epilogue"] == "conforms"


def test_internals_patch_is_undone_when_the_run_raises(fast_items: list) -> None:  # type: ignore[type-arg]
    targets = codegen_exec_targets()
    if not targets:
        pytest.skip("this build has no codegen exec helper")
    originals = [getattr(m, a) for m, a in targets]
    extension = INTERNAL_FAULTS["epilogue_slot_shifted"].extension()
    seen_inside: list[object] = []

    def run_and_fail() -> None:
        with extension.around_variant():
            seen_inside.extend(getattr(m, a) for m, a in targets)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_and_fail()
    assert seen_inside != originals
    assert [getattr(m, a) for m, a in targets] == originals


@pytest.mark.parametrize(("transform", "source", "expected"), [
    (codegen.drop_last_statement, "def f(o, u):\n    o[0].copy_(u[0])\n    o[1].copy_(u[1])\n",
     "def f(o, u):\n    o[0].copy_(u[0])"),
    (codegen.set_to_copy, "def f(o, u):\n    o[0].set_(u[0], 0, (2,), (1,))\n", "def f(o, u):\n    o[0].copy_(u[0])"),
    (codegen.shift_slot, "def f(orig_inputs, updated_inputs):\n    orig_inputs[0].copy_(updated_inputs[0])\n"
     "    orig_inputs[2].copy_(updated_inputs[1])\n",
     "def f(orig_inputs, updated_inputs):\n    orig_inputs[0].copy_(updated_inputs[1])\n"
     "    orig_inputs[2].copy_(updated_inputs[0])"),
    (codegen.drop_requires_grad_branch,
     "def f(o, u):\n    if o[0].requires_grad: o[0].detach().copy_(u[0])\n    else: o[0].copy_(u[0])\n",
     "def f(o, u):\n    o[0].copy_(u[0])"),
    (codegen.unwrap_drops_last, "def unwrap_fn(args):\n    return list(args)\n",
     "def unwrap_fn(args):\n    return list(args)[:-1]"),
])
def test_source_rewrites_change_exactly_one_thing(transform, source: str, expected: str) -> None:  # type: ignore[no-untyped-def]  # parametrized callables
    assert transform(source) == expected


def test_a_rewrite_that_finds_nothing_reports_none() -> None:
    assert codegen.set_to_copy("def f(o, u):\n    o[0].copy_(u[0])\n") is None
