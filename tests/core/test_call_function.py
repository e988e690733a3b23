"""A call's `function:` calls another function of the classes block from that call on, eagerly and compiled anew,
as upstream compiles a second function in one test: both sides switch (values), the compiled side compiles it
(graph counts), and a function the case cannot call so is refused at its line."""

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

SWITCHED = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager]
classes: |
  def g(x):
      x.mul_(3)
      return x
inputs: {x: {tensor: {shape: [4]}, persist: true}}
program: |
  def f(x):
      return x * 2
calls:
  - {fresh: FRESH, function: g, compiles: 1}
  - {compiles: 0}
expect: {compiles: GRAPHS}
"""
VARIANT = Variant("cpu", "aot_eager", "inference")


@pytest.mark.parametrize("fresh", ["true", "keep_cache", "new_backend"])
def test_both_sides_call_the_other_function_and_the_compiled_side_compiles_it(make_case: CaseFactory,
                                                                             fresh: str) -> None:
    """Eager's f against compiled g would differ in values and in x's mutation; a compiled side that kept f's
    graph would compile 1 graph, not 2, and 0 at call 2."""
    lc = make_case(SWITCHED.replace("FRESH", fresh).replace("GRAPHS", "2"), name=f"switched_{fresh}.yaml")
    record = run_variant(lc, VARIANT)
    assert record.status == "pass", [m.message() for m in record.mismatches]
    assert record.compile_counts["cold_graphs"] == 2, record.compile_counts


def test_a_wrong_count_for_the_other_function_fails_and_the_full_script_is_the_reproducer(
        make_case: CaseFactory, tmp_path: Path) -> None:
    lc = make_case(SWITCHED.replace("FRESH", "keep_cache").replace("GRAPHS", "1"), name="miscounted.yaml")
    record = run_variant(lc, VARIANT)
    assert record.status == "fail" and any("graphs compiled" in m.message() for m in record.mismatches), \
        [m.message() for m in record.mismatches]
    assert render_short(lc, VARIANT, record) is None
    path = tmp_path / "miscounted.full.py"
    path.write_text(render_full(lc, VARIANT, record))
    done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == REPRO_DIFFERS and "graphs compiled" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(("edit", "said"), [
    (("{fresh: FRESH, function: g, compiles: 1}", "{function: g}"),
     "calls[0].function: another function is compiled anew: give the call fresh"),
    (("function: g,", "function: h,"), "calls[0].function: 'h' is not defined in the classes block (it defines: g)"),
    (("def g(x):", "def g(x, y=1):"), "calls[0].function: g(x, y=1) must take the program's parameters: (x)"),
])
def test_a_function_the_case_cannot_call_so_is_refused_at_its_key(make_case: CaseFactory, edit: tuple[str, str],
                                                                  said: str) -> None:
    with pytest.raises(CaseLoadError) as info:
        make_case(SWITCHED.replace(*edit).replace("FRESH", "true").replace("GRAPHS", "2"), name="refused.yaml")
    assert said in str(info.value), str(info.value)
