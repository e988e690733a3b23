"""The entry points upstream's own tests call (Note [Module entry points]): aot_module_simplified, aot_module
and make_fx run the program as upstream runs it, on the caller's own modules, and their reproducers do too."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from conformance.data.loader import load_case
from conformance.data.variants import variants_of
from conformance.reproducer.short import render_short
from conformance.results import ResultRecord
from conformance.run.runner import run_variant

ENTRIES = ("aot_module_simplified", "aot_module", "make_fx", "aot_export_module")
EXPORT_SIMPLE = "aot_export_joint_simple"  # refuses input mutations and aliased outputs: tested apart
HEAD = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
"""


def _records(tmp_path: Path, body: str) -> dict[str, ResultRecord]:
    path = tmp_path / "mutation_epilogue" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(body))
    lc = load_case(path, tmp_path)
    return {v.label: run_variant(lc, v) for v in variants_of(lc.case, devices=["cpu"])}


def test_each_entry_runs_a_mutating_aliasing_program_as_eager_does(tmp_path: Path) -> None:
    records = _records(tmp_path, f"""\
        backends: [{", ".join(ENTRIES)}]
        modes: [inference, training]
        inputs:
          a: {{tensor: {{shape: [3]}}}}
          b: {{tensor: {{shape: [3], requires_grad: true}}}}
        program: |
          def f(a, b):
              a.mul_(2)
              return a + b, b.view(-1)
        """)
    assert len(records) == 2 * len(ENTRIES)
    for label, r in records.items():
        assert r.status == "pass", (label, r.reason, [m.message() for m in r.mismatches])


def test_a_module_argument_is_the_compiled_modules_own_and_the_caller_sees_what_the_call_did(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = """\
        backends: [aot_module_simplified, aot_module]
        inputs:
          m: {module: {class: torch.nn.Linear, args: [3, 2]}}
          x: {tensor: {shape: [4, 3]}}
        program: |
          def f(m, x):
              with torch.no_grad():
                  m.bias.add_(1)
              return m(x)
        """
    for label, r in _records(tmp_path, body).items():
        # the bias written under no_grad is the caller's: compared with eager's
        assert r.status == "pass", (label, r.reason, [m.message() for m in r.mismatches])
    # an entry that compiled a copy of the caller's module: the caller's bias would not move
    import copy

    from conformance.core import entries

    real = entries._ProgramModule.__init__

    def copying(self: object, fn: object, args: tuple[object, ...], wrap_single: bool) -> None:
        real(self, fn, tuple(copy.deepcopy(a) if isinstance(a, torch.nn.Module) else a for a in args),  # type: ignore[arg-type]
             wrap_single)

    monkeypatch.setattr(entries._ProgramModule, "__init__", copying)
    monkeypatch.setattr(entries._ProgramModule, "split", lambda self, args, entry: tuple(
        a for a in args if not isinstance(a, torch.nn.Module)))
    for label, r in _records(tmp_path, body).items():
        assert r.status == "fail" and any("m.bias" in m.message() for m in r.mismatches), label


def test_a_later_call_with_another_module_is_a_case_error(tmp_path: Path) -> None:
    records = _records(tmp_path, """\
        backends: [aot_module_simplified, make_fx]
        inputs:
          m: {module: {class: torch.nn.Linear, args: [3, 2]}}
          x: {tensor: {shape: [4, 3]}}
        program: |
          def f(m, x):
              return m(x)
        calls:
          - {m: {module: {class: torch.nn.Linear, args: [3, 2]}}}
        """)
    for r in records.values():
        assert r.status == "error" and "a later call must pass the same ones" in r.reason, r.reason


@pytest.mark.parametrize("tracing", ["real", "fake", "symbolic"])
def test_make_fx_traces_a_module_argument_with_its_real_weights_in_each_tracing_mode(tmp_path: Path,
                                                                                       tracing: str) -> None:
    records = _records(tmp_path, f"""\
        backends: [make_fx]
        compile: {{tracing_mode: {tracing}}}
        inputs:
          m: {{module: {{class: torch.nn.Linear, args: [3, 2]}}}}
          x: {{tensor: {{shape: [4, 3]}}}}
        program: |
          def f(m, x):
              return m(x)
        generated:
          - artifact: make_fx_graph
            contains: [torch.ops.aten.addmm.default]
        """)
    (r,) = records.values()
    assert r.status == "pass", (r.reason, [m.message() for m in r.mismatches])
    assert [g.status for g in r.generated] == ["holds"], [g.detail for g in r.generated]


def test_aot_module_simplified_traces_symbolic_fakes_and_keeps_the_shape_envs_guards(tmp_path: Path) -> None:
    body = """\
        backends: [aot_module_simplified]
        compile: {tracing_mode: TRACING}
        modes: [training]
        inputs:
          lin: {module: {class: torch.nn.Linear, args: [20, 30]}}
          x: {tensor: {shape: [16, 20], requires_grad: true}}
          y: {tensor: {shape: [16, 30], requires_grad: true}}
        program: |
          def f(lin, x, y):
              return (lin(x) + y,)
        generated:
          - artifact: shape_env_guards
            matches: ['Eq\\(s\\d+, 20\\)', 'Eq\\(s\\d+, 30\\)']
        """
    (r,) = _records(tmp_path, body.replace("TRACING", "symbolic")).values()
    assert r.status == "pass", (r.reason, [m.message() for m in r.mismatches])
    assert [g.status for g in r.generated] == ["holds"], [g.detail for g in r.generated]
    (r,) = _records(tmp_path, body.replace("TRACING", "symbolic").replace(", 30\\)", ", 31\\)")).values()
    assert [g.status for g in r.generated] == ["fails"], [g.detail for g in r.generated]  # a guard it lacks
    for tracing in ("real", "fake"):  # no ShapeEnv: nothing to read, never a holds
        (r,) = _records(tmp_path, body.replace("TRACING", tracing)).values()
        assert r.status == "pass" and [g.status for g in r.generated] == ["not observable"], r.generated


def test_the_make_fx_graph_is_what_a_generated_assertion_reads(tmp_path: Path) -> None:
    body = """\
        backends: [make_fx]
        inputs:
          x: {tensor: {shape: [3]}}
        program: |
          def f(x):
              x.add_(1)
              return x * 2
        generated:
          - artifact: make_fx_graph
            graph: |
              def forward(self, x_1):
                  add_ = torch.ops.aten.add_.Tensor(x_1, 1);  x_1 = None
                  mul = torch.ops.aten.mul.Tensor(add_, 2);  add_ = None
                  return mul
        """
    (said,) = _records(tmp_path, body)["cpu-make_fx-inference"].generated
    assert said.status == "holds", said.detail
    (said,) = _records(tmp_path, body.replace("(add_, 2)", "(add_, 3)"))["cpu-make_fx-inference"].generated
    assert said.status == "fails" and "( add_ , 3 )" in said.detail


@pytest.mark.parametrize(("entry", "tracing"), [*((e, None) for e in (*ENTRIES, EXPORT_SIMPLE)),
                                               ("aot_module_simplified", "symbolic"), ("make_fx", "real")])
def test_the_short_reproducer_compiles_through_the_same_entry_and_finds_the_same_mismatch(
        tmp_path: Path, entry: str, tracing: str | None) -> None:
    """A program that branches on a shape: upstream's entries trace once, without guards, so a later call of
    another shape runs the first call's branch; the reproducer must show it through the same entry."""
    path = tmp_path / "mutation_epilogue" / "c.yaml"
    path.parent.mkdir()
    path.write_text(HEAD + textwrap.dedent(f"""\
        backends: [{entry}]
        compile: {{tracing_mode: {tracing or "null"}}}
        inputs:
          x: {{tensor: {{shape: [3]}}}}
        program: |
          def f(x):
              return (x * 2,) if x.shape[0] > 3 else (x * 3,)
        calls:
          - {{x: {{tensor: {{shape: [5]}}}}}}
        """))
    lc = load_case(path, tmp_path)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "fail" and record.mismatches[0].check == "values", record.reason  # no guards
    text = render_short(lc, variant, record)
    assert text is not None and entry in text
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 3 and "MISMATCH" in proc.stdout, proc.stdout + proc.stderr


EXPORTED = """\
    backends: [aot_export_module]
    compile: {pre_dispatch: true}
    grad_enabled: false
    classes: |
      class M(torch.nn.Module):
          def __init__(self):
              super().__init__()
              self.p = torch.nn.Parameter(torch.ones(2))
              self.register_buffer("b", torch.zeros(2))
          def forward(self, x):
              self.b.add_(1)
              x.mul_(2)
              return x + self.p + self.b
    inputs:
      m: {module: {class: M}}
      x: {tensor: {shape: [2]}}
    program: |
      def f(m, x):
          return m(x)
    generated:
      - artifact: aot_export_graph
        contains: ["torch.ops.aten.mul.Tensor(arg2_1, 2)"]
      - artifact: aot_export_readable  # print_readable's annotations, comments and class line do not count
        graph: |
          def forward(self, arg0_1, arg1_1, arg2_1):
              add = torch.ops.aten.add.Tensor(arg1_1, 1);  arg1_1 = None
              mul = torch.ops.aten.mul.Tensor(arg2_1, 2);  arg2_1 = None
              add_1 = torch.ops.aten.add.Tensor(mul, arg0_1);  arg0_1 = None
              add_2 = torch.ops.aten.add.Tensor(add_1, add);  add_1 = None
              return (add, mul, add_2)
    """


def test_an_exported_graphs_subgraphs_are_artifacts_of_their_own(tmp_path: Path) -> None:
    body = """\
        backends: [aot_export_module]
        grad_enabled: false
        inputs:
          x: {tensor: {shape: [2, 2]}}
        program: |
          def f(x):
              return (torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), [x]),)
        generated:
          - artifact: aot_export_graph.true_graph_0
            graph: |
              def forward(self, arg0_1):
                  sin = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None
                  return (sin,)
          - artifact: aot_export_graph.false_graph_0
            contains: [torch.ops.aten.cos.default]
        """
    (r,) = _records(tmp_path, body).values()
    assert r.status == "pass", (r.reason, [m.message() for m in r.mismatches])
    assert [g.status for g in r.generated] == ["holds", "holds"], [g.detail for g in r.generated]
    (r,) = _records(tmp_path, body.replace("aten.cos.default]", "aten.sin.default]")).values()
    assert [g.status for g in r.generated] == ["holds", "fails"], [g.detail for g in r.generated]


def test_the_exported_graph_runs_with_its_signatures_mutations_applied_and_a_dropped_one_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.core import entries

    (record,) = _records(tmp_path, EXPORTED).values()
    assert record.status == "pass", (record.reason, [m.message() for m in record.mismatches])
    assert [g.status for g in record.generated] == ["holds", "holds"], [g.detail for g in record.generated]
    monkeypatch.setattr(entries, "_write_back", lambda targets: None)  # the graph's mutations dropped
    (record,) = _records(tmp_path, EXPORTED).values()
    assert record.status == "fail", record.reason
    assert {m.check for m in record.mismatches} >= {"values"} and "m.b" in record.reason + "".join(
        m.message() for m in record.mismatches), [m.message() for m in record.mismatches]


def test_aot_export_joint_simple_runs_its_graph_and_refuses_what_it_does_not_export(tmp_path: Path) -> None:
    body = """\
        backends: [aot_export_joint_simple]
        modes: [inference, training]
        inputs:
          p: {tensor: {shape: [3], requires_grad: true}}
          x: {tensor: {shape: [3]}}
        program: |
          def f(p, x):
              return (x * 2 + p,)
        generated:
          - artifact: aot_export_graph
            contains: [torch.ops.aten.mul.Tensor(arg1_1, 2)]
        """
    for label, r in _records(tmp_path, body).items():
        assert r.status == "pass", (label, r.reason, [m.message() for m in r.mismatches])
        assert [g.status for g in r.generated] == ["holds"], [g.detail for g in r.generated]
    mutating = """\
        backends: [aot_export_joint_simple]
        modes: [training]
        inputs:
          p: {tensor: {shape: [2], requires_grad: true}}
          x: {tensor: {shape: [2, 4]}}
        program: |
          def f(p, x):
              x.t_()
              return (x * 2,)
        expect: {raises: {type: RuntimeError, match: metadata mutation, sides: [compiled]}}
        """
    for label, r in _records(tmp_path, mutating).items():
        assert r.status == "pass", (label, r.reason)  # the refusal upstream asserts, on the compiled side


DUPED = """\
    backends: [aot_module_simplified]
    modes: [training]
    config: {torch._functorch.config.debug_assert: true}
    inputs:
      x: {tensor: {shape: [3], requires_grad: true, leaf: false}}
      y: {view: "x"}
    program: |
      def f(x, y):
          x.mul_(2)
          y.mul_(2)
          return (x + y,)
    calls:
      - x: {tensor: {shape: [3], requires_grad: true, leaf: false}}
        y: {tensor: {shape: [3], requires_grad: true, leaf: false}}
    """
RAISES = "{type: AssertionError, match: 'would be a duplicate of input 0', sides: [compiled]}"


def test_a_calls_own_raises_holds_for_that_call_alone(tmp_path: Path) -> None:
    """Compiled from one tensor passed twice, without guards: the later call with two tensors is refused."""
    (r,) = _records(tmp_path, DUPED.rstrip() + f"\n        raises: {RAISES}\n").values()
    assert r.status == "pass", (r.reason, [m.message() for m in r.mismatches])
    (r,) = _records(tmp_path, DUPED).values()  # undeclared: the compiled side raises where eager runs
    assert r.status == "fail" and "call 2" in r.reason and "AssertionError" in r.reason, r.reason
    (r,) = _records(tmp_path, DUPED.replace("    calls:", f"    expect: {{raises: {RAISES}}}\n    calls:")).values()
    assert r.status == "fail" and "call 1" in r.reason, r.reason  # expect.raises is every call's


def test_aot_module_traces_symbolic_sizes_where_the_case_is_dynamic(tmp_path: Path) -> None:
    body = """\
        backends: [aot_module]
        compile: {dynamic: DYNAMIC}
        inputs:
          x: {tensor: {shape: [4, 3]}}
        program: |
          def f(x):
              return x.reshape(-1) * x.shape[0]
        generated:
          - artifact: aot_inference_graph
            contains: [sym_size]
        """
    for dynamic, said in (("true", "holds"), ("false", "fails")):
        (r,) = _records(tmp_path, body.replace("DYNAMIC", dynamic)).values()
        assert r.status == "pass" and [g.status for g in r.generated] == [said], (dynamic, r.generated)


def test_an_exports_signature_and_graph_str_are_what_an_assertion_reads(tmp_path: Path) -> None:
    """Upstream reads an export's signature (sig.user_inputs_to_mutate == {...}, 'foo' in sig.buffers) and pins
    str(gm.graph); with compile.module the names are the module's own."""
    # the module itself is exported: its forward returns the tuple aot_export_module takes
    body = EXPORTED.replace("    compile: {pre_dispatch: true}", "    compile: {pre_dispatch: true, module: m}")
    body = body.replace("return x + self.p + self.b", "return (x + self.p + self.b,)").split("    generated:")[0] + """\
    generated:
      - artifact: aot_export_signature
        contains: ["buffers: ['b']", "inputs_to_buffers: {'arg1_1': 'b'}", "user_inputs_to_mutate: {'mul': 'ARG'}"]
      - artifact: aot_export_graph_str
        contains: ["call_function[target=torch.ops.aten.mul.Tensor](args = (%arg2_1, 2)"]
    """
    (r,) = _records(tmp_path, body.replace("ARG", "arg2_1")).values()
    assert r.status == "pass" and [g.status for g in r.generated] == ["holds", "holds"], r.generated
    (r,) = _records(tmp_path, body.replace("ARG", "arg1_1")).values()
    assert [g.status for g in r.generated] == ["fails", "holds"], r.generated
    (r,) = _records(tmp_path, body.replace("ARG", "arg2_1").replace("[aot_export_module]", "[aot_module]")
                    .replace("compile: {pre_dispatch: true, module: m}", "compile: {module: m}")).values()
    assert [g.status for g in r.generated] == ["not observable", "not observable"], r.generated  # no export
