"""`expect.compiles_at_most`: upstream's `frame_count <= N`. A build that compiles fewer graphs passes, one that
compiles more fails with the ceiling as the expected value, and the reproducer holds it to the same ceiling."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.core.cause import direction
from conformance.data.loader import CaseLoadError
from conformance.data.variants import Variant
from conformance.reproducer.short import render_short
from conformance.run.runner import run_variant
from tests.helpers.cases import CaseFactory, case_factory

# a recompile per value: specialize_float (the default) makes each float a constant of its graph
SWEEP = """\
behavior: scalar_recompile
summary: A float multiplier swept over three values.
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager]
modes: [inference]
config:
  torch._dynamo.config.specialize_float: true
inputs:
  x: {tensor: {shape: [4]}}
  lr: {scalar: {values: [0.1, 0.2, 0.3]}}
program: |
  def f(x, lr):
      return x * lr
"""


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    return case_factory(tmp_path)


@pytest.mark.parametrize(("ceiling", "status"), [(3, "pass"), (5, "pass"), (2, "fail")])
def test_a_ceiling_holds_for_fewer_graphs_and_fails_for_more(make_case: CaseFactory, ceiling: int,
                                                             status: str) -> None:
    lc = make_case(SWEEP + f"expect: {{compiles_at_most: {ceiling}}}\n")
    record = run_variant(lc, Variant("cpu", "aot_eager", "inference"))
    assert record.status == status, record.reason
    assert record.recompiles is None  # a stated ceiling is the contract: no "expect.compiles is not set" note
    if status == "fail":
        (m,) = record.mismatches
        assert (m.check, m.expected, m.actual, m.source) == (
            "graphs compiled", "at most 2", "3", "expect.compiles_at_most")


def test_the_reproducer_holds_the_build_to_the_same_ceiling(make_case: CaseFactory, tmp_path: Path) -> None:
    lc = make_case(SWEEP + "expect: {compiles_at_most: 2}\n")
    variant = Variant("cpu", "aot_eager", "inference")
    script = render_short(lc, variant, run_variant(lc, variant))
    assert script is not None and "if len(graphs) > 2:" in script
    path = tmp_path / "repro.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "graphs compiled is 3, but expect.compiles_at_most gives at most 2" in done.stdout


def test_a_count_and_a_ceiling_together_are_refused(make_case: CaseFactory) -> None:
    with pytest.raises(CaseLoadError, match=r"expect: .*one count or one ceiling, not both"):
        make_case(SWEEP + "expect: {compiles: 3, compiles_at_most: 3}\n")


def test_more_graphs_than_a_ceiling_read_as_more_graphs_than_expected(make_case: CaseFactory) -> None:
    lc = make_case(SWEEP + "expect: {compiles_at_most: 1}\n")
    (m,) = run_variant(lc, Variant("cpu", "aot_eager", "inference")).mismatches
    assert direction(m) == "more graphs than expected"
