"""aot_function's options a case picks (partitioner, decompositions, functionalization) reach aot_function:
each changes the graph it traces as upstream's tests see it, and the reproducer passes the same ones."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from conformance.data.loader import load_case
from conformance.data.variants import variants_of
from conformance.reproducer.short import render_short
from conformance.results import GeneratedRecord
from conformance.run.runner import run_variant

HEAD = """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_function]
"""


def _generated(tmp_path: Path, body: str) -> list[GeneratedRecord]:
    path = tmp_path / "runtime_wrapper" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(body))
    lc = load_case(path, tmp_path)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "pass", record.reason
    return list(record.generated)


MUTATING = """\
    compile: {{functionalize: {functionalize}}}
    modes: [training]
    inputs:
      a: {{tensor: {{shape: [3], requires_grad: true}}}}
    program: |
      def f(a):
          x = a + 1
          x.mul_(3)
          return x * a
    generated:
      - artifact: aot_forward_graph
        contains: [torch.ops.aten.mul_.Tensor]
    """


def test_without_functionalization_the_mutation_stays_in_the_graph(tmp_path: Path) -> None:
    (said,) = _generated(tmp_path, MUTATING.format(functionalize="false"))
    assert said.status == "holds", said.detail
    (said,) = _generated(tmp_path, MUTATING.format(functionalize="true"))
    assert said.status == "fails", said.detail


SPLIT = """\
    compile: {{partitioner: {partitioner}, decompositions: default}}
    modes: [training]
    inputs:
      x: {{tensor: {{shape: [4, 4], requires_grad: true}}}}
    program: |
      def f(x):
          y = torch.split(x, x.size(0) // 2, dim=0)
          return y[0].sin() + y[1].cos()
    generated:
      - artifact: aot_backward_graph
        contains: [torch.ops.aten.split.Tensor]
    """


def test_the_min_cut_partitioner_recomputes_in_the_backward_where_the_default_one_saves(tmp_path: Path) -> None:
    (said,) = _generated(tmp_path, SPLIT.format(partitioner="min_cut"))
    assert said.status == "holds", said.detail
    (said,) = _generated(tmp_path, SPLIT.format(partitioner="default"))
    assert said.status == "fails", said.detail


SILU = """\
    compile: {{decompositions: {table}}}
    inputs:
      x: {{tensor: {{shape: [3]}}}}
    program: |
      def f(x):
          return torch.nn.functional.silu(x)
    generated:
      - artifact: aot_inference_graph
        contains: [torch.ops.aten.exp.default]
    """


def test_inductors_table_decomposes_what_the_default_table_keeps(tmp_path: Path) -> None:
    (said,) = _generated(tmp_path, SILU.format(table="inductor"))
    assert said.status == "holds", said.detail
    for table in ("default", "none"):
        (said,) = _generated(tmp_path, SILU.format(table=table))
        assert said.status == "fails", (table, said.detail)


def test_the_reproducer_passes_the_same_options(tmp_path: Path) -> None:
    path = tmp_path / "runtime_wrapper" / "c.yaml"
    path.parent.mkdir()
    path.write_text(HEAD + textwrap.dedent("""\
        compile: {partitioner: min_cut, decompositions: default, functionalize: false}
        inputs:
          x: {tensor: {shape: [3]}}
        program: |
          def f(x):
              return x * 2 if x.shape[0] > 3 else x * 3
        calls:
          - {x: {tensor: {shape: [5]}}}
        """))
    lc = load_case(path, tmp_path)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "fail", record.reason  # aot_function has no guards: the second shape runs branch one
    text = render_short(lc, variant, record)
    assert text is not None
    for said in ("partition_fn=functorch.compile.min_cut_rematerialization_partition",
                 "decompositions=functorch.compile.default_decompositions", "disable_functionalization=True"):
        assert said in text
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 3 and "MISMATCH" in proc.stdout, proc.stdout + proc.stderr
    inductor = load_case(path.parent / "c.yaml", tmp_path) if path.write_text(path.read_text().replace(
        "decompositions: default", "decompositions: inductor")) else None
    assert inductor is not None
    text = render_short(inductor, variant, record)
    assert text is not None and "decompositions=torch._inductor.decomposition.decompositions" in text
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 3 and "MISMATCH" in proc.stdout, proc.stdout + proc.stderr
