"""`backward: sum` and `sum_once` run upstream's `out.sum().backward()` on both sides: the compiled backward then
gets an expanded stride-0 tangent, which AOTAutograd's process_tangents coerces to a contiguous one. An autograd
Function whose backward reads its tangent's layout gives eager another gradient than the compiled backward, so
the item fails there, and passes with the harness's seeded (contiguous) tangents; the reproducer runs the same
backward and differs where the harness does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.core.call import sum_backward
from conformance.data.variants import Variant
from conformance.reproducer.short import render_short
from conformance.run.runner import run_variant
from tests.helpers.cases import CaseFactory, case_factory

CASE = """\
behavior: backward_unwrap
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/178927]
devices: [cpu]
backends: [aot_eager]
modes: [training]
classes: |
  class ReadsLayout(torch.autograd.Function):
      @staticmethod
      def forward(ctx, x):
          return x * 2

      @staticmethod
      def backward(ctx, grad):
          return grad * (3.0 if grad.stride(0) == 0 else 2.0)  # an expanded tangent's stride is 0
inputs: {{x: {{tensor: {{shape: [4], requires_grad: true}}}}}}
program: |
  def f(x):
      return {returned}
"""
ONE, TWO = "ReadsLayout.apply(x)", "ReadsLayout.apply(x), x * 3"
TRAINING = Variant("cpu", "aot_eager", "training")


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    return case_factory(tmp_path)


@pytest.mark.parametrize("returned", [ONE, TWO])
@pytest.mark.parametrize("mode", ["sum", "sum_once"])
def test_a_backward_that_mishandles_an_expanded_tangent_fails(make_case: CaseFactory, mode: str, returned: str) -> None:
    record = run_variant(make_case(CASE.format(returned=returned) + f"backward: {mode}\n"), TRAINING)
    assert record.status == "fail"
    assert [(m.check, m.where) for m in record.mismatches] == [("values", "grad of x")]
    compiled, eager = (2.0, 3.0) if returned == ONE else (5.0, 6.0)  # the second output's grad adds 3
    assert f"values is {[compiled] * 4}, but eager gives {[eager] * 4}" in record.reason


def test_with_seeded_tangents_both_backwards_see_a_contiguous_tangent(make_case: CaseFactory) -> None:
    record = run_variant(make_case(CASE.format(returned=ONE)), TRAINING)
    assert record.status == "pass", record.reason


@pytest.mark.parametrize(
    ("returned", "mode", "line"),
    [
        (ONE, "sum", "out.sum().backward(retain_graph=True)"),
        (ONE, "sum_once", "out.sum().backward()"),
        (TWO, "sum", "sum_backward(out, once=False)"),
        (TWO, "sum_once", "sum_backward(out, once=True)"),
    ],
)
def test_the_reproducer_runs_the_same_backward_and_differs(
    make_case: CaseFactory, tmp_path: Path, returned: str, mode: str, line: str
) -> None:
    lc = make_case(CASE.format(returned=returned) + f"backward: {mode}\n")
    script = render_short(lc, TRAINING, run_variant(lc, TRAINING))
    assert script is not None and line in script
    path = tmp_path / "repro.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3 and "grad of x: values" in done.stdout, done.stdout + done.stderr


def test_sum_runs_one_backward_per_output_and_sum_once_one_for_all() -> None:
    seen: list[tuple[int, ...]] = []

    class Counts(torch.autograd.Function):
        @staticmethod
        def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
            return x.clone()

        @staticmethod
        def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
            seen.append(tuple(grad.stride()))
            return grad

    for once, backwards in ((False, 2), (True, 1)):
        seen.clear()
        x = torch.ones(3, requires_grad=True)
        y = Counts.apply(x)
        sum_backward({"a": y * 2, "b": [y * 3, torch.zeros(2)]}, once=once)
        assert len(seen) == backwards
        assert x.grad is not None and x.grad.tolist() == [5.0, 5.0, 5.0]
    x = torch.ones(3, requires_grad=True)
    Counts.apply(x).sum().backward()
    assert seen[-1] == (0,)  # what upstream's sum hands a backward: an expanded tangent
