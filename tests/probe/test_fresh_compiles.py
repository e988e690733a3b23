"""A call compiled afresh (`fresh: true`) is probed against the observation of its own call, for an
entry without dynamo too: aot_function generates its wrappers after its graph reaches the compiler,
so the capture is cut where each compile began. Compared whole with the first call's observation,
the fresh compile for a non-leaf input read as a divergence (the leaf's requires_grad branch)."""

from __future__ import annotations

from conformance.data.variants import variants_of
from conformance.run.runner import run_variant
from tests.helpers.cases import CaseFactory

CASE = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
backends: [aot_function]
inputs:
  a: {tensor: {shape: [4], init: ones, requires_grad: true}}
program: |
  def f(a):
      a.detach().mul_(2)
      return a + 3
calls:
  - fresh: true
    a: {tensor: {values: [2.0, 2.0, 2.0, 2.0], requires_grad: true, leaf: false}}
modes: [training]
"""


def test_each_fresh_compile_is_probed_against_its_own_call(make_case: CaseFactory) -> None:
    lc = make_case(CASE, name="mutation_epilogue/c.yaml")
    ((variant),) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "pass", record.reason
    assert record.probes is not None and record.probes.error is None, record.probes
    epilogue = next(r for r in record.probes.results if r.behavior == "mutation_epilogue")
    assert epilogue.status == "conforms", epilogue.diff
    # compared compile by compile (the leaf's requires_grad branch, the non-leaf's plain copy_), not as one
    assert epilogue.note.startswith("compile 0: "), epilogue.note
    assert len(record.probes.graph_inputs) == 2
