"""The case's grad mode is the one its program runs under: `grad_enabled: false` is no_grad, also where
inference mode is off (`torch.inference_mode(False)` would switch grad mode back on)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch

from conformance.core.call import case_modes
from conformance.data.loader import load_case
from conformance.data.variants import variants_of
from conformance.run.runner import run_variant


@pytest.mark.parametrize(("grad", "inference"), list(itertools.product((True, False), repeat=2)))
def test_the_program_runs_under_the_cases_grad_and_inference_modes(grad: bool, inference: bool) -> None:
    with torch.enable_grad(), case_modes(grad, inference):
        seen = (torch.is_grad_enabled(), torch.is_inference_mode_enabled())
    assert seen == (grad and not inference, inference)


def test_a_case_without_grad_compiles_the_inference_graph(tmp_path: Path) -> None:
    path = tmp_path / "runtime_wrapper" / "c.yaml"
    path.parent.mkdir()
    path.write_text("""\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_function]
modes: [training]
grad_enabled: false
inputs: {x: {tensor: {shape: [3], requires_grad: true}}}
program: |
  def f(x):
      return x.sin()
generated:
  - artifact: aot_inference_graph
  - artifact: aot_forward_graph
    emitted: false
""")
    lc = load_case(path, tmp_path)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert [g.status for g in record.generated] == ["holds", "holds"], [g.detail for g in record.generated]
