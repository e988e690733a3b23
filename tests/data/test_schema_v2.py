"""Schema v2: what each feature builds and checks, the line errors of bad v2 input, and the
oracles that v2 state (persisted modules, optimizer state, caller actions) adds, each shown to fail."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from conformance.cli import main
from conformance.core.build import Env, build_inputs, call_points, load_classes, tensors_of
from conformance.core.call import version_mode
from conformance.core.loop import Target, recompile_note
from conformance.data.deep_check import checker
from conformance.data.loader import CaseLoadError, LoadedCase, discover, load_case
from conformance.data.variants import Variant
from conformance.results import ResultRecord
from conformance.run.runner import run_variant
from tests.helpers.cases import CaseFactory

ROOT = Path(__file__).parents[2]
HEAD = """\
behavior: {behavior}
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager]
"""


def case(make_case: CaseFactory, body: str, behavior: str = "mutation_epilogue") -> LoadedCase:
    return make_case(HEAD.format(behavior=behavior) + textwrap.dedent(body))


def run(lc: LoadedCase, mode: str = "inference", backend: str = "aot_eager") -> ResultRecord:
    return run_variant(lc, Variant("cpu", backend, mode))


def errors(tmp_path: Path, body: str, *, deep: bool = True, devices: str = "[cpu]") -> list[str]:
    path = tmp_path / "cases" / "bad.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    head = HEAD.format(behavior="subclass_wrapper").replace("devices: [cpu]", f"devices: {devices}")
    path.write_text(head + textwrap.dedent(body))
    try:
        load_case(path, tmp_path / "cases", display="bad.yaml", check=checker(backends=True) if deep else None)
    except CaseLoadError as exc:
        return [str(e) for e in exc.errors]
    return []


# ----------------------------------------------------------------------------- bad v2 input


def test_a_class_the_classes_block_does_not_define_is_a_line_error(tmp_path: Path) -> None:
    assert errors(tmp_path, """\
        classes: |
          class MyTwo(torch.Tensor):
              pass
        inputs:
          x: {subclass: {class: MyThree, args: [{tensor: {shape: [2]}}]}}
        program: |
          def f(x):
              return x
        """, deep=False) == ["bad.yaml:10: inputs.x.subclass.class: class 'MyThree' is not defined in the classes "
                             "block (it defines: MyTwo); or give a dotted import path"]


def test_a_module_class_that_is_not_a_module_is_a_line_error(tmp_path: Path) -> None:
    assert errors(tmp_path, """\
        inputs:
          m: {module: {class: torch.Tensor}}
        program: |
          def f(m):
              return 1
        """) == ["bad.yaml:7: inputs.m.module.class: module class 'torch.Tensor' is not a "
                 "torch.nn.modules.module.Module"]


def test_an_optimizer_over_a_non_module_or_unpersisted_input_is_a_line_error(tmp_path: Path) -> None:
    assert errors(tmp_path, """\
        inputs:
          x: {tensor: {shape: [2]}}
          net: {module: {class: torch.nn.Linear, args: [2, 2]}}
          a: {optimizer: {class: torch.optim.SGD, params: x, kwargs: {lr: 0.1}}}
          b: {optimizer: {class: torch.optim.SGD, params: net, kwargs: {lr: 0.1}}}
          c: {optimizer: {class: torch.nn.Linear, params: later}}
          later: {module: {class: torch.nn.Linear, args: [2, 2]}, persist: true}
        program: |
          def f(x, net, a, b, c, later):
              return 1
        """) == [
        "bad.yaml:9: inputs.a.optimizer.params: 'x': an optimizer steps the parameters of a module input declared "
        "before it (earlier module inputs: net)",
        "bad.yaml:10: inputs.b.optimizer.params: 'net': net is rebuilt for every call; give it persist: true so "
        "that the optimizer steps the module the program gets",
        "bad.yaml:11: inputs.c.optimizer.class: optimizer class 'torch.nn.Linear' is not a "
        "torch.optim.optimizer.Optimizer",
        "bad.yaml:11: inputs.c.optimizer.params: 'later': an optimizer steps the parameters of a module input "
        "declared before it (earlier module inputs: net)",
    ]


def _case_with_backend(tmp_path: Path, backend: str) -> Path:
    """A one-line program compiled with aot_eager and `backend`, at cases/<backend>.yaml."""
    body = """\
        inputs:
          x: {tensor: {shape: [2]}}
        program: |
          def f(x):
              return x * 2
        """
    head = HEAD.format(behavior="runtime_wrapper")
    text = head.replace("backends: [aot_eager]", f"backends: [aot_eager, {backend}]") + textwrap.dedent(body)
    path = tmp_path / "cases" / f"{backend}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def test_an_unknown_backend_is_a_validate_error_and_a_run_skip(tmp_path: Path) -> None:
    path = _case_with_backend(tmp_path, "vendorx")
    with pytest.raises(CaseLoadError) as exc:
        load_case(path, tmp_path / "cases", display="vendorx.yaml", check=checker(backends=True))
    assert [str(e).split(" (registered:")[0] for e in exc.value.errors] == [
        "vendorx.yaml:5: backends[1]: 'vendorx' is not a torch.compile backend registered on this build"]
    lc = load_case(path, tmp_path / "cases", check=checker(backends=False))  # what a run collects
    record = run(lc, backend="vendorx")
    assert (record.status, record.skip_kind) == ("skip", "feature")
    assert "backend 'vendorx' is not registered on this build" in record.reason


def test_a_config_flag_this_build_lacks_is_a_validate_error_and_a_run_skip(tmp_path: Path) -> None:
    body = """\
        config:
          torch._dynamo.config.specialize_float: false
          torch._dynamo.config.specialise_float: false
          torch._nonesuch.config.flag: 1
        inputs:
          x: {tensor: {shape: [2]}}
        program: |
          def f(x):
              return x * 2
        """
    path = tmp_path / "cases" / "flag.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(HEAD.format(behavior="runtime_wrapper") + textwrap.dedent(body))
    with pytest.raises(CaseLoadError) as exc:
        load_case(path, tmp_path / "cases", display="flag.yaml", check=checker(backends=True))
    assert [str(e) for e in exc.value.errors] == [
        f"flag.yaml:8: config.torch._dynamo.config.specialise_float: no such flag in this build (torch "
        f"{torch.__version__}); did you mean specialize_float?; a run skips the case with this reason",
        f"flag.yaml:9: config.torch._nonesuch.config.flag: no module torch._nonesuch.config in this build (torch "
        f"{torch.__version__}); a run skips the case with this reason"]
    record = run(load_case(path, tmp_path / "cases", check=checker(backends=False)))  # what a run collects
    assert (record.status, record.skip_kind) == ("skip", "feature")
    assert record.reason.startswith("config: torch._dynamo.config.specialise_float: no such flag in this build")


def test_a_config_key_outside_a_torch_config_module_is_an_error_at_its_line(tmp_path: Path) -> None:
    assert errors(tmp_path, """\
        config:
          torch.fx.config.disable_progress: true
        inputs:
          x: {tensor: {shape: [2]}}
        program: |
          def f(x):
              return x * 2
        """) == ["bad.yaml:7: config.torch.fx.config.disable_progress: torch.fx.config is not a torch config module "
                 "(it has no patch()); name a flag of e.g. torch._dynamo.config or torch._inductor.config"]


@pytest.mark.skipif(importlib.util.find_spec("tvm") is not None, reason="apache-tvm is installed here")
def test_a_registered_backend_whose_package_is_missing_is_a_validate_error_and_a_run_skip(tmp_path: Path) -> None:
    path = _case_with_backend(tmp_path, "tvm")
    with pytest.raises(CaseLoadError) as exc:
        load_case(path, tmp_path / "cases", display="tvm.yaml", check=checker(backends=True))
    assert [str(e) for e in exc.value.errors] == [
        "tvm.yaml:5: backends[1]: backend 'tvm' needs the apache-tvm package, which is not installed here (no module "
        "'tvm'); a run skips it with this reason"]
    record = run(load_case(path, tmp_path / "cases", check=checker(backends=False)), backend="tvm")
    assert (record.status, record.skip_kind) == ("skip", "feature"), record.reason  # was a fail: ImportError
    assert "needs the apache-tvm package" in record.reason


def test_a_classes_block_that_raises_is_an_error_at_its_line(tmp_path: Path) -> None:
    assert errors(tmp_path, """\
        classes: |
          class Fine(torch.nn.Module):
              pass
          raise ValueError("boom")
        inputs:
          m: {module: {class: Fine}}
        program: |
          def f(m):
              return 1
        """) == ["bad.yaml:9: classes: the classes block raised ValueError: boom at classes of bad.yaml:9"]


def test_syntax_errors_in_classes_and_actions_are_at_their_lines(tmp_path: Path) -> None:
    assert errors(tmp_path, """\
        classes: |
          class Fine:
              pass
          def broken(:
        inputs:
          x: {tensor: {shape: [2]}}
        program: |
          def f(x):
              return x
        calls:
          - before: |
              x.add_(1)
              y = (
        """, deep=False) == ["bad.yaml:9: classes: invalid syntax",
                             "bad.yaml:18: calls[0].before: '(' was never closed"]


def test_a_version_1_file_using_a_version_2_key_names_the_key(tmp_path: Path) -> None:
    assert errors(tmp_path, """\
        version: 1
        inputs:
          x: {tensor: {values: [1.0, 2.0]}, persist: true}
        program: |
          def f(x):
              return x
        """, deep=False) == [
        "bad.yaml:8: inputs.x.persist: persist is schema version 2; write version: 2 (or leave version out)",
        "bad.yaml:8: inputs.x.tensor.values: values is schema version 2; write version: 2 (or leave version out)",
    ]


@pytest.mark.parametrize(("values", "extra", "message"), [
    ("[[1, 2], [3]]", "", "values: the lists at nesting level 1 have lengths [1, 2] (ragged)"),
    ("[1, 2.5]", ", dtype: int64", "values: 2.5 is not an integer (dtype int64)"),
    ("[300]", ", dtype: uint8", "values: 300 is out of range for uint8 [0, 255]"),
    ("[1, 0]", ", dtype: bool", "values: 1 is not a bool (dtype bool)"),
    ("[true]", "", "values: True is not a number (dtype float32)"),
    ("[1, 2]", ", shape: [3]", "shape [3] disagrees with values, which have shape [2]"),
    ("[1, 2]", ", init: ones", "give values or init, not both"),
])
def test_bad_values_are_line_errors(tmp_path: Path, values: str, extra: str, message: str) -> None:
    assert errors(tmp_path, f"""\
        inputs:
          x: {{tensor: {{values: {values}{extra}}}}}
        program: |
          def f(x):
              return x
        """, deep=False) == [f"bad.yaml:7: inputs.x.tensor: {message}"]


def test_every_v1_case_of_the_corpus_still_says_version_1_semantics() -> None:
    """A case file that writes none of the v2 input keys loads with each of them at its default."""
    checked = 0
    for path in discover([ROOT / "cases"]):
        if any(key in path.read_text(encoding="utf-8") for key in ("persist:", "optimizer:", "subclass:")):
            continue
        lc = load_case(path, ROOT / "cases")
        checked += 1
        assert all(not s["persist"] and s["optimizer"] is None and s["subclass"] is None
                   for s in lc.data["inputs"].values()), path
    assert checked > 300  # most of the corpus


# ----------------------------------------------------------------------------- what v2 builds


def test_values_build_exactly_the_given_tensor_in_the_given_layout(make_case: CaseFactory) -> None:
    lc = case(make_case, """\
        inputs:
          x: {tensor: {values: [[1, 2, 3], [4, 5, 6]], dtype: int32, layout: transposed}}
          s: {tensor: {values: 7.5, dtype: float64}}
          b: {tensor: {values: [true, false], dtype: bool}, hidden: true}
        program: |
          def f(x, s):
              return x
        """)
    built = build_inputs(lc.data, "cpu", "inference")
    x, s, b = built.named["x"], built.named["s"], built.named["b"]
    assert x.tolist() == [[1, 2, 3], [4, 5, 6]] and x.dtype == torch.int32 and x.stride() == (1, 2)
    assert s.shape == () and s.item() == 7.5 and s.dtype == torch.float64
    assert b.dtype == torch.bool and b.tolist() == [True, False]


def test_module_classes_are_equal_independent_instances_frozen_in_inference(make_case: CaseFactory) -> None:
    lc = case(make_case, """\
        inputs:
          net: {module: {class: torch.nn.Linear, args: [3, 2], kwargs: {bias: false}, train: false, dtype: float64}}
        program: |
          def f(net):
              return net.weight
        """)
    eager = build_inputs(lc.data, "cpu", "training").named["net"]
    comp = build_inputs(lc.data, "cpu", "training").named["net"]
    assert eager is not comp and eager.weight is not comp.weight and torch.equal(eager.weight, comp.weight)
    assert eager.weight.dtype == torch.float64 and eager.bias is None and not eager.training
    assert eager.weight.requires_grad
    assert not build_inputs(lc.data, "cpu", "inference").named["net"].weight.requires_grad


def test_persisted_inputs_and_optimizers_are_built_once_per_pass(make_case: CaseFactory) -> None:
    lc = case(make_case, """\
        inputs:
          net: {module: {class: torch.nn.Linear, args: [2, 2]}, persist: true}
          opt: {optimizer: {class: torch.optim.Adam, params: net, kwargs: {lr: 0.1}}}
          x: {tensor: {shape: [2]}}
        program: |
          def f(net, opt, x):
              opt.zero_grad()
              net(x).sum().backward()
              opt.step()
        calls: [{}]
        modes: [training]
        """)
    env = Env()
    first, second = (build_inputs(lc.data, "cpu", "training", p, env) for p in call_points(lc.data))
    assert first.named["net"] is second.named["net"] and first.named["opt"] is second.named["opt"]
    assert first.named["x"] is not second.named["x"]
    assert set(first.grad_leaves) == set(second.grad_leaves) == {"net.weight", "net.bias"}
    opt, net = first.named["opt"], first.named["net"]  # the step, by hand: state named after the parameters
    net(first.named["x"]).sum().backward()
    opt.step()
    assert {n for n in tensors_of(first.named) if n.startswith("opt.")} == {
        f"opt.state[net.{p}].{k}" for p in ("weight", "bias") for k in ("step", "exp_avg", "exp_avg_sq")}


def test_the_classes_block_is_one_module_whose_names_the_program_sees(make_case: CaseFactory) -> None:
    lc = case(make_case, """\
        classes: |
          SCALE = 3.0

          class Double(torch.nn.Module):
              def forward(self, x):
                  return x * 2
        inputs:
          m: {module: {class: Double}}
          x: {tensor: {shape: [3]}}
        program: |
          def f(m, x):
              return m(x) * SCALE
        """, behavior="runtime_wrapper")
    classes = load_classes(lc.classes_source, lc.classes_filename)
    assert classes["Double"].__module__ in sys.modules and classes["SCALE"] == 3.0
    assert run(lc).status == "pass"


def test_a_wrapper_subclass_without_flatten_made_in_the_program_is_no_harness_error(make_case: CaseFactory) -> None:
    """It was: its storage refuses data_ptr (an exception) and set_ on it segfaults the worker."""
    lc = case(make_case, """\
        classes: |
          class Boxed(torch.Tensor):
              @staticmethod
              def __new__(cls, elem):
                  return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

              def __init__(self, elem):
                  self.elem = elem

              @classmethod
              def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                  unbox = lambda t: t.elem if isinstance(t, Boxed) else t
                  out = func(*torch.utils._pytree.tree_map(unbox, args), **(kwargs or {}))
                  return torch.utils._pytree.tree_map(lambda t: Boxed(t) if isinstance(t, torch.Tensor) else t, out)
        inputs:
          x: {tensor: {shape: [4]}}
        program: |
          def f(x):
              y = x.sin()
              return Boxed(y), y
        """, behavior="subclass_wrapper")
    record = run(lc)
    assert record.status == "pass", record.reason


def test_a_fresh_output_s_scratch_storage_is_not_compared(make_case: CaseFactory) -> None:
    """eager's mse_loss leaves its 0-dim result in a 16-element buffer it never fully writes."""
    lc = case(make_case, """\
        inputs:
          a: {tensor: {shape: [16]}}
          b: {tensor: {shape: [16]}}
        program: |
          def f(a, b):
              return torch.nn.functional.mse_loss(a, b)
        """, behavior="runtime_wrapper")
    for backend in ("aot_eager", "inductor"):
        record = run(lc, backend=backend)
        assert record.status == "pass", record.mismatches


# ----------------------------------------------------------------------------- oracles v2 adds, shown failing


def test_optimizer_state_is_compared_after_every_step(make_case: CaseFactory) -> None:
    """A compiled step that skips the optimizer leaves different weights and no state: both are caught."""
    lc = case(make_case, """\
        inputs:
          net: {module: {class: torch.nn.Linear, args: [2, 2]}, persist: true}
          opt: {optimizer: {class: torch.optim.SGD, params: net, kwargs: {lr: 0.1, momentum: 0.9}}}
          x: {tensor: {shape: [4, 2]}}
        program: |
          def step(net, opt, x):
              opt.zero_grad()
              loss = net(x).pow(2).mean()
              loss.backward()
              if not torch.compiler.is_compiling():
                  opt.step()
              return loss.detach()
        modes: [training]
        """)
    record = run(lc, mode="training")
    assert record.status == "fail"
    found = {(m.where, m.check) for m in record.mismatches}
    assert ("input opt.state[net.weight].momentum_buffer", "exists") in found
    assert ("input net.weight", "values") in found


def test_caller_actions_run_on_both_sides_with_out_and_rebinding(make_case: CaseFactory) -> None:
    """x persists: [1, 2, 3] -> call 1 doubles x[:2]: [2, 4, 3] (the harness's write-through is
    undone) -> before call 2, out[0] (that view) += 10: [12, 14, 3], and w is rebound to fives ->
    call 2: [24, 28, 3] -> call 3 (w fresh ones again): [48, 56, 3] = out[1] in its after."""
    lc = case(make_case, """\
        inputs:
          x: {tensor: {values: [1.0, 2.0, 3.0]}, persist: true}
          w: {tensor: {values: [1.0, 1.0, 1.0]}}
        program: |
          def f(x, w):
              return x[:2].mul_(2), x * w
        calls:
          - before: |
              out[0].add_(10)
              w = torch.full((3,), 5.0)
          - after: |
              assert out[1].tolist() == [48.0, 56.0, 3.0], out[1].tolist()
        """, behavior="runtime_wrapper")
    record = run(lc)
    assert record.status == "pass", record.mismatches
    assert record.calls == 3


def test_a_caller_action_that_fails_on_the_compiled_side_only_is_a_mismatch(make_case: CaseFactory) -> None:
    lc = case(make_case, """\
        inputs:
          x: {tensor: {shape: [3]}}
        program: |
          def f(x):
              if torch.compiler.is_compiling():
                  return (x * 2,)
              return {"y": x * 2}
        calls:
          - after: |
              out.keys()
        """, behavior="runtime_wrapper")
    record = run(lc)
    assert record.status == "fail"
    assert any(m.where == "call 2 (after: out.keys()): calls[0].after" and m.check == "exception"
               and m.actual.startswith("AttributeError") for m in record.mismatches), record.mismatches


def test_a_caller_action_that_fails_on_eager_is_a_case_error(make_case: CaseFactory) -> None:
    lc = case(make_case, """\
        inputs:
          x: {tensor: {shape: [3]}}
        program: |
          def f(x):
              return x * 2
        calls:
          - before: |
              undefined_name + 1
        """, behavior="runtime_wrapper")
    record = run(lc)
    assert record.status == "error"
    assert "calls[0].before: eager raised NameError" in record.reason


def test_scoped_version_relaxes_only_the_named_tensors(make_case: CaseFactory) -> None:
    body = textwrap.dedent("""\
        inputs:
          bn: {module: {class: torch.nn.BatchNorm1d, args: [3]}}
          x: {tensor: {shape: [4, 3]}}
        program: |
          def f(bn, x):
              return bn(x)
        """)
    strict = run(case(make_case, body))
    assert {m.where for m in strict.mismatches} == {"input bn.running_mean", "input bn.running_var"}
    scoped = run(case(make_case, body + "expect:\n  version: {bn.running_mean: ignore, bn.running_var: ignore}\n"))
    assert scoped.status == "pass", scoped.mismatches
    partly = run(case(make_case, body + "expect:\n  version: {bn.running_mean: ignore}\n"))
    assert {m.where for m in partly.mismatches} == {"input bn.running_var"}


@pytest.mark.parametrize(("version", "name", "mode"), [
    ("exact", "anything", "exact"),
    ({"bn": "ignore"}, "bn.running_mean", "ignore"),
    ({"bn": "ignore", "bn.weight": "exact"}, "bn.weight", "exact"),
    ({"bn": "ignore"}, "bnx", "moved"),
    ({"opt": "exact"}, "opt.state[net.w].step", "exact"),
    ({"x": "exact"}, "y", "moved"),
])
def test_version_mode_takes_the_longest_key_naming_the_tensor(version: object, name: str, mode: str) -> None:
    assert version_mode({"expect": {"version": version}}, name) == mode


def test_recompiles_without_expect_compiles_are_recorded_never_a_verdict(make_case: CaseFactory) -> None:
    lc = case(make_case, """\
        config:
          torch._dynamo.config.specialize_float: true
        inputs:
          x: {tensor: {shape: [3]}}
          s: {scalar: {values: [0.5, 1.5, 2.5]}}
        program: |
          def f(x, s):
              return x * s
        """, behavior="scalar_recompile")
    record = run(lc)
    assert record.status == "pass"
    assert record.recompiles == ("3 graph(s) over 3 calls, 2 of them after the first call (a recompile on every "
                                 "call); expect.compiles is not set")


def test_recompile_note_is_silent_where_the_case_bounds_the_count_or_nothing_recompiled() -> None:
    target = Target("", "f", "<p>", "cpu", "aot_eager", "inference")
    assert recompile_note({"expect": {"compiles": None, "compiles_at_most": None}}, target, [1, 0, 0]) is None
    assert recompile_note({"expect": {"compiles": 3}}, target, [1, 1, 1]) is None
    assert recompile_note({"expect": {"compiles": None, "compiles_at_most": None}}, target, [2, 1]) == (
        "3 graph(s) over 2 calls, 1 of them after the first call; expect.compiles is not set")


# ----------------------------------------------------------------------------- the CLI


def test_run_takes_a_case_file_outside_the_cases_folder(tmp_path: Path) -> None:
    """It selected nothing before: only files under the cases root were collected."""
    path = tmp_path / "mine" / "own.yaml"
    path.parent.mkdir()
    path.write_text(HEAD.format(behavior="runtime_wrapper") + textwrap.dedent("""\
        inputs:
          x: {tensor: {values: [1.0, 2.0]}}
        program: |
          def f(x):
              return x + 1
        """))
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "-q", f"--results={tmp_path / 'r.jsonl'}", str(path)],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(r["case_id"], r["status"]) for r in records] == [("own", "pass")]


def test_validate_reports_v2_problems_of_a_folder_with_exit_2(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "a.yaml").write_text(HEAD.format(behavior="runtime_wrapper") + textwrap.dedent("""\
        inputs:
          m: {module: {class: no.such.Module}}
        program: |
          def f(m):
              return 1
        """))
    assert main(["validate", "--cases", str(folder), str(folder)]) == 2
    out = capsys.readouterr().out
    assert f"{folder / 'a.yaml'}:7: inputs.m.module.class: module class 'no.such.Module' is neither a class the " \
           "classes block defines nor an importable dotted name of a class" in out


def test_a_classes_block_that_never_ends_or_exits_is_a_line_error_not_a_hang(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.data.deep_check

    monkeypatch.setattr(conformance.data.deep_check, "CLASSES_SECONDS", 1)
    assert errors(tmp_path, """\
        classes: |
          while True:
              pass
        inputs:
          x: {tensor: {shape: [2]}}
        program: |
          def f(x):
              return x
        """) == ["bad.yaml:6: classes: the classes block ran for more than 1 s; it should only define things"]
    assert errors(tmp_path, """\
        classes: |
          raise SystemExit(3)
        inputs:
          x: {tensor: {shape: [2]}}
        program: |
          def f(x):
              return x
        """) == ["bad.yaml:7: classes: the classes block raised SystemExit: 3 at classes of bad.yaml:7"]


def test_a_device_type_torch_does_not_know_is_a_validate_error(tmp_path: Path) -> None:
    assert [e.split(" (")[0] for e in errors(tmp_path, devices="[cpu, gpu]", body="""\
        inputs:
          x: {tensor: {shape: [2]}}
        program: |
          def f(x):
              return x
        """)] == ["bad.yaml:4: devices[1]: 'gpu' is not a device this torch build knows"]
