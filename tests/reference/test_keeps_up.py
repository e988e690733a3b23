"""The reference on the programs of the corpus cases it once diverged on while their contract passed
(issue: the reference keeps up): each test is the case's program, with what upstream's change says."""

from __future__ import annotations

from typing import Any

import torch
from torch.testing._internal.two_tensor import TwoTensor

from conformance.probe.scalar_recompile import ScalarSweep, probe
from reference_impl import subclass_wrapper as sw
from reference_impl.observe import observe
from reference_impl.runtime_wrapper import AliasKind
from reference_impl.scalar_recompile import FloatUseKind, analyze_float_uses, predict_compile_count


class DataWithScale(torch.Tensor):
    """As in subclass_wrapper/upstream/scaled_*: ops run on `data_`, the new wrapper keeps the input's
    `scale` (the same tensor), so output and input share an inner tensor but not the wrapper."""

    @staticmethod
    def __new__(cls, data: torch.Tensor, scale: torch.Tensor) -> Any:
        return torch.Tensor._make_wrapper_subclass(cls, data.size(), strides=data.stride(), dtype=data.dtype,
                                                   device=data.device)

    def __init__(self, data: torch.Tensor, scale: torch.Tensor) -> None:
        self.data_ = data
        self.scale = scale

    def __tensor_flatten__(self) -> tuple[list[str], dict[str, Any]]:
        return ["data_", "scale"], {}

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, Any], meta: Any, size: Any, stride: Any) -> DataWithScale:
        return DataWithScale(inner["data_"], inner["scale"])

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        result = func(args[0].data_, *args[1:], **(kwargs or {}))
        return DataWithScale(result, args[0].scale) if isinstance(result, torch.Tensor) else result


def test_a_new_wrapper_holding_an_input_inner_tensor_is_no_alias_of_the_input() -> None:
    # AOTAutograd tells aliasing by the outer storage: x.sin() is a new wrapper, although its scale is x's
    x = DataWithScale(torch.randn(2, 4), torch.randn(6))
    obs = observe(lambda x: x.sin(), [x])
    assert obs.outputs[0].kind is AliasKind.PLAIN
    # ...and a view whose dispatch does not share the wrapper's storage is none either, although
    # autograd records x as its base
    obs = observe(lambda x: x.view(8), [DataWithScale(torch.randn(2, 4), torch.randn(6))])
    assert obs.outputs[0].kind is AliasKind.PLAIN


def test_a_view_that_shares_the_wrapper_storage_is_an_alias_of_the_input() -> None:
    # TwoTensor's dispatch makes a view share the outer storage (return_and_correct_aliasing)
    t = TwoTensor(torch.randn(4), torch.randn(4))
    obs = observe(lambda t: t.view(2, 2), [t])
    assert (obs.outputs[0].kind, obs.outputs[0].base_index) == (AliasKind.ALIAS_OF_INPUT, 0)
    # a new TwoTensor computed from it shares nothing
    obs = observe(lambda t: t.sin(), [TwoTensor(torch.randn(4), torch.randn(4))])
    assert obs.outputs[0].kind is AliasKind.PLAIN


def test_a_no_op_view_of_another_output_is_regenerated_from_it() -> None:
    # runtime_wrapper/upstream/doubled_and_its_flat_view_caller_mutates_doubled, inference (#191449)
    def f(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        doubled = a.mul(2)
        return doubled, doubled.view(-1)

    obs = observe(f, [torch.ones(3)])
    assert obs.outputs[0].kind is AliasKind.PLAIN
    assert (obs.outputs[1].kind, obs.outputs[1].base_index) == (AliasKind.ALIAS_OF_INTERMEDIATE, 0)
    # a view that changes the geometry is not a no-op view: left to the graph, as before
    obs = observe(lambda a: (d := a.mul(2), d.view(3, 1)), [torch.ones(3)])
    assert obs.outputs[1].kind is AliasKind.PLAIN


def test_set_between_two_emptied_storages_is_a_storage_swap() -> None:
    # mutation_epilogue/upstream/set_placeholder_to_gathered_then_resize_down: both storages end at zero
    # bytes (a null data pointer each), so only their identity tells that set_ swapped them
    def f(holder: torch.Tensor, shard: torch.Tensor) -> torch.Tensor:
        full = torch.cat([shard, shard])
        holder.set_(full)
        out = holder.sin()
        holder.untyped_storage().resize_(0)
        return out

    raw = torch.zeros(16)
    raw.untyped_storage().resize_(0)
    obs = observe(f, [raw, torch.rand(8)])
    holder = obs.inputs[0]
    assert holder is not None
    assert (holder.mutates_storage, holder.mutates_data) == (True, False)


def _scaled_output(size: tuple[int, int], scale: int, symbolic: tuple[int, ...]) -> sw.SubclassMeta:
    meta = sw.subclass_meta_of(DataWithScale(torch.randn(*size), torch.randn(scale)))
    assert isinstance(meta, sw.SubclassMeta)
    marked = sw.mark_symbolic(meta, {"": (symbolic, symbolic[:1]), "data_": (symbolic, symbolic[:1]),
                                     "scale": ((0,), ())})
    assert isinstance(marked, sw.SubclassMeta)
    return marked


def test_per_tensor_layout_reads_the_outer_size_back_only_when_every_inner_tensor_has_it() -> None:
    # subclass_wrapper/upstream/scaled_same_sized_inner_dynamic_no_recompile on 2.15: the scale's size is
    # not the outer one, so the outer size and stride come back as required outputs after the inner ones
    out = _scaled_output((2, 4), 6, (0, 1))
    assert (out.size_from, out.stride_from) == (None, None)
    assert out.slots("per-tensor") == [True, False, False, False, True, False, True, True, True]
    meta = sw.SubclassWrapperMeta(inputs=(), outputs=(out,), layout="per-tensor")
    source, _ = sw.codegen_subclass_wrapper(meta)
    assert "- 1 >= 4 and" in source  # the bound the build's wrapper has: 4 required outputs after data_
    assert "__tensor_unflatten__(_out_inner_" in source and "(_out_sym_" in source
    # the interpreted form rebuilds the wrapper from the required sizes (and skips the optional ones)
    data, scale = torch.randn(3, 5), torch.randn(7)
    outs = [data, 3, 5, 5, scale, 7, 3, 5, 5]
    (wrapped,) = sw.run_subclass_wrapper_interpreted(meta, lambda args: outs, [])
    assert isinstance(wrapped, DataWithScale) and wrapped.data_ is data and wrapped.scale is scale
    # every inner tensor of the outer size: read back from the first (TwoTensor), its positions optional
    two = sw.subclass_meta_of(TwoTensor(torch.randn(2, 4), torch.randn(2, 4)))
    assert isinstance(two, sw.SubclassMeta) and (two.size_from, two.stride_from) == ("a", "a")


def test_a_nan_value_compiles_a_graph_of_its_own() -> None:
    # scalar_recompile/upstream/float_equality_branch_then_nan: upstream's test counts 4
    uses = analyze_float_uses("def f(x, y):\n    if y == 5.0:\n        return x + 2\n    return x + y\n", ["y"])
    values = [{"y": v} for v in (2.0, 3.0, 4.0, 5.0, float("nan"))]
    assert predict_compile_count(uses, 5, has_fix=True, values=values) == 4
    plain = analyze_float_uses("def f(x, y):\n    return x + y\n", ["y"])
    assert predict_compile_count(plain, 3, has_fix=True, values=[{"y": 2.0}, {"y": 3.0}, {"y": 4.0}]) == 2
    nan_last = [{"y": 2.0}, {"y": 3.0}, {"y": float("nan")}]
    assert predict_compile_count(plain, 3, has_fix=True, values=nan_last) == 3
    # -0.0 is a value of its own, as the sweep counts it
    assert predict_compile_count(plain, 2, has_fix=True, values=[{"y": 0.0}, {"y": -0.0}]) == 2


def test_a_float_returned_without_a_tensor_op_is_not_modelled() -> None:
    # scalar_recompile/upstream/float_returned_beside_tensor: 1 graph on 2.15.0, more on 2.13.0
    uses = analyze_float_uses("def f(x, s):\n    return x + 1, s * 2\n", ["s"])
    assert FloatUseKind.RETURNED in uses.kinds
    result = probe(ScalarSweep(uses=uses, n_values=3, compile_count=1))
    assert result.status == "not-modelled" and "s * 2" in result.note, result
    # a float given to a tensor op is modelled
    used = analyze_float_uses("def f(x, s):\n    return x * s\n", ["s"])
    assert probe(ScalarSweep(uses=used, n_values=3, compile_count=2)).status == "conforms"


def test_each_behaviour_states_the_features_it_models_and_a_program_outside_them_is_not_modelled() -> None:
    import numpy as np

    from conformance.probe import _modelled
    from conformance.results import ProbeResult
    from reference_impl.features import MODELS, Feature, features_of, not_modelled

    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: torch.Tensor) -> torch.Tensor:
            return t * 2

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
            return grad * 2

    x = torch.randn(3, requires_grad=True)
    nested = torch.nested.nested_tensor([torch.randn(2), torch.randn(3)], layout=torch.jagged)
    found = features_of([x, TwoTensor(torch.randn(2), torch.randn(2)), {"n": nested}], [Keep.apply(x), np.float64(1)])
    assert found == {Feature.SUBCLASS_VALUES, Feature.NESTED_TENSORS, Feature.CUSTOM_FUNCTIONS, Feature.NUMPY_VALUES}
    assert features_of([torch.randn(2)], [torch.randn(2)]) == frozenset()
    assert set(MODELS) == {"mutation_epilogue", "runtime_wrapper", "subclass_wrapper", "backward_unwrap"}
    outside = not_modelled(found, MODELS["runtime_wrapper"])
    assert outside.startswith("NumPy values"), outside
    # scalar_recompile/upstream/numpy_int_sweep_no_recompile: the comparison is kept, the verdict is not
    diverging = ProbeResult("runtime_wrapper", "diverges", (), "-dynamic dims marked on outputs: [0]")
    result = _modelled(diverging, outside)
    assert (result.status, result.diff) == ("not-modelled", diverging.diff)
    assert "does not model NumPy values" in result.note and "the build's code diverges" in result.note
    assert _modelled(diverging, "") == diverging
    assert _modelled(ProbeResult("runtime_wrapper", "absent"), outside).status == "absent"


def test_a_none_the_program_returns_is_no_graph_output() -> None:
    # subclass_wrapper/explored/no_grad_transpose_aten_twotensor_leaf: the program returns None, and the
    # outputs' pytree has no leaf for it: the graph returns the transposed input's inner tensors only
    from reference_impl.meta import subclass_wrapper_meta

    def f(b: torch.Tensor) -> None:
        b.t_()

    obs = observe(f, [TwoTensor(torch.randn(3, 4), torch.randn(3, 4))])
    meta = subclass_wrapper_meta(obs, program_outputs=True)
    assert meta is not None and len(meta.outputs) == 1 and isinstance(meta.outputs[0], sw.SubclassMeta)
    # a region's outputs are the graph's, each a value (an unseen one is None there): all kept
    region_like = subclass_wrapper_meta(obs)
    assert region_like is not None and len(region_like.outputs) == 2
