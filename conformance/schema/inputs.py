"""How a case declares its inputs: tensors, views, subclasses, scalars, modules."""

from __future__ import annotations

import ast
import math
from typing import Annotated, Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from conformance.schema.common import (
    IDENT,
    INPUT_KINDS,
    MAX_NDIM,
    MAX_NUMEL,
    MAX_OFFSET,
    Dim,
    DType,
    Init,
    Layout,
    Strict,
    check_device,
)


class TensorSpec(Strict):
    """A dense tensor built from the case's seeded generator, identically for eager and compiled."""

    shape: tuple[Dim, ...] = Field(
        description=f"Logical size, e.g. [4, 8]; [] is a 0-dim tensor. At most {MAX_NDIM} dims and {MAX_NUMEL} "
        "elements.",
        max_length=MAX_NDIM,
    )
    dtype: DType = "float32"
    requires_grad: bool = False
    leaf: bool = Field(
        True,
        description="false builds the tensor as the result of an op on a leaf (it has a grad_fn); "
        "needs requires_grad: true.",
    )
    layout: Layout = Field(
        "contiguous",
        description="contiguous; transposed (last two dims swapped in memory); strided (every "
        "other element of the last dim); offset (storage_offset 3); channels_last (4-d only).",
    )
    stride: tuple[Dim, ...] | None = Field(
        None, description="Explicit strides, each >= 0 (overrides layout); storage is sized to fit."
    )
    storage_offset: Annotated[StrictInt, Field(ge=0, le=MAX_OFFSET)] | None = Field(
        None, description="Explicit storage offset (overrides the layout's)."
    )
    init: Init | None = Field(
        None,
        description="How values are drawn: randn (floats default), rand, positive (rand + 0.5), "
        "ones, zeros, arange, randint (integers default, 0..9).",
    )
    device: str | None = Field(
        None, description="Pin this input to a device (e.g. 'cpu') whatever the case's device."
    )
    dynamic_dims: tuple[Annotated[StrictInt, Field(ge=0, lt=MAX_NDIM)], ...] = Field(
        (), description="Dims marked dynamic (torch._dynamo.mark_dynamic) on the compiled side."
    )

    @field_validator("device")
    @classmethod
    def _device(cls, value: str | None) -> str | None:
        return None if value is None else check_device(value)

    @model_validator(mode="after")
    def _consistent(self) -> TensorSpec:
        ndim = len(self.shape)
        if math.prod(self.shape) > MAX_NUMEL:
            raise ValueError(f"shape {list(self.shape)} has {math.prod(self.shape)} elements; at most {MAX_NUMEL}")
        if self.stride is not None and len(self.stride) == ndim and self.shape and min(self.shape) > 0:
            span = (self.storage_offset or 0) + sum((n - 1) * st for n, st in zip(self.shape, self.stride, strict=True))
            if span >= MAX_NUMEL:
                raise ValueError(f"stride {list(self.stride)} spans {span + 1} storage elements; at most {MAX_NUMEL}")
        if len(set(self.dynamic_dims)) != len(self.dynamic_dims):
            raise ValueError("dynamic_dims: each dim at most once")
        if not self.leaf and not self.requires_grad:
            raise ValueError("leaf: false needs requires_grad: true (a tensor without grad is a leaf)")
        if self.requires_grad and self.dtype not in ("float32", "float64", "float16", "bfloat16", "complex64"):
            raise ValueError(f"requires_grad: true needs a floating dtype, not {self.dtype}")
        if self.layout == "transposed" and ndim < 2:
            raise ValueError("layout: transposed needs at least 2 dims")
        if self.layout == "strided" and ndim < 1:
            raise ValueError("layout: strided needs at least 1 dim")
        if self.layout == "channels_last" and ndim != 4:
            raise ValueError("layout: channels_last needs exactly 4 dims")
        if self.stride is not None and len(self.stride) != ndim:
            raise ValueError(f"stride has {len(self.stride)} entries but shape has {ndim} dims")
        for d in self.dynamic_dims:
            if d >= ndim:
                raise ValueError(f"dynamic_dims: dim {d} out of range for {ndim}-d shape")
        return self


class TwoTensorSpec(Strict):
    """`torch.testing._internal.two_tensor.TwoTensor(a, b)`; a and b may be TwoTensors too."""

    a: InnerSpec
    b: InnerSpec
    requires_grad: bool = False


class InnerSpec(Strict):
    """One inner tensor of a TwoTensor: exactly one of `tensor` or `two_tensor`."""

    tensor: TensorSpec | None = None
    two_tensor: TwoTensorSpec | None = None

    @model_validator(mode="after")
    def _one(self) -> InnerSpec:
        given = [k for k in ("tensor", "two_tensor") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of tensor, two_tensor (got {given or 'none'})")
        if self.tensor is not None and self.tensor.requires_grad:
            raise ValueError("inner tensors of a TwoTensor cannot require grad; set it on the TwoTensor")
        return self


class ParameterSpec(Strict):
    """An `nn.Parameter` of a module input: exactly one of `tensor` or `two_tensor`."""

    tensor: TensorSpec | None = None
    two_tensor: TwoTensorSpec | None = None
    requires_grad: bool = True

    @model_validator(mode="after")
    def _one(self) -> ParameterSpec:
        given = [k for k in ("tensor", "two_tensor") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of tensor, two_tensor (got {given or 'none'})")
        if self.tensor is not None and (self.tensor.requires_grad or not self.tensor.leaf):
            raise ValueError("set requires_grad on the parameter, not on its tensor")
        return self


class ModuleSpec(Strict):
    """A `torch.nn.Module` holding parameters and buffers (e.g. for inductor freezing)."""

    parameters: dict[str, ParameterSpec] = Field(default_factory=dict)
    buffers: dict[str, InnerSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _names(self) -> ModuleSpec:
        for name in (*self.parameters, *self.buffers):
            if not IDENT.match(name):
                raise ValueError(f"{name!r} is not a Python identifier")
        if not self.parameters and not self.buffers:
            raise ValueError("a module needs at least one parameter or buffer")
        return self


class ScalarSpec(Strict):
    """A Python scalar argument: one `value`, or a sweep of `values` (one call per value)."""

    type: Literal["float", "int", "bool"] = "float"
    value: float | int | bool | None = None
    values: tuple[float | int | bool, ...] | None = Field(
        max_length=1000,
        default=None, description="A sweep: the program is called once per value, eager and compiled."
    )

    @model_validator(mode="after")
    def _one(self) -> ScalarSpec:
        if (self.value is None) == (self.values is None):
            raise ValueError("give exactly one of value, values")
        items = [self.value] if self.values is None else list(self.values)
        if self.values is not None and len(self.values) == 0:
            raise ValueError("values: give at least one value")
        for item in items:
            if self.type == "int" and (isinstance(item, bool) or not isinstance(item, int)):
                raise ValueError(f"{item!r} is not an int (type: int)")
            if self.type == "bool" and not isinstance(item, bool):
                raise ValueError(f"{item!r} is not a bool (type: bool)")
            if self.type == "float" and isinstance(item, bool):
                raise ValueError(f"{item!r} is not a float (type: float)")
        return self


class InputSpec(Strict):
    """One program argument: exactly one of tensor, view, two_tensor, scalar, module."""

    tensor: TensorSpec | None = None
    view: str | None = Field(
        None,
        description="A Python expression over earlier inputs, e.g. 'base[1:3]' or 'x.t()'; "
        "the aliasing is rebuilt identically for eager and compiled.",
    )
    two_tensor: TwoTensorSpec | None = None
    scalar: ScalarSpec | None = None
    module: ModuleSpec | None = None
    hidden: bool = Field(
        False, description="Build it (e.g. as the base of views) but do not pass it to the program."
    )

    @model_validator(mode="after")
    def _one(self) -> InputSpec:
        given = [k for k in INPUT_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(INPUT_KINDS)} (got {given or 'none'})")
        if self.view is not None:
            try:
                ast.parse(self.view, mode="eval")
            except SyntaxError as exc:
                raise ValueError(f"view is not a Python expression: {exc.msg}") from None
        return self

    @property
    def kind(self) -> str:
        return next(k for k in INPUT_KINDS if getattr(self, k) is not None)

    def requires_grad(self) -> bool:
        if self.tensor is not None:
            return self.tensor.requires_grad
        if self.two_tensor is not None:
            return self.two_tensor.requires_grad
        if self.module is not None:
            return any(p.requires_grad for p in self.module.parameters.values())
        return False


TwoTensorSpec.model_rebuild()
InnerSpec.model_rebuild()
ParameterSpec.model_rebuild()
