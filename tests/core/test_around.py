"""`around:` is entered by each side around each of its calls, afresh: a reseeding helper makes a
Python random draw agree where without it the sides disagree; an expression that is no context manager
is the case's error, named; the reproducer enters it as the harness does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.data.loader import LoadedCase, load_case
from conformance.data.variants import Variant, variants_of
from conformance.reproducer.short import render_short
from conformance.results import ResultRecord
from conformance.run.runner import run_variant

CASE = """\
behavior: scalar_recompile
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_eager]
classes: |
  import contextlib, random
  entered = []
  @contextlib.contextmanager
  def reseeded():
      entered.append(1)
      random.seed(1)
      yield
  @contextlib.contextmanager
  def breaks_as_it_exits():
      yield
      raise ValueError("the manager's own exit failed")
inputs: {x: {tensor: {shape: [4]}}}
program: |
  def f(x):
      import random
      return x + random.randint(0, 10**6)
calls: [{}]
"""


def _records(tmp_path: Path, around: str | None) -> list[tuple[LoadedCase, Variant, ResultRecord]]:
    path = tmp_path / "scalar_recompile" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(CASE + (f"around: {around}\n" if around else ""))
    lc = load_case(path, tmp_path)
    return [(lc, v, run_variant(lc, v)) for v in variants_of(lc.case, devices=["cpu"])]


def test_a_reseeding_context_makes_both_sides_draw_the_same(tmp_path: Path) -> None:
    ((_, _, record),) = _records(tmp_path, "reseeded()")
    assert record.status == "pass", record.reason


def test_without_it_the_draws_differ_and_the_item_fails(tmp_path: Path) -> None:
    ((_, _, record),) = _records(tmp_path, None)
    assert record.status == "fail"
    assert "values" in record.reason


@pytest.mark.parametrize("around", ["'3 + 4'", "undefined_name()"])
def test_an_expression_that_is_no_context_manager_is_a_case_error(tmp_path: Path, around: str) -> None:
    ((_, _, record),) = _records(tmp_path, around)
    assert record.status == "error"
    assert "around:" in record.reason


def test_a_manager_whose_exit_raises_is_a_case_error_not_the_harnesss(tmp_path: Path) -> None:
    ((_, _, record),) = _records(tmp_path, "breaks_as_it_exits()")
    assert record.status == "error"
    assert "around: 'breaks_as_it_exits()' raised ValueError" in record.reason, record.reason
    assert "as it was exited" in record.reason and "harness" not in record.reason, record.reason


def test_the_reproducer_enters_it_around_the_call(tmp_path: Path) -> None:
    ((lc, variant, record),) = _records(tmp_path, "contextlib.nullcontext()")  # no reseed: the item fails
    text = render_short(lc, variant, record)
    assert text is not None
    assert "with contextlib.nullcontext():\n" in text
    assert "out = fn(x)" in text.split("with contextlib.nullcontext():\n", 1)[1]
    script = tmp_path / "repro.py"
    script.write_text(text)
    done = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 3 and "MISMATCH: " in done.stdout, done.stdout + done.stderr


def test_the_backward_runs_inside_it_too(tmp_path: Path) -> None:
    """As a caller's backward inside its `with torch.autocast(...)` block: a Function's backward sees it."""
    path = tmp_path / "runtime_wrapper" / "c.yaml"
    path.parent.mkdir()
    path.write_text("""\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_eager]
modes: [training]
devices: [cpu]
around: torch.autocast("cpu")
classes: |
  class Probe(torch.autograd.Function):
      @staticmethod
      def forward(ctx, x):
          return x.clone()
      @staticmethod
      def backward(ctx, g):
          return torch.full_like(g, 2.0 if torch.is_autocast_enabled("cpu") else 1.0)  # the mode it ran in
inputs: {x: {tensor: {shape: [3], requires_grad: true}}}
program: |
  def f(x):
      return Probe.apply(x)
calls:
  - after: |
      assert torch.equal(x.grad, torch.full_like(x, 2.0)), x.grad
""")
    lc = load_case(path, tmp_path)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "pass", (record.reason, [m.message() for m in record.mismatches])
