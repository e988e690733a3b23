"""`compile.closure`: the program's function closes over classes-block names, as upstream's function or lambda
closes over its test's locals; dynamo then guards them as the frame's closure cells (L['model']), not as globals
(G['model']), and the reproducer makes the same closure."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conformance.core.loop import REPRO_DIFFERS
from conformance.data.loader import CaseLoadError, load_case
from conformance.data.variants import variants_of
from conformance.reproducer.short import render_short
from conformance.run.runner import run_variant

CASE = """\
behavior: scalar_recompile
summary: s
upstream: [https://github.com/pytorch/pytorch/issues/197860]
devices: [cpu]
backends: [eager]
compile: {fullgraph: true, CLOSURE}
classes: |
  class Scaled:
      factor = 2.0

      def m(self, x):
          return x * self.factor

  model = Scaled()
inputs:
  x:
    tensor: {values: [1.0, 2.0, 3.0]}
program: |
  def f(x):
      return model.m(x)
calls:
  - before: |
      model.factor = SECOND
expect:
  compiles: 2
generated:
  - artifact: dynamo_cpp_guards_str
    instance: first
    contains: ["source=L['model']"]
    lacks: ["G['model']"]
"""


def _case(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "scalar_recompile" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return load_case(path, tmp_path)


@pytest.mark.parametrize(("closure", "held"), [("closure: [model]", "holds"), ("closure: []", "fails")])
def test_a_name_the_function_closes_over_is_guarded_as_a_closure_cell(tmp_path: Path, closure: str, held: str) -> None:
    lc = _case(tmp_path, CASE.replace("CLOSURE", closure).replace("SECOND", "3.0"))
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "pass", record.reason  # the instance attribute recompiles either way, eager's values
    assert [g.status for g in record.generated] == [held], record.generated


def test_the_reproducer_closes_over_the_same_names_and_finds_what_the_harness_found(tmp_path: Path) -> None:
    """A case that says one graph, where the closed-over object's attribute changes and dynamo recompiles, is a
    mismatch both in the harness and in the script, which makes the program inside a function that takes `model`."""
    text = CASE.replace("CLOSURE", "closure: [model]").replace("SECOND", "3.0").replace("compiles: 2", "compiles: 1")
    lc = _case(tmp_path, text)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "fail", record.reason
    text = render_short(lc, variant, record)
    assert text is not None and "def make_closure(model):" in text and "f = make_closure(model)" in text, text
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == REPRO_DIFFERS and "MISMATCH" in proc.stdout, proc.stdout + proc.stderr


def test_a_closure_over_a_name_the_classes_block_does_not_define_is_refused_at_its_line(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError) as err:
        _case(tmp_path, CASE.replace("CLOSURE", "closure: [modle]").replace("SECOND", "3.0"))
    said = str(err.value)
    assert "c.yaml:6: compile.closure: 'modle' is not defined in the classes block" in said, said
