"""A call's own `compiles`: the graphs the backend compiles during that call, as upstream reads its CompileCounter's
frame_count after each call (2 after the first, 3 after the next, ...), checked where the backend counts graphs,
and said the same way by the reproducer."""

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
backends: [BACKEND]
compile: {dynamic: false}
inputs:
  x: {tensor: {shape: [3]}}
program: |
  def f(x):
      return x * 2
first_call: {compiles: 1}
calls:
  - {x: {tensor: {shape: [3], dtype: float64}}, compiles: 1}
  - {x: {tensor: {shape: [3], dtype: float64}}, compiles: THIRD}
"""


def _case(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "scalar_recompile" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return load_case(path, tmp_path)


def test_each_calls_own_count_is_checked_and_the_reproducer_says_the_same(tmp_path: Path) -> None:
    """A dtype change recompiles once, a repeat reuses the graph: 1, 1, 0; a case that says 1 for the repeat
    fails at that call alone, and the script finds the same."""
    for third, status in (("0", "pass"), ("1", "fail")):
        lc = _case(tmp_path, CASE.replace("BACKEND", "eager").replace("THIRD", third))
        (variant,) = variants_of(lc.case, devices=["cpu"])
        record = run_variant(lc, variant)
        assert record.status == status, (third, record.reason)
    (miscount,) = record.mismatches
    assert miscount.check == "graphs compiled" and miscount.call == 3 and miscount.actual == "0", miscount
    assert "calls[1].compiles" in str(miscount.source), miscount
    text = render_short(lc, variant, record)
    assert text is not None
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == REPRO_DIFFERS and "call 3: graphs compiled is 0, but calls[1].compiles gives 1" in \
        proc.stdout, proc.stdout + proc.stderr


def test_an_entry_without_dynamo_counts_no_graph_per_call(tmp_path: Path) -> None:
    """Neither a call's count nor the pass's is checked on aot_function, by the harness or by its script (which has
    no graph list to read: it must still run and match)."""
    text = CASE.replace("BACKEND", "eager, aot_function").replace("THIRD", "0") + "expect: {compiles: 9}\n"
    lc = _case(tmp_path, text)
    variant = next(v for v in variants_of(lc.case, devices=["cpu"]) if v.backend == "aot_function")
    record = run_variant(lc, variant)
    assert record.status == "pass", record.reason
    text = render_short(lc, variant, record.model_copy(update={"status": "fail"}))
    assert text is not None and "len(graphs)" not in text, text
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_negative_count_is_refused_at_its_line(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError) as err:
        _case(tmp_path, CASE.replace("BACKEND", "eager").replace("THIRD", "-1"))
    assert "c.yaml:15: calls[1].compiles: Input should be greater than or equal to 0" in str(err.value), str(err.value)
