"""Input builders: seeded, deterministic, and fresh for each side of the comparison.

Eager and compiled each get their own `build_inputs` call with the same seed, so values,
geometry (size/stride/offset, storage sizes) and aliasing between inputs are identical while
no tensor is shared between the two sides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.schema import Case, InnerSpec, InputSpec, Mode, ModuleSpec, TensorSpec, TwoTensorSpec

# A view expression is code, like the case's program: a case file is trusted as a test file is
# (see cases/README.md, "A case file is code"). The schema checks that it names only torch and
# earlier inputs, which catches typos and forward references; it is not a sandbox.
_VIEW_GLOBALS: dict[str, Any] = {"torch": torch}

LAYOUT_OFFSET = 3
_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "complex64": torch.complex64,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


class FeatureUnavailable(Exception):
    """The build lacks something a case needs (a subclass, an entry point): the case skips."""


def torch_dtype(name: str) -> torch.dtype:
    return _DTYPES[name]


def two_tensor_type() -> type[torch.Tensor]:
    try:
        from torch.testing._internal.two_tensor import TwoTensor
    except ImportError as exc:
        raise FeatureUnavailable(
            f"TwoTensor is not importable from this build (torch.testing._internal.two_tensor: {exc})"
        ) from None
    return TwoTensor


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides: list[int] = []
    acc = 1
    for size in reversed(shape):
        strides.append(acc)
        acc *= max(size, 1)
    return tuple(reversed(strides))


def geometry(spec: TensorSpec) -> tuple[tuple[int, ...], int]:
    """(stride, storage_offset) for a tensor spec's layout."""
    shape = spec.shape
    offset = 0
    if spec.stride is not None:
        stride = spec.stride
    elif spec.layout == "transposed":
        swapped = (*shape[:-2], shape[-1], shape[-2])
        s = contiguous_strides(swapped)
        stride = (*s[:-2], s[-1], s[-2])
    elif spec.layout == "strided":
        wide = (*shape[:-1], shape[-1] * 2)
        s = contiguous_strides(wide)
        stride = (*s[:-1], 2)
    elif spec.layout == "channels_last":
        _n, c, h, w = shape
        stride = (h * w * c, 1, w * c, c)
    else:
        stride = contiguous_strides(shape)
    if spec.layout == "offset":
        offset = LAYOUT_OFFSET
    if spec.storage_offset is not None:
        offset = spec.storage_offset
    return tuple(stride), offset


def storage_numel(shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> int:
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((size - 1) * abs(st) for size, st in zip(shape, stride, strict=True)) + 1


def _values(spec: TensorSpec, gen: torch.Generator) -> torch.Tensor:
    dtype = torch_dtype(spec.dtype)
    shape = spec.shape
    init = spec.init or (
        "randn" if dtype.is_floating_point or dtype.is_complex else ("randint" if dtype != torch.bool else "rand")
    )
    numel = math.prod(shape)
    if init == "ones":
        return torch.ones(shape, dtype=dtype)
    if init == "zeros":
        return torch.zeros(shape, dtype=dtype)
    if init == "arange":
        return torch.arange(numel, dtype=torch.float64).reshape(shape).to(dtype)
    if init == "randint":
        return torch.randint(0, 10, shape, generator=gen, dtype=torch.int64).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    draw_dtype = dtype if dtype in (torch.float32, torch.float64, torch.complex64) else torch.float32
    if init == "randn":
        out = torch.randn(shape, generator=gen, dtype=draw_dtype)
    else:
        out = torch.rand(shape, generator=gen, dtype=draw_dtype)
        if init == "positive":
            out = out + 0.5
    return out.to(dtype)


def _dense(spec: TensorSpec, gen: torch.Generator, device: str) -> torch.Tensor:
    """A tensor with the spec's exact geometry in a storage of its own (no `_base`)."""
    dtype = torch_dtype(spec.dtype)
    values = _values(spec, gen)
    stride, offset = geometry(spec)
    where = spec.device or device
    storage = torch.zeros(storage_numel(spec.shape, stride, offset), dtype=dtype, device=where)
    out = torch.empty(0, dtype=dtype, device=where)
    with torch.no_grad():
        out.set_(storage.untyped_storage(), offset, spec.shape, stride)
        out.copy_(values.to(where))
    return out


@dataclass
class BuiltInputs:
    """One side's inputs: `args` go to the program; `named` holds every input, hidden ones too."""

    args: list[Any]
    named: dict[str, Any]
    grad_leaves: dict[str, torch.Tensor] = field(default_factory=dict)
    dynamic_dims: dict[str, tuple[int, ...]] = field(default_factory=dict)


def _inner(spec: InnerSpec, gen: torch.Generator, device: str) -> torch.Tensor:
    if spec.tensor is not None:
        return _dense(spec.tensor, gen, device)
    assert spec.two_tensor is not None
    return _two_tensor(spec.two_tensor, gen, device, requires_grad=False)


def _two_tensor(
    spec: TwoTensorSpec, gen: torch.Generator, device: str, *, requires_grad: bool
) -> torch.Tensor:
    two = two_tensor_type()
    a = _inner(spec.a, gen, device)
    b = _inner(spec.b, gen, device)
    out = two(a, b)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _module(spec: ModuleSpec, gen: torch.Generator, device: str, training: bool) -> torch.nn.Module:
    module = torch.nn.Module()
    for pname, pspec in spec.parameters.items():
        if pspec.tensor is not None:
            data = _dense(pspec.tensor, gen, device)
        else:
            assert pspec.two_tensor is not None
            data = _two_tensor(pspec.two_tensor, gen, device, requires_grad=False)
        module.register_parameter(pname, torch.nn.Parameter(data, requires_grad=training and pspec.requires_grad))
    for bname, bspec in spec.buffers.items():
        module.register_buffer(bname, _inner(bspec, gen, device))
    return module


def tensors_of(named: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Every tensor among the inputs, a module's parameters and buffers as `name.param`."""
    out: dict[str, torch.Tensor] = {}
    for name, value in named.items():
        if isinstance(value, torch.Tensor):
            out[name] = value
        elif isinstance(value, torch.nn.Module):
            for pname, t in (*value.named_parameters(), *value.named_buffers()):
                out[f"{name}.{pname}"] = t
    return out


@dataclass(frozen=True)
class CallPoint:
    """One call of a variant: this call's scalar values and replaced inputs."""

    scalars: dict[str, float | int | bool]
    overrides: dict[str, InputSpec]
    label: str


def build_inputs(  # noqa: PLR0912  # one branch per input kind
    case: Case,
    device: str,
    mode: Mode,
    point: CallPoint | None = None,
    seed_offset: int = 0,
) -> BuiltInputs:
    """Build one side's inputs for `case` on `device`.

    In inference mode no input requires grad (so AOTAutograd takes its inference path); in
    training mode inputs are built as declared. `point` holds this call's swept scalar values
    and replaced inputs.
    """
    training = mode == "training"
    scalars = point.scalars if point is not None else {}
    overrides = point.overrides if point is not None else {}
    gen = torch.Generator().manual_seed(case.seed + seed_offset)
    named: dict[str, Any] = {}
    leaves: dict[str, torch.Tensor] = {}
    dynamic: dict[str, tuple[int, ...]] = {}
    for name, declared in case.inputs.items():
        spec = overrides.get(name, declared)
        if spec.module is not None:
            module = _module(spec.module, gen, device, training)
            named[name] = module
            for pname, param in module.named_parameters():
                if param.requires_grad:
                    leaves[f"{name}.{pname}"] = param
        elif spec.tensor is not None:
            t = _dense(spec.tensor, gen, device)
            if training and spec.tensor.requires_grad:
                t.requires_grad_(True)
                if not spec.tensor.leaf:
                    leaf = t
                    t = torch.empty(0, dtype=leaf.dtype, device=leaf.device)
                    with torch.no_grad():
                        t.set_(
                            torch.zeros(
                                leaf.untyped_storage().nbytes() // leaf.element_size(),
                                dtype=leaf.dtype,
                                device=leaf.device,
                            ).untyped_storage(),
                            leaf.storage_offset(),
                            leaf.shape,
                            leaf.stride(),
                        )
                    with torch.enable_grad():
                        t.copy_(leaf)
                    leaves[f"{name}.leaf"] = leaf
                else:
                    leaves[name] = t
            if spec.tensor.dynamic_dims:
                dynamic[name] = spec.tensor.dynamic_dims
            named[name] = t
        elif spec.two_tensor is not None:
            rg = training and spec.two_tensor.requires_grad
            t = _two_tensor(spec.two_tensor, gen, device, requires_grad=rg)
            if rg:
                leaves[name] = t
            named[name] = t
        elif spec.view is not None:
            with torch.enable_grad():
                named[name] = eval(spec.view, _VIEW_GLOBALS, dict(named))
        else:
            assert spec.scalar is not None
            named[name] = spec.scalar.sweep()[0] if name in overrides else scalars.get(name, spec.scalar.sweep()[0])
    args = [named[name] for name, spec in case.inputs.items() if not spec.hidden]
    return BuiltInputs(args=args, named=named, grad_leaves=leaves, dynamic_dims=dynamic)


def call_points(case: Case) -> list[CallPoint]:
    """The calls of one pass: every value of the sweep (scalars zipped), then each `calls` entry."""
    points: list[CallPoint] = []
    n = case.sweep_length()
    for i in range(n):
        scalars: dict[str, float | int | bool] = {}
        for name, spec in case.inputs.items():
            if spec.scalar is not None:
                scalars[name] = spec.scalar.sweep()[i if spec.scalar.values is not None else 0]
        swept = {k: v for k, v in scalars.items() if case.inputs[k].scalar.values is not None}  # type: ignore[union-attr]  # scalars only holds scalar inputs
        label = ", ".join(f"{k}={v!r}" for k, v in swept.items())
        points.append(CallPoint(scalars, {}, f"call {i + 1} ({label})" if n > 1 else "call 1"))
    first = points[0].scalars
    for j, overrides in enumerate(case.calls):
        what = ", ".join(f"{k}: {_describe(spec)}" for k, spec in overrides.items())
        points.append(CallPoint(dict(first), dict(overrides), f"call {n + j + 1} ({what})"))
    return points


def _describe(spec: InputSpec) -> str:
    if spec.tensor is not None:
        return f"tensor{list(spec.tensor.shape)}"
    if spec.scalar is not None:
        return repr(spec.scalar.sweep()[0])
    if spec.view is not None:
        return spec.view
    return spec.kind
