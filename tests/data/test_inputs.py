"""Input builders (conformance/core/build.py): deterministic, fresh per side, exact geometry,
aliasing rebuilt."""

from __future__ import annotations

import torch

from conformance.core.build import build_inputs, call_points, geometry, storage_numel
from conformance.schema import TensorSpec
from tests.helpers.cases import CaseFactory

CASE = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
inputs:
  base: {tensor: {shape: [4, 6]}, hidden: true}
  a: {view: "base[:, :3]"}
  b: {view: "base[:, 2:5]"}
  t: {tensor: {shape: [3, 5], layout: transposed, requires_grad: true}}
  s: {tensor: {shape: [2, 5], layout: strided}}
  o: {tensor: {shape: [5], layout: offset, dtype: float64}}
  n: {tensor: {shape: [3, 2], requires_grad: true, leaf: false}}
  i: {tensor: {shape: [7], dtype: int64}}
  lr: {scalar: {values: [0.5, 0.25]}}
program: |
  def f(a, b, t, s, o, n, i, lr):
      return a
modes: [inference, training]
"""


def test_same_seed_same_values_fresh_tensors(make_case: CaseFactory) -> None:
    lc = make_case(CASE)
    one = build_inputs(lc.data, "cpu", "training")
    two = build_inputs(lc.data, "cpu", "training")
    for name in ("base", "t", "s", "o", "n", "i"):
        assert torch.equal(one.named[name], two.named[name]), name
        assert one.named[name].untyped_storage().data_ptr() != two.named[name].untyped_storage().data_ptr()


def test_declared_geometry_is_exact(make_case: CaseFactory) -> None:
    named = build_inputs(make_case(CASE).data, "cpu", "training").named
    assert named["t"].stride() == (1, 3) and not named["t"].is_contiguous()
    assert named["s"].stride() == (10, 2)
    assert named["o"].storage_offset() == 3 and named["o"].dtype == torch.float64
    for name in ("t", "s", "o", "n"):
        assert named[name]._base is None, f"{name} must own its storage, not be a view"


def test_views_alias_the_same_base_on_each_side(make_case: CaseFactory) -> None:
    named = build_inputs(make_case(CASE).data, "cpu", "inference").named
    base, a, b = named["base"], named["a"], named["b"]
    assert a._base is base and b._base is base
    a[0, 2] = 100.0
    assert b[0, 0].item() == 100.0


def test_leafness_and_grad_follow_the_mode(make_case: CaseFactory) -> None:
    case = make_case(CASE).data
    train = build_inputs(case, "cpu", "training")
    assert train.named["t"].requires_grad and train.named["t"].is_leaf
    n = train.named["n"]
    assert n.requires_grad and not n.is_leaf and n._base is None
    assert set(train.grad_leaves) == {"t", "n.leaf"}
    infer = build_inputs(case, "cpu", "inference")
    assert not any(v.requires_grad for v in infer.named.values() if isinstance(v, torch.Tensor))
    assert infer.grad_leaves == {}


def test_sweep_points_zip_values_and_label_them(make_case: CaseFactory) -> None:
    points = call_points(make_case(CASE).data)
    assert [p.scalars["lr"] for p in points] == [0.5, 0.25]
    assert points[1].label == "call 2 (lr=0.25)"
    assert build_inputs(make_case(CASE).data, "cpu", "inference", points[1]).named["lr"] == 0.25


def test_storage_is_sized_for_the_geometry() -> None:
    spec = TensorSpec(shape=(2, 5), layout="strided")
    stride, offset = geometry(spec.model_dump(mode="json"))
    assert storage_numel(spec.shape, stride, offset) == 1 + 1 * 10 + 4 * 2
    assert storage_numel((0, 3), (3, 1), 2) == 2


def test_any_device_string_is_honoured(make_case: CaseFactory) -> None:
    # "meta" stands in for an accelerator: the builder must put every tensor where it is told
    text = CASE.replace("dtype: int64", "dtype: int64, device: cpu")
    named = build_inputs(make_case(text).data, "meta", "inference").named
    assert named["t"].device.type == "meta" and named["a"].device.type == "meta"
    assert named["i"].device.type == "cpu"


def test_two_tensor_and_module_inputs(make_case: CaseFactory) -> None:
    lc = make_case("""\
        behavior: subclass_wrapper
        summary: s
        upstream: [https://github.com/pytorch/pytorch/pull/176741]
        inputs:
          m:
            module:
              parameters:
                w: {two_tensor: {a: {tensor: {shape: [2]}}, b: {tensor: {shape: [2]}}}}
              buffers:
                c: {tensor: {shape: [2]}}
          x:
            two_tensor:
              a: {two_tensor: {a: {tensor: {shape: [2]}}, b: {tensor: {shape: [2]}}}}
              b: {tensor: {shape: [2]}}
              requires_grad: true
        program: |
          def f(m, x):
              return x + m.w
        modes: [training]
        """)
    built = build_inputs(lc.data, "cpu", "training")
    x = built.named["x"]
    assert type(x).__name__ == "TwoTensor" and type(x.a).__name__ == "TwoTensor"
    assert x.requires_grad and set(built.grad_leaves) == {"m.w", "x"}
    assert isinstance(built.named["m"].w, torch.nn.Parameter)
