"""A case's assertions on what the build generated: stated strictly, checked on the capture, counted by parity."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from conformance.data.loader import CaseLoadError, load_case
from conformance.data.parity import asserted
from conformance.data.variants import variants_of
from conformance.probe.capture import CapturedArtifact, CaptureResult, capture_generated_sources
from conformance.probe.generated import GraphForm, graph_form, graph_statements, judge
from conformance.results import GeneratedRecord, ResultRecord
from conformance.run.runner import run_variant
from conformance.schema.generated import GeneratedAssertion

# A build's readable form of a graph (what it logs) and upstream's inline `gm.code` of the same graph.
READABLE = '''\
class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[3][1]cpu",  # PlainAOTInput(idx=0)
        primals_2: "f32[3][1]cpu",  # PlainAOTInput(idx=1)
    ):
        # File: <program>:3 in f, code: a.mul_(2)
        mul: "f32[3][1]cpu" = torch.ops.aten.mul.Tensor(primals_1, 2);  primals_1 = None
        add: "f32[3][1]cpu" = torch.ops.aten.add.Tensor(mul, primals_2);  primals_2 = None
        return (
            mul,  # InputMutationAOTOutput(mutated_input=PlainAOTInput(idx=0))
            add,  # PlainAOTOutput(idx=0)
        )
'''
INLINE = """\
def forward(self, primals_1, primals_2):
    mul = torch.ops.aten.mul.Tensor(primals_1, 2);  primals_1 = None
    add = torch.ops.aten.add.Tensor(mul, primals_2);  primals_2 = None
    return (mul, add)"""


def test_a_logged_graph_and_upstreams_inline_code_are_the_same_statements() -> None:
    assert graph_statements(READABLE) == graph_statements(INLINE) == [
        "def forward ( self , primals_1 , primals_2 ) :",
        "mul = torch . ops . aten . mul . Tensor ( primals_1 , 2 )",
        "add = torch . ops . aten . add . Tensor ( mul , primals_2 )",
        "return ( mul , add )",
    ]
    # an older upstream wrote the outputs as a list
    assert graph_statements(INLINE.replace("return (mul, add)", "return [mul, add]")) == graph_statements(INLINE)
    assert graph_statements("def forward(self, x):\n    return [x]") == graph_statements(
        "def forward(self, x):\n    return (x,)")


@pytest.mark.parametrize("change", [
    ("aten.add.Tensor(mul, primals_2)", "aten.add.Tensor(primals_2, mul)"),  # operands swapped
    ("mul, add)", "add, mul)"),  # outputs reordered
    ("(primals_1, 2)", "(primals_1, 3)"),  # a constant
    ("primals_1, primals_2):", "primals_1, primals_2, primals_3):"),  # an input more
])
def test_a_graph_that_differs_in_one_operand_differs(change: tuple[str, str]) -> None:
    assert graph_statements(INLINE.replace(*change)) != graph_statements(READABLE)


# upstream's print_readable(expanded_def=True) of the same graph, normalize_gm'd: no strides, device or File lines
EXPANDED = '''\
class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[3]",  # PlainAOTInput(idx=0)
        primals_2: "f32[3]",  # PlainAOTInput(idx=1)
    ):
        mul: "f32[3]" = torch.ops.aten.mul.Tensor(primals_1, 2);  primals_1 = None
        add: "f32[3]" = torch.ops.aten.add.Tensor(mul, primals_2);  primals_2 = None
        return (
            mul,  # InputMutationAOTOutput(mutated_input=PlainAOTInput(idx=0))
            add,  # PlainAOTOutput(idx=0)
        )
'''


def test_upstreams_readable_form_compares_annotations_and_descriptors_but_not_strides_devices_or_file_lines() -> None:
    form = graph_form(EXPANDED)
    assert form == GraphForm(annotations=True, comments=True) and graph_form(INLINE) == GraphForm()
    assert graph_statements(READABLE, form) == graph_statements(EXPANDED, form)
    assert "# PlainAOTOutput(idx=0)" in graph_statements(READABLE, form)
    assert 'mul : "f32[3]" = torch . ops . aten . mul . Tensor ( primals_1 , 2 )' in graph_statements(READABLE, form)


@pytest.mark.parametrize("change", [
    ("# PlainAOTOutput(idx=0)", "# PlainAOTOutput(idx=1)"),  # a descriptor
    ('add: "f32[3]"', 'add: "f64[3]"'),  # a dtype
    ('primals_2: "f32[3]"', 'primals_2: "f32[s0]"'),  # a size
    ("mul,  # InputMutationAOTOutput(mutated_input=PlainAOTInput(idx=0))", "mul,"),  # a descriptor left out
])
def test_a_readable_graph_that_differs_in_an_annotation_or_a_descriptor_fails(change: tuple[str, str]) -> None:
    cap = _capture(graphs=(("aot_forward_graph", READABLE),))
    assert _said(cap, artifact="aot_forward_graph", graph=EXPANDED).status == "holds"
    assert _said(cap, artifact="aot_forward_graph", graph=EXPANDED.replace(*change)).status == "fails"
    # upstream's gm.code carries neither: the same changes on the build's side do not count there
    other = _capture(graphs=(("aot_forward_graph", READABLE.replace("[3][1]cpu", "[3]").replace(*change)),))
    assert _said(other, artifact="aot_forward_graph", graph=INLINE).status == "holds"


def _capture(*sources: tuple[str, str], graphs: tuple[tuple[str, str], ...] = ()) -> CaptureResult:
    return CaptureResult([CapturedArtifact(n, s, ("trace",), 0) for n, s in sources],
                         [CapturedArtifact(n, s, ("trace-graph",), 0) for n, s in graphs])


def _said(capture: CaptureResult | None, **assertion: object) -> GeneratedRecord:
    (one,) = judge([GeneratedAssertion.model_validate(assertion)], capture, "aot_eager", "inference")
    return one


RW = "def _runtime_wrapper(args):\n    orig_inputs = {}\n    torch._C._set_grad_enabled(False)\n"


@pytest.mark.parametrize(("assertion", "status"), [
    ({"contains": ["_set_grad_enabled(False)"]}, "holds"),
    ({"contains": ["_set_grad_enabled(True)"]}, "fails"),
    ({"lacks": ["orig_inputs"]}, "fails"),
    ({"lacks": ["_replay_aliases_"]}, "holds"),
    ({"matches": [r"^\s+orig_inputs = \{\}$"]}, "holds"),
    ({"matches": [r"orig_inputs = \{0"]}, "fails"),
    ({"count": 1}, "holds"),
    ({"count": 2}, "fails"),
    ({"emitted": False}, "fails"),
])
def test_each_kind_of_assertion_holds_and_fails(assertion: dict[str, object], status: str) -> None:
    said = _said(_capture(("runtime_wrapper_orchestration", RW)), artifact="runtime_wrapper_orchestration",
                 **assertion)
    assert said.status == status, said.detail


def test_an_artifact_not_emitted_fails_where_the_build_generates_others_and_cannot_be_told_where_it_generates_none(
) -> None:
    others = _capture(("runtime_wrapper_orchestration", RW))
    assert _said(others, artifact="synthetic_base_wrapper").status == "fails"
    assert _said(others, artifact="synthetic_base_wrapper", emitted=False).status == "holds"
    # no generated function at all (a build without the codegen, the eager backend): never a pass
    for assertion in ({"artifact": "synthetic_base_wrapper"}, {"artifact": "synthetic_base_wrapper", "emitted": False},
                      {"artifact": "aot_forward_graph", "graph": INLINE}):
        assert _said(_capture(), **assertion).status == "not observable"
    # a graph cannot be told from wrapper sources, nor a wrapper from graphs
    assert _said(others, artifact="aot_forward_graph", graph=INLINE).status == "not observable"
    assert _said(None, artifact="runtime_wrapper_orchestration").status == "not observable"


def test_graphs_are_compared_normalised_and_a_difference_is_shown_as_a_diff() -> None:
    cap = _capture(graphs=(("aot_forward_graph", READABLE),))
    assert _said(cap, artifact="aot_forward_graph", graph=INLINE).status == "holds"
    said = _said(cap, artifact="aot_forward_graph", graph=INLINE.replace("(primals_1, 2)", "(primals_1, 3)"))
    assert said.status == "fails" and "-mul = torch . ops . aten . mul . Tensor ( primals_1 , 3 )" in said.detail


def test_which_instance_is_read_where_the_pass_compiled_twice() -> None:
    cap = _capture(("mutation_epilogue", "def a():\n    x.copy_(y)"), ("mutation_epilogue", "def a():\n    x.set_(y)"))
    art = "mutation_epilogue"
    assert _said(cap, artifact=art, contains=["copy_"]).status == "fails"  # every instance, by default
    assert _said(cap, artifact=art, contains=["copy_"], instance="first").status == "holds"
    assert _said(cap, artifact=art, contains=["copy_"], instance="last").status == "fails"
    assert _said(cap, artifact=art, contains=["copy_"], instance="any").status == "holds"
    assert _said(cap, artifact=art, contains=["as_strided_"], instance="any").status == "fails"


def test_an_assertion_is_checked_only_on_the_variants_it_names() -> None:
    a = GeneratedAssertion(artifact="aot_inference_graph", backends=("aot_function",), modes=("inference",))
    cap = _capture(graphs=(("aot_inference_graph", INLINE),))
    assert judge([a], cap, "aot_eager", "inference") == ()
    assert judge([a], cap, "aot_function", "training") == ()
    assert [g.status for g in judge([a], cap, "aot_function", "inference")] == ["holds"]
    on_cpu = GeneratedAssertion(artifact="aot_inference_graph", devices=("cpu",))
    assert judge([on_cpu], cap, "aot_eager", "inference", "cuda:0") == ()
    assert [g.status for g in judge([on_cpu], cap, "aot_eager", "inference", "cpu")] == ["holds"]


@pytest.mark.parametrize(("text", "message"), [
    ("- {artifact: x, emitted: false, contains: [a]}", "must not be emitted has no contains"),
    ("- {artifact: runtime_wrapper_orchestration, graph: 'def forward(self): pass'}", "compared with a traced graph"),
    ("- {artifact: x, matches: ['(']}", "not a regular expression"),
    ("- {artifact: x, count: 0}", "greater than or equal to 1"),
    ("- {artifact: x, instance: second}", "'every', 'first', 'last', 'any' or 'all'"),
    ("- {artifact: x, contain: [a]}", "unknown key 'contain'"),
])
def test_a_malformed_assertion_names_its_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "mutation_epilogue" / "c.yaml"
    path.parent.mkdir()
    path.write_text(textwrap.dedent("""\
        behavior: mutation_epilogue
        summary: s
        upstream: [https://github.com/pytorch/pytorch/pull/179600]
        inputs: {x: {tensor: {shape: [4]}}}
        program: |
          def f(x):
              return x * 2
        generated:
        """) + f"  {text}\n")
    with pytest.raises(CaseLoadError) as info:
        load_case(path, tmp_path, display="c.yaml")
    (error,) = [str(e) for e in info.value.errors]
    assert error.startswith("c.yaml:9: generated[0]") and message in error, error


CASE = """\
behavior: runtime_wrapper
summary: a plain input doubled
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_eager, eager]
inputs: {x: {tensor: {shape: [4]}}}
program: |
  def f(x):
      return x * 2
generated:
  - artifact: runtime_wrapper_orchestration
    count: 1
    contains: ["torch._C._set_grad_enabled(False)"]
    lacks: [_replay_aliases_]
  - artifact: aot_inference_graph
    graph: |
      def forward(self, arg0_1):
          mul = torch.ops.aten.mul.Tensor(arg0_1, 2);  arg0_1 = None
          return (mul,)
  - artifact: aot_inference_graph
    backends: [aot_eager]
    graph: |
      def forward(self, arg0_1):
          mul = torch.ops.aten.mul.Tensor(arg0_1, 3);  arg0_1 = None
          return (mul,)
"""


def _records(tmp_path: Path, text: str, **options: object) -> dict[str, ResultRecord]:
    path = tmp_path / "runtime_wrapper" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    lc = load_case(path, tmp_path)
    return {v.backend_label: run_variant(lc, v) for v in variants_of(lc.case, devices=["cpu"])}


def test_a_run_checks_the_assertions_on_what_the_build_generated_and_parity_counts_them(tmp_path: Path) -> None:
    with capture_generated_sources(warn=False) as seen:
        torch.compile(lambda x: x * 2, backend="aot_eager")(torch.randn(4))
    if "runtime_wrapper_orchestration" not in seen.names():
        pytest.skip(f"torch {torch.__version__} generates no runtime wrapper source")
    records = _records(tmp_path, CASE)
    aot, eager = records["aot_eager"], records["eager"]
    assert aot.status == eager.status == "pass"  # an assertion never changes the item's status
    assert [g.status for g in aot.generated] == ["holds", "holds", "fails"]
    assert "aten . mul . Tensor ( arg0_1 , 3 )" in aot.generated[2].detail
    assert [g.status for g in eager.generated] == ["not observable", "not observable"]  # generates nothing
    assert asserted("eager and source", records.values()) == "fails"
    fixed = CASE.replace("(arg0_1, 3)", "(arg0_1, 2)")
    assert asserted("eager and source", _records(tmp_path, fixed).values()) == "holds"
    assert asserted("eager and source", [eager]) == "not observable"  # seen nowhere: never a holds


def test_a_region_whose_output_requires_grad_is_predicted_to_train_though_the_program_returns_none(
        tmp_path: Path) -> None:
    """torch.autograd.grad inside the program: dynamo compiles exp(x) (it requires grad) and runs the grad outside
    the graph; the program's only output, the gradient, does not require grad. The reference must predict the
    training path the build takes (it predicted inference, a divergence on a passing item)."""
    records = _records(tmp_path, """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_eager]
modes: [training]
inputs: {x: {tensor: {shape: [], requires_grad: true}}}
program: |
  def f(x):
      y = torch.exp(x)
      return torch.autograd.grad(y, x)
""")
    probes = {p.behavior: p.status for p in records["aot_eager"].probes.results}
    if probes["runtime_wrapper"] == "absent":
        pytest.skip(f"torch {torch.__version__} generates no runtime wrapper source")
    assert probes["runtime_wrapper"] == "conforms", records["aot_eager"].probes


@pytest.mark.parametrize("garbage", ['def forward(self, x:\n    return (x', '"""unterminated', "", "\x00\n)))"])
def test_a_graph_text_that_does_not_tokenise_is_compared_line_by_line_never_a_crash(garbage: str) -> None:
    cap = _capture(graphs=(("aot_forward_graph", garbage),))
    said = _said(cap, artifact="aot_forward_graph", graph=INLINE)
    assert said.status == "fails" and "the graph differs" in said.detail
    # and upstream's text itself garbled: the build's good graph does not hold against it
    cap = _capture(graphs=(("aot_forward_graph", READABLE),))
    assert _said(cap, artifact="aot_forward_graph", graph=garbage or "x").status == "fails"


GUARDS = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
backends: [aot_eager, aot_function]
compile: {dynamic: true}
inputs:
  base: {tensor: {shape: [20], dtype: int64, init: arange}, hidden: true}
  other: {tensor: {shape: [20], dtype: int64, init: arange}, hidden: true}
  a: {view: "base[:10]"}
  b: {view: "SECOND"}
program: |
  def f(a, b):
      a.add_(1)
      b.add_(1)
      return a
generated:
  - artifact: dynamo_cpp_guards_str
    backends: [aot_eager, aot_function]
    lacks: ["check_overlapping("]
"""


@pytest.mark.parametrize(("second", "overlap"), [("base[5:15]", True), ("other[5:15]", False)])
def test_dynamos_guards_are_text_an_assertion_reads_and_an_entry_without_dynamo_cannot_tell(
        tmp_path: Path, second: str, overlap: bool) -> None:
    """Upstream's StorageOverlap-guard tests: mutated views of one base that overlap get the guard, views of two
    bases do not (its code part is `check_overlapping(...)` in dynamo's guard tree)."""
    records = _records(tmp_path, GUARDS.replace("SECOND", second))
    (said,) = records["aot_eager"].generated
    assert said.status == ("fails" if overlap else "holds"), said.detail
    if overlap:
        assert "check_overlapping(" in said.detail
    (said,) = records["aot_function"].generated
    assert said.status == "not observable", said.detail  # no dynamo, no guards: it cannot tell


EVERY_NODE_HAS_TENSOR_META = r"^(?!output )\S+ \S+:(?!.*\btensor_meta\b)"


@pytest.mark.parametrize(("meta", "status"), [
    ("placeholder x: tensor_meta, val\ncall_function mul: seq_nr, tensor_meta, val\noutput output: desc", "holds"),
    ("placeholder x: tensor_meta, val\ncall_function mul_: seq_nr, val\noutput output: desc", "fails"),
    ("placeholder x: val\noutput output: desc", "fails"),
])
def test_an_assertion_on_every_node_s_meta_fails_on_the_node_that_breaks_it(meta: str, status: str) -> None:
    cap = _capture(graphs=(("fw_compiler_node_meta", meta), ("aot_forward_graph", READABLE)))
    said = _said(cap, artifact="fw_compiler_node_meta", no_match=[EVERY_NODE_HAS_TENSOR_META])
    assert said.status == status, said.detail
    if status == "fails":
        assert "which upstream asserts nothing does" in said.detail
    # a pass whose forward compiler is not the harness's (torch.compile's backends) cannot tell
    alone = _capture(graphs=(("aot_forward_graph", READABLE), ("dynamo_cpp_guards_str", "TREE_GUARD_MANAGER:")))
    assert _said(alone, artifact="fw_compiler_node_meta", no_match=[EVERY_NODE_HAS_TENSOR_META]).status == (
        "not observable")


def test_the_entry_s_forward_compiler_lists_each_node_s_meta_keys(tmp_path: Path) -> None:
    records = _records(tmp_path, """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
devices: [cpu]
backends: [aot_function]
modes: [training]
inputs:
  x: {tensor: {shape: [3], requires_grad: true}}
program: |
  def f(x):
      return x.sin() * 2
generated:
  - artifact: fw_compiler_node_meta
    count: 1
    no_match: ['^(?!output )\\S+ \\S+:(?!.*\\btensor_meta\\b)']
    matches: ['^call_function sin: .*\\bval\\b', '^placeholder primals_1: ', '^output output: ']
  - artifact: fw_compiler_node_meta
    no_match: ['^call_function sin: .*\\bval\\b']
""")
    assert [g.status for g in records["aot_function"].generated] == ["holds", "fails"], records


@pytest.mark.parametrize(("counts", "status"), [
    ({"^call_(function|method|module) ": 2}, "holds"),
    ({"^call_(function|method|module) ": 3}, "fails"),
    ({"^placeholder ": 1, "^output ": 1}, "holds"),
])
def test_line_counts_count_the_lines_each_pattern_matches_exactly(counts: dict[str, int], status: str) -> None:
    nodes = "placeholder l_x_: example_value\ncall_method sin: example_value\ncall_function mul: example_value\n" \
            "output output: creation_timestamp"
    cap = _capture(graphs=(("dynamo_graph_node_meta", nodes),))
    said = _said(cap, artifact="dynamo_graph_node_meta", line_counts=counts)
    assert said.status == status, said.detail
    # the nodes of an entry's forward graph are another family: a pass that logged only those cannot tell
    other = _capture(graphs=(("fw_compiler_node_meta", nodes),))
    assert _said(other, artifact="dynamo_graph_node_meta", line_counts=counts).status == "not observable"


def test_dynamos_graphs_are_read_as_upstreams_compile_counter_reads_them(tmp_path: Path) -> None:
    records = _records(tmp_path, """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
devices: [cpu]
backends: [eager]
modes: [inference]
inputs:
  x: {tensor: {shape: [3]}}
program: |
  def f(x):
      return x.sin() * 2
generated:
  - artifact: dynamo_graph_node_meta
    count: 1
    line_counts: {'^call_(function|method|module) ': 2}
  - artifact: dynamo_graph_node_meta
    line_counts: {'^call_(function|method|module) ': 1}
  - artifact: dynamo_output_graph
    graph: |
      class GraphModule(torch.nn.Module):
          def forward(self, L_x_: "f32[3]"):
              l_x_ = L_x_
              sin: "f32[3]" = l_x_.sin();  l_x_ = None
              mul: "f32[3]" = sin * 2;  sin = None
              return (mul,)
  - artifact: dynamo_output_graph
    graph: |
      class GraphModule(torch.nn.Module):
          def forward(self, L_x_: "f32[3]"):
              l_x_ = L_x_
              sin: "f32[3]" = l_x_.sin();  l_x_ = None
              mul: "f32[3]" = sin * 3;  sin = None
              return (mul,)
""")
    assert [g.status for g in records["eager"].generated] == ["holds", "fails", "holds", "fails"], records


def test_instance_all_reads_every_instance_as_one_text() -> None:
    one = "placeholder x: val\ncall_function mul: val\noutput output: x"
    two = "placeholder x: val\ncall_function sin: val\ncall_method cos: val\noutput output: x"
    cap = _capture(graphs=(("dynamo_graph_node_meta", one), ("dynamo_graph_node_meta", two)))
    calls = "^call_(function|method|module) "
    assert _said(cap, artifact="dynamo_graph_node_meta", instance="all", line_counts={calls: 3}).status == "holds"
    said = _said(cap, artifact="dynamo_graph_node_meta", instance="all", line_counts={calls: 2})
    assert said.status == "fails" and "3 line(s) match" in said.detail
    # per instance, no one graph holds 3
    assert _said(cap, artifact="dynamo_graph_node_meta", instance="any", line_counts={calls: 3}).status == "fails"
    with pytest.raises(ValueError, match="instance: all reads every instance's text as one"):
        GeneratedAssertion.model_validate({"artifact": "aot_forward_graph", "instance": "all", "graph": "x"})


NAMED_TEXT = """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_eager, aot_function]
config:
  torch._functorch.config.donated_buffer: true
modes: [training]
inputs:
  x: {tensor: {shape: [3, 2], requires_grad: true}}
  z: {tensor: {shape: [2, 2], requires_grad: true}}
program: |
  def f(x, z):
      return torch.mm(x.view(2, 3), x) + torch.nn.functional.relu(z)
calls:
  - {x: {tensor: {shape: [3, 2], requires_grad: true, dtype: float64}}}
generated:
  - artifact: aot_forward_graph_fw_metadata
    backends: [aot_eager]
    contains: ["bw_donated_idxs=[DONATED]"]
  - artifact: recompile_reasons
    backends: [aot_eager]
    contains: [REASON]
  - artifact: aot_forward_graph_fw_metadata
    backends: [aot_function]
    contains: ["bw_donated_idxs=["]
"""


@pytest.mark.parametrize(("donated", "reason", "status"), [
    ("1", "dtype mismatch", "holds"), ("0", "dtype mismatch", "fails"), ("1", "no such guard", "fails")])
def test_the_guard_failures_behind_a_recompile_and_aot_autograds_metadata_are_text_an_assertion_reads(
        tmp_path: Path, donated: str, reason: str, status: str) -> None:
    """Upstream's guard_fail_fn reads why dynamo recompiled; its donated-buffer tests read bw_donated_idxs off
    AOTAutograd's log of each compile's metadata."""
    records = _records(tmp_path, NAMED_TEXT.replace("DONATED", donated).replace("REASON", repr(reason)))
    metadata, reasons = records["aot_eager"].generated
    assert {metadata.status, reasons.status} == ({"holds"} if status == "holds" else {"holds", "fails"}), (
        metadata.detail, reasons.detail)
    (metadata,) = records["aot_function"].generated  # an entry without dynamo logs its metadata too
    assert metadata.status == "holds", metadata.detail


def test_each_logged_text_is_a_family_of_its_own() -> None:
    """A pass that logged one kind of text (dynamo's guards) cannot tell of another (a recompile's reasons, a shape
    env's guards, AOTAutograd's metadata): an assertion on the other is not observable there, never a fail."""
    from conformance.probe import generated
    from conformance.schema.generated import TEXT_ARTIFACTS

    families = [generated._family(a) for a in TEXT_ARTIFACTS]
    assert len(set(families)) == len(TEXT_ARTIFACTS) and "traced graph" not in families, families


CONTEXT_GUARDS = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager, aot_function]
modes: [inference]
compile: {dynamic: true}
inputs:
  base: {tensor: {shape: [20], dtype: int64, init: arange}, hidden: true}
  a: {view: "base[:10]"}
  b: {view: "base[SLICE]"}
program: |
  def f(*args):
      for t in args:
          t.add_(1)
      return args[0]
generated:
  - artifact: aotautograd_guards
    count: 1
    line_counts:
      "^StorageOverlap\\\\(overlapping_sources=\\\\[\\\\S+, \\\\S+\\\\], non_overlapping_sources=\\\\[\\\\]\\\\)": 1
  - artifact: dynamo_shape_env_guards
    lacks: [compute_overlapping_inputs]
    fewer_lines_than: LIMIT
"""


@pytest.mark.parametrize(("view", "limit", "statuses"), [
    ("5:15", 1000, ["holds", "holds"]), ("10:", 1000, ["fails", "holds"]), ("5:15", 1, ["holds", "fails"])])
def test_what_upstreams_backends_read_off_a_compiles_contexts_is_text_an_assertion_reads(
        tmp_path: Path, view: str, limit: int, statuses: list[str]) -> None:
    """Upstream's torch.compile backends keep the TracingContext's AOTAutograd guards (a StorageOverlap guard where
    two mutated inputs share memory) and the CompileContext's ShapeEnv guards, and read them once the call ends; an
    entry without dynamo has no such contexts, so it cannot tell."""
    records = _records(tmp_path, CONTEXT_GUARDS.replace("SLICE", view).replace("LIMIT", str(limit)))
    said = records["aot_eager"].generated
    assert [g.status for g in said] == statuses, [g.detail for g in said]
    assert [g.status for g in records["aot_function"].generated] == ["not observable"] * 2


SUBCLASS_METADATA = """\
behavior: subclass_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/176741]
devices: [cpu]
backends: [aot_eager]
modes: [inference]
inputs:
  x: INPUT
program: |
  def f(x):
      return x * 2
generated:
  - artifact: aot_forward_graph_fw_subclass_metadata
    contains: ["SubclassMeta(fw_metadata="]
  - artifact: aot_forward_graph_fw_subclass_metadata
    lacks: ["SubclassMeta("]
"""


@pytest.mark.parametrize(("given", "statuses"), [
    ("{two_tensor: {a: {tensor: {shape: [3]}}, b: {tensor: {shape: [3]}}}}", ["holds", "fails"]),
    ("{tensor: {shape: [3]}}", ["not observable"] * 2)])
def test_aot_autograds_subclass_metadata_is_text_of_its_own(tmp_path: Path, given: str, statuses: list[str]) -> None:
    """AOTAutograd logs a compile's SubclassMeta (its desugared static_input_idxs among it) only where a subclass is
    among the inputs or outputs: a pass with none logged no such text, so it cannot tell."""
    said = _records(tmp_path, SUBCLASS_METADATA.replace("INPUT", given))["aot_eager"].generated
    assert [g.status for g in said] == statuses, [g.detail for g in said]
