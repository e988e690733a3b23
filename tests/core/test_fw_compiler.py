"""`compile.fw_compiler`: a case installs its own forward compiler, as upstream's tests do, on aot_function,
aot_module and aot_module_simplified; the harness still counts its graphs, and the reproducer installs it too."""

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

HEAD = """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
"""
# a compiler that runs the graph and adds one to its first output: only an installed one changes the values
CASE = """\
backends: [BACKEND]
compile: {fw_compiler: shifted}
classes: |
  def shifted(gm, example_inputs):
      def run(*args):
          outs = list(gm(*args))
          outs[0] = outs[0] + OFFSET
          return outs
      return run
inputs:
  x: {tensor: {shape: [3]}}
program: |
  def f(x):
      return (x * 2,)
"""
ENTRIES = ("aot_function", "aot_module", "aot_module_simplified")


def _case(tmp_path: Path, body: str) -> Any:
    path = tmp_path / "runtime_wrapper" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(body))
    return load_case(path, tmp_path)


def _reproducer_differs(tmp_path: Path, lc: Any, variant: Any, record: Any, installs: str) -> None:
    """The short reproducer installs the case's compiler (`installs`) and finds what the harness found."""
    text = render_short(lc, variant, record)
    assert text is not None and installs in text
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == REPRO_DIFFERS and "MISMATCH" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_cases_compiler_is_the_entrys_and_its_graphs_still_count(tmp_path: Path, entry: str) -> None:
    for offset, status in (("0", "pass"), ("1", "fail")):
        lc = _case(tmp_path, CASE.replace("BACKEND", entry).replace("OFFSET", offset))
        (variant,) = variants_of(lc.case, devices=["cpu"])
        record = run_variant(lc, variant)
        assert record.status == status, (entry, offset, record.reason)
        assert record.compile_counts["cold_graphs"] == 1, record.compile_counts
    assert record.mismatches[0].check == "values", record.mismatches
    _reproducer_differs(tmp_path, lc, variant, record, "fw_compiler=shifted")


@pytest.mark.parametrize(("change", "said"), [
    ("fw_compiler: shifted}", "'nowhere' is not defined in the classes block (it defines: shifted)"),
    ("backends: [BACKEND]", "a forward compiler is installed by aot_function, aot_module_simplified, aot_module; "
                            "not by aot_eager"),
])
def test_a_compiler_the_case_does_not_define_or_an_entry_that_takes_none_is_refused(
        tmp_path: Path, change: str, said: str) -> None:
    body = CASE.replace("OFFSET", "0")
    body = (body.replace(change, "fw_compiler: nowhere}") if change.startswith("fw")
            else body.replace(change, "backends: [aot_function, aot_eager]"))
    with pytest.raises(CaseLoadError) as err:
        _case(tmp_path, body.replace("BACKEND", "aot_function"))
    assert said in str(err.value) and "c.yaml:" in str(err.value), str(err.value)


@pytest.mark.parametrize(("body", "said"), [
    ("      return None", "compile.fw_compiler 'shifted' returned NoneType, not a callable"),
    ("      raise ValueError('no')", "compile.fw_compiler 'shifted' raised ValueError: no"),
])
def test_a_compiler_that_breaks_is_the_cases_error_never_the_builds(tmp_path: Path, body: str, said: str) -> None:
    broken = CASE.replace("      return run\n", body + "\n").replace("OFFSET", "0")
    for entry in ENTRIES:
        lc = _case(tmp_path, broken.replace("BACKEND", entry))
        (variant,) = variants_of(lc.case, devices=["cpu"])
        record = run_variant(lc, variant)
        assert record.status == "error" and said in record.reason, (entry, record.status, record.reason)


def test_an_assertion_the_compiler_makes_on_the_graph_is_the_builds_verdict(tmp_path: Path) -> None:
    """Upstream's compilers assert on the graph they are handed (a node's stack trace, its meta): a failing one is
    the build failing upstream's check, a fail, not a case error."""
    asserting = "      assert len(gm.graph.nodes) > 1000, 'too few nodes'\n      return run\n"
    body = CASE.replace("      return run\n", asserting)
    lc = _case(tmp_path, body.replace("OFFSET", "0").replace("BACKEND", "aot_function"))
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "fail" and "AssertionError: too few nodes" in record.reason, record.reason


BACKWARD = """\
backends: [BACKEND]
modes: [training]
compile: {fw_compiler: shifted}
classes: |
  def shifted(gm, example_inputs):
      backward = any(n.op == "placeholder" and "tangents" in n.name for n in gm.graph.nodes)
      def run(*args):
          outs = list(gm(*args))
          if backward:
              outs[0] = outs[0] + OFFSET
          return outs
      return run
inputs:
  x: {tensor: {shape: [3], requires_grad: true}}
program: |
  def f(x):
      return (x * 2,)
"""


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_cases_compiler_compiles_the_backward_too_as_upstreams_entries_default_it(
        tmp_path: Path, entry: str) -> None:
    """aot_function(f, fw_compiler=X), aot_module and aot_module_simplified without a bw_compiler compile the
    backward with X: a compiler that changes only the backward graph's result changes the gradient."""
    for offset, status in (("0", "pass"), ("1", "fail")):
        lc = _case(tmp_path, BACKWARD.replace("BACKEND", entry).replace("OFFSET", offset))
        (variant,) = variants_of(lc.case, devices=["cpu"])
        record = run_variant(lc, variant)
        assert record.status == status, (entry, offset, record.reason)
        assert record.compile_counts["cold_graphs"] == 1, record.compile_counts  # the forward graphs alone count
    assert "grad" in str(record.mismatches[0]), record.mismatches
    _reproducer_differs(tmp_path, lc, variant, record, "bw_compiler=shifted")
