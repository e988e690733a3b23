"""The core's typed case view (conformance/core/spec.py) against the schema it is a dump of: every key it
declares is a field of the matching model, and every choice of values it spells out is the model's."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from conformance.core import spec
from conformance.schema import calls as schema_calls
from conformance.schema import case as schema_case
from conformance.schema import compiling as schema_compiling
from conformance.schema import inputs as schema_inputs

VIEWS: dict[Any, type[BaseModel]] = {
    spec.CaseData: schema_case.Case,
    spec.CompileData: schema_compiling.CompileSpec,
    spec.BranchData: schema_compiling.BranchSpec,
    spec.ExpectData: schema_case.ExpectSpec,
    spec.RaisesData: schema_calls.RaisesSpec,
    spec.CallRaisesData: schema_calls.CallRaisesSpec,
    spec.FirstCallData: schema_calls.FirstCallSpec,
    spec.CallData: schema_calls.CallSpec,
    spec.InputData: schema_inputs.InputSpec,
    spec.TensorData: schema_inputs.TensorSpec,
    spec.TwoTensorData: schema_inputs.TwoTensorSpec,
    spec.SubclassData: schema_inputs.SubclassSpec,
    spec.InnerData: schema_inputs.InnerSpec,
    spec.ParameterData: schema_inputs.ParameterSpec,
    spec.ModuleData: schema_inputs.ModuleSpec,
    spec.OptimizerData: schema_inputs.OptimizerSpec,
    spec.ScalarData: schema_inputs.ScalarSpec,
}


def _choices(tp: Any) -> set[Any]:
    """The values of every Literal inside a type (through unions, lists and dicts)."""
    if typing.get_origin(tp) is Literal:
        return set(typing.get_args(tp))
    return {v for arg in typing.get_args(tp) for v in _choices(arg)}


def test_every_typed_dict_of_the_view_is_paired_with_its_model() -> None:
    declared = {v for v in vars(spec).values() if typing.is_typeddict(v)}
    assert declared == set(VIEWS)


@pytest.mark.parametrize("view", list(VIEWS), ids=lambda v: v.__name__)
def test_the_view_declares_only_the_models_keys_and_their_choices(view: Any) -> None:
    model = VIEWS[view]
    fields = {info.alias or name: info for name, info in model.model_fields.items()}
    hints = typing.get_type_hints(view)
    assert view.__required_keys__ == set(hints), "every key is in the dump: required"
    for key, hint in hints.items():
        assert key in fields, f"{view.__name__}.{key} is no field of {model.__name__}"
        declared, allowed = _choices(hint), _choices(fields[key].annotation)
        assert declared == allowed, f"{view.__name__}.{key}: {declared} where the schema allows {allowed}"


def test_a_dumped_case_has_every_key_the_view_reads(tmp_path: Path) -> None:
    from conformance.data.loader import load_case

    path = tmp_path / "every_level.yaml"
    path.write_text(
        "behavior: mutation_epilogue\nsummary: every level of the view.\n"
        "upstream: [https://github.com/pytorch/pytorch/pull/179600]\n"
        "inputs:\n"
        "  m: {module: {parameters: {w: {tensor: {shape: [2]}}}}, persist: true}\n"
        "  opt: {optimizer: {class: torch.optim.SGD, params: m, kwargs: {lr: 0.1}}}\n"
        "  t: {two_tensor: {a: {tensor: {shape: [2]}}, b: {subclass: {class: torch.testing._internal.two_tensor."
        "TwoTensor, args: [{tensor: {shape: [2]}}, {tensor: {shape: [2]}}]}}}}\n"
        "  s: {scalar: {values: [1.0, 2.0]}}\n"
        "classes: |\n  def save():\n      return 0\n  def restore(state):\n      pass\n"
        "branch: {save: save, restore: restore}\n"
        "first_call: {before: 'pass'}\n"
        "calls: [{s: {scalar: {value: 3.0}}, raises: {type: RuntimeError}}]\n"
        "expect: {raises: {type: RuntimeError}}\n"
        "program: |\n  def f(m, opt, t, s):\n      return t * s\n")
    data = load_case(path, tmp_path).data
    entry = data["calls"][0]
    raises = entry["raises"]
    first = data["first_call"]
    module = data["inputs"]["m"]["module"]
    two = data["inputs"]["t"]["two_tensor"]
    assert raises is not None and first is not None and module is not None and two is not None
    subclass, branch = two["b"]["subclass"], data["branch"]
    assert subclass is not None and branch is not None
    levels: list[tuple[Any, Any]] = [
        (spec.CaseData, data), (spec.CompileData, data["compile"]), (spec.ExpectData, data["expect"]),
        (spec.BranchData, branch),
        (spec.RaisesData, data["expect"]["raises"]), (spec.CallData, entry), (spec.CallRaisesData, raises),
        (spec.FirstCallData, first), (spec.ModuleData, module), (spec.ParameterData, module["parameters"]["w"]),
        (spec.OptimizerData, data["inputs"]["opt"]["optimizer"]), (spec.TwoTensorData, two),
        (spec.InnerData, two["a"]), (spec.SubclassData, subclass), (spec.TensorData, two["a"]["tensor"]),
        (spec.ScalarData, data["inputs"]["s"]["scalar"]), *((spec.InputData, s) for s in data["inputs"].values()),
    ]
    assert {view for view, _ in levels} == set(VIEWS)
    for view, value in levels:
        assert view.__required_keys__ <= set(value), f"{view.__name__}: {view.__required_keys__ - set(value)}"
    assert spec.replaced_inputs(entry) == {"s": dict(entry)["s"]}
    assert [spec.input_kind(s) for s in data["inputs"].values()] == ["module", "optimizer", "two_tensor", "scalar"]
