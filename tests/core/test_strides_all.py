"""`expect.strides: all` compares the strides of every dim, as upstream's `assertEqual(out.stride(),
ref.stride())`: an output whose size-1 dim has another stride than eager's fails under it (the default, the
strides of dims longer than 1, passes it); the reproducer observes the full stride tuple and differs too."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.core.checks import CHECKS
from conformance.core.loop import LoopCallbacks, Target, run_passes
from conformance.data.loader import LoadedCase
from conformance.data.variants import Variant
from conformance.reproducer.short import render_short
from conformance.run.runner import run_variant
from tests.helpers.cases import CaseFactory, case_factory

CASE = """\
behavior: subclass_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/176741]
devices: [cpu]
backends: [aot_eager]
inputs: {{x: {{tensor: {{shape: [3, 4]}}}}}}
program: |
  def f(x):
      return {returned}
"""


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    return case_factory(tmp_path)


class _RestridesSizeOneDim(LoopCallbacks):
    """A fake entry: its output of shape [1, 4] comes back with the size-1 dim's stride 1 where eager's is 4."""

    def compiled(self, compiled: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *args: compiled(*args).as_strided((1, 4), (1, 1))


def _run(lc: LoadedCase) -> list[tuple[str, str, str]]:
    target = Target(
        program=lc.program_source,
        function=lc.case.function_name,
        filename=lc.program_filename,
        device="cpu",
        backend="aot_eager",
        mode="inference",
    )
    outcome = run_passes(lc.data, target, _RestridesSizeOneDim())
    return [(m.check, m.actual, m.expected) for m in outcome.mismatches if m.where == "out[0]"]


def test_a_size_one_dim_s_stride_differing_fails_under_all_only(make_case: CaseFactory) -> None:
    text = CASE.format(returned="x[:1] * 2")
    assert _run(make_case(text)) == []  # the default: a size-1 dim's stride has no layout
    assert _run(make_case(text + "expect: {strides: all}\n", name="all.yaml")) == [
        ("stride (every dim)", "(1, 1)", "(4, 1)")
    ]


def test_the_reproducer_observes_every_dim_s_stride(make_case: CaseFactory, tmp_path: Path) -> None:
    # eager's x.t()[:1] has strides (1, 4); the script's compiled side is restrided the way the fake entry's is
    lc = make_case(CASE.format(returned="x.t()[:1].contiguous()") + "expect: {strides: all}\n")
    variant = Variant("cpu", "aot_eager", "inference")
    script = render_short(lc, variant, run_variant(lc, variant))
    assert script is not None
    assert f"'stride (every dim)': lambda t: {CHECKS['stride (every dim)'].observe}," in script
    path = tmp_path / "repro.py"
    path.write_text(script)
    matches = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert matches.returncode == 0, matches.stdout + matches.stderr
    restrided = script.replace(
        "differences(eager, run(compiled_f, compiled=True))",
        "differences(eager, run(lambda x: compiled_f(x).as_strided((1, 3), (1, 1)), compiled=True))",
    )
    assert restrided != script
    path.write_text(restrided)
    differs = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert differs.returncode == 3, differs.stdout + differs.stderr
    assert "out[0]: stride (every dim) is (1, 1), but eager gives (3, 1)" in differs.stdout
