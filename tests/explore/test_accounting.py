"""Where the explorer's time goes is counted from every run it makes (first, shrinking,
confirming), and a confirmation reruns only what it confirms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.explore import engine
from conformance.explore.engine import Explorer, Ran
from conformance.explore.grammar import Input, Program, Statement
from conformance.selftest.faults import FAULTS

# a write to an input: the fault that drops input mutations fails both modes of it
PROGRAM = Program((Input("a", (4,), True, False, "contiguous"),), (Statement("mul_", "a"),), ("a",))


def test_a_confirmation_reruns_only_the_variants_that_showed_it_and_its_time_is_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explorer = Explorer(tmp_path, backends=("aot_eager",), extensions=(FAULTS["input_mutation_dropped"].extension(),))
    ran = explorer.run(PROGRAM)
    assert {r.variant for r in ran.records} == {"cpu-aot_eager-inference", "cpu-aot_eager-training"}
    sig, record = next(iter(ran.discrepancies().items()))
    one = Ran(ran.program, ran.text, [record], ran.compiles)  # as if only this variant had shown it
    rerun: list[str] = []
    real = engine.run_variant

    def spy(lc: Any, variant: Any, options: Any) -> Any:
        rerun.append(variant.label)
        return real(lc, variant, options)

    monkeypatch.setattr(engine, "run_variant", spy)
    in_torch = explorer.stats.seconds_in_torch
    assert explorer._confirmed(one, sig)
    assert rerun == [record.variant]
    assert explorer.stats.seconds_in_torch > in_torch  # the confirmation's compile and calls count


def test_time_in_torch_is_the_records_eager_compile_and_compiled_call_time(tmp_path: Path) -> None:
    explorer = Explorer(tmp_path, backends=("aot_eager",))
    ran = explorer.run(PROGRAM)
    s = explorer.stats
    assert s.seconds_in_torch == pytest.approx(sum(
        r.durations.get(b, 0.0) for r in ran.records for b in ("eager", "compile", "compiled_calls")))
    assert 0 < s.seconds_compiling <= s.seconds_in_torch <= s.seconds_in_runs


def test_a_signature_confirmed_once_is_not_confirmed_again_while_it_shrinks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    explorer = Explorer(tmp_path, backends=("aot_eager",), extensions=(FAULTS["input_mutation_dropped"].extension(),))
    explorer._start = time.monotonic()
    confirmations: list[str] = []
    real = explorer._confirmed

    def spy(ran: Ran, sig: str) -> bool:
        confirmations.append(sig)
        return real(ran, sig)

    monkeypatch.setattr(explorer, "_confirmed", spy)
    smaller = Program((Input("a", (3,), True, False, "contiguous"),), (Statement("mul_", "a"),), ("a",))
    raised = []
    for program in (PROGRAM, smaller):  # the second as a shrink step would draw it: the same cause
        with pytest.raises(AssertionError) as exc:
            explorer._body(program)
        raised.append(str(exc.value))
    assert raised[0] == raised[1]
    assert confirmations == [raised[0]]
