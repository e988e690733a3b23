"""`branch:` keeps each side's part of a call on its own branch of a global state, as upstream runs each side inside
branch_nested_state(); `compile.around_making` watches each making of the compiled function, as upstream asserts
around torch._dynamo.optimize(...)(fn). Each is shown to fail where its check does not hold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.core.loop import REPRO_DIFFERS
from conformance.data.loader import CaseLoadError
from conformance.data.variants import Variant
from conformance.reproducer.full import render_full
from conformance.reproducer.short import render_short
from conformance.run.runner import run_variant
from tests.helpers.cases import CaseFactory

STATE = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager]
classes: |
  STATE = {"n": 0}

  def save():
      return dict(STATE)

  def restore(state):
      STATE.clear()
      STATE.update(state)
inputs: {x: {tensor: {shape: [4], init: zeros}}}
program: |
  def f(x):
      return x * 2
first_call:
  before: |  # each side counts one more and adds what it saw: equal only where both start from one state
    x.add_(STATE["n"])
    STATE["n"] += 1
  after: |  # what this side's own part of the call left
    x.add_(STATE["n"] * 10)
calls:
  - before: |
      x.add_(STATE["n"])
      STATE["n"] += 1
"""
VARIANT = Variant("cpu", "aot_eager", "inference")


def test_without_a_branch_the_compiled_side_sees_what_the_eager_side_left(make_case: CaseFactory) -> None:
    record = run_variant(make_case(STATE, name="shared.yaml"), VARIANT)
    assert record.status == "fail", record.reason
    assert any("values" in m.message() for m in record.mismatches), [m.message() for m in record.mismatches]


def test_a_branch_gives_each_side_the_state_the_call_started_from(make_case: CaseFactory) -> None:
    """Each side's before sees n = 0 (the call's start) and its after sees its own 1; the second call starts from
    n = 0 again, as upstream's every round starts from the state its test began with."""
    lc = make_case(STATE + "branch: {save: save, restore: restore}\n", name="branched.yaml")
    record = run_variant(lc, VARIANT)
    assert record.status == "pass", [m.message() for m in record.mismatches]


def test_a_branch_names_functions_of_the_classes_block(make_case: CaseFactory) -> None:
    with pytest.raises(CaseLoadError, match=r"branch\.restore: 'undo' is not defined in the classes block"):
        make_case(STATE + "branch: {save: save, restore: undo}\n", name="undefined.yaml")


def test_a_branch_function_that_raises_breaks_the_case(make_case: CaseFactory) -> None:
    broken = STATE.replace("      return dict(STATE)", "      raise RuntimeError('no state here')")
    record = run_variant(make_case(broken + "branch: {save: save, restore: restore}\n", name="raising.yaml"), VARIANT)
    said = record.reason
    assert record.status == "error" and "branch: save() raised RuntimeError: no state here" in said, said


MAKING = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager]
compile: {around_making: watched}
classes: |
  import contextlib

  MADE = {"n": 0}

  @contextlib.contextmanager
  def watched():
      ENTER
      yield
      MADE["n"] += 1
      assert MADE["n"] < LIMIT, "making the compiled function changed the state"
inputs: {x: {tensor: {shape: [4]}}}
program: |
  def f(x):
      return x * 2
calls:
  - {fresh: keep_cache}
"""


@pytest.mark.parametrize(("limit", "status"), [(3, "pass"), (2, "fail")])
def test_what_the_making_changed_is_a_mismatch_at_the_call_that_made_it(make_case: CaseFactory, tmp_path: Path,
                                                                         limit: int, status: str) -> None:
    """The first making and the fresh call's are both watched: a check that fails on the second is the second
    call's mismatch, of the compiled side."""
    lc = make_case(MAKING.replace("ENTER", "pass").replace("LIMIT", str(limit)), name=f"making{limit}.yaml")
    record = run_variant(lc, VARIANT)
    assert record.status == status, [m.message() for m in record.mismatches]
    if status == "fail":
        (m,) = record.mismatches
        assert m.call == 2 and "making the compiled function" in m.message(), m.message()
        assert "AssertionError: making the compiled function changed the state" in m.message(), m.message()
        assert render_short(lc, VARIANT, record) is None  # the full script is the reproducer: it runs this loop
        path = tmp_path / "making.full.py"
        path.write_text(render_full(lc, VARIANT, record))
        done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == REPRO_DIFFERS and "making the compiled function" in done.stdout, done.stdout


def test_a_making_context_that_cannot_be_entered_breaks_the_case(make_case: CaseFactory) -> None:
    lc = make_case(MAKING.replace("ENTER", "raise KeyError('registry')").replace("LIMIT", "3"), name="enter.yaml")
    record = run_variant(lc, VARIANT)
    assert record.status == "error" and "compile.around_making: entering watched() raised" in record.reason, \
        record.reason
