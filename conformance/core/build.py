"""Input builders: seeded, deterministic, and fresh for each side of the comparison.

Eager and compiled each get their own `build_inputs` call with the same seed, so values,
geometry (size/stride/offset, storage sizes) and aliasing between inputs are identical while
no tensor is shared between the two sides. Values are drawn from one generator on the CPU, in
declaration order, and moved to the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.core.mismatch import FeatureUnavailable

Spec = dict[str, Any]
LAYOUT_OFFSET = 3


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


def geometry(spec: Spec) -> tuple[tuple[int, ...], int]:
    """(stride, storage_offset) of a tensor spec's layout."""
    shape = tuple(spec["shape"])
    layout = spec["layout"]
    if spec["stride"] is not None:
        stride = tuple(spec["stride"])
    elif layout == "transposed":
        s = contiguous_strides((*shape[:-2], shape[-1], shape[-2]))
        stride = (*s[:-2], s[-1], s[-2])
    elif layout == "strided":
        s = contiguous_strides((*shape[:-1], shape[-1] * 2))
        stride = (*s[:-1], 2)
    elif layout == "channels_last":
        _n, c, h, w = shape
        stride = (h * w * c, 1, w * c, c)
    else:
        stride = contiguous_strides(shape)
    offset = LAYOUT_OFFSET if layout == "offset" else 0
    if spec["storage_offset"] is not None:
        offset = spec["storage_offset"]
    return stride, offset


def storage_numel(shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> int:
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((size - 1) * abs(st) for size, st in zip(shape, stride, strict=True)) + 1


def draw_values(spec: Spec, gen: torch.Generator) -> torch.Tensor:  # noqa: PLR0911  # one return per init kind
    dtype = getattr(torch, spec["dtype"])
    shape = tuple(spec["shape"])
    init = spec["init"] or (
        "randn" if dtype.is_floating_point or dtype.is_complex else ("randint" if dtype != torch.bool else "rand")
    )
    if init == "ones":
        return torch.ones(shape, dtype=dtype)
    if init == "zeros":
        return torch.zeros(shape, dtype=dtype)
    if init == "arange":
        return torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape).to(dtype)
    if init == "randint":
        return torch.randint(0, 10, shape, generator=gen, dtype=torch.int64).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    draw_dtype = dtype if dtype in (torch.float32, torch.float64, torch.complex64) else torch.float32
    if init == "randn":
        return torch.randn(shape, generator=gen, dtype=draw_dtype).to(dtype)
    out = torch.rand(shape, generator=gen, dtype=draw_dtype)
    return (out + 0.5 if init == "positive" else out).to(dtype)


def dense(spec: Spec, gen: torch.Generator, device: str) -> torch.Tensor:
    """A tensor with the spec's exact geometry in a storage of its own (no `_base`)."""
    dtype = getattr(torch, spec["dtype"])
    shape = tuple(spec["shape"])
    values = draw_values(spec, gen)
    stride, offset = geometry(spec)
    where = spec["device"] or device
    storage = torch.zeros(storage_numel(shape, stride, offset), dtype=dtype, device=where)
    out = torch.empty(0, dtype=dtype, device=where)
    with torch.no_grad():
        out.set_(storage.untyped_storage(), offset, shape, stride)
        out.copy_(values.to(where))
    return out


def _inner(spec: Spec, gen: torch.Generator, device: str) -> torch.Tensor:
    if spec["tensor"] is not None:
        return dense(spec["tensor"], gen, device)
    return _two_tensor(spec["two_tensor"], gen, device, requires_grad=False)


def _two_tensor(spec: Spec, gen: torch.Generator, device: str, *, requires_grad: bool) -> torch.Tensor:
    two = two_tensor_type()
    a = _inner(spec["a"], gen, device)
    b = _inner(spec["b"], gen, device)
    out = two(a, b)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _module(spec: Spec, gen: torch.Generator, device: str, training: bool) -> torch.nn.Module:
    module = torch.nn.Module()
    for pname, pspec in spec["parameters"].items():
        if pspec["tensor"] is not None:
            data = dense(pspec["tensor"], gen, device)
        else:
            data = _two_tensor(pspec["two_tensor"], gen, device, requires_grad=False)
        module.register_parameter(pname, torch.nn.Parameter(data, requires_grad=training and pspec["requires_grad"]))
    for bname, bspec in spec["buffers"].items():
        module.register_buffer(bname, _inner(bspec, gen, device))
    return module


def _non_leaf(leaf: torch.Tensor) -> torch.Tensor:
    """A tensor with `leaf`'s geometry in a storage of its own, made from it by an op (a grad_fn)."""
    t = torch.empty(0, dtype=leaf.dtype, device=leaf.device)
    with torch.no_grad():
        t.set_(
            torch.zeros(leaf.untyped_storage().nbytes() // leaf.element_size(), dtype=leaf.dtype,
                        device=leaf.device).untyped_storage(),
            leaf.storage_offset(), leaf.shape, leaf.stride(),
        )
    with torch.enable_grad():
        t.copy_(leaf)
    return t


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


@dataclass
class BuiltInputs:
    """One side's inputs: `args` go to the program; `named` holds every input, hidden ones too."""

    args: list[Any]
    named: dict[str, Any]
    grad_leaves: dict[str, torch.Tensor] = field(default_factory=dict)
    dynamic_dims: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class CallPoint:
    """One call of a variant: this call's scalar values and replaced inputs."""

    scalars: dict[str, Any]
    overrides: dict[str, Spec]
    label: str


def sweep(scalar: Spec) -> tuple[Any, ...]:
    items = [scalar["value"]] if scalar["values"] is None else list(scalar["values"])
    return tuple(float(v) for v in items) if scalar["type"] == "float" else tuple(items)


def build_inputs(
    case: Spec, device: str, mode: str, point: CallPoint | None = None
) -> BuiltInputs:
    """One side's inputs for `case` on `device`. In inference mode no input requires grad (so
    AOTAutograd takes its inference path); in training mode inputs are built as declared."""
    training = mode == "training"
    scalars = point.scalars if point is not None else {}
    overrides = point.overrides if point is not None else {}
    gen = torch.Generator().manual_seed(case["seed"])
    named: dict[str, Any] = {}
    leaves: dict[str, torch.Tensor] = {}
    dynamic: dict[str, tuple[int, ...]] = {}
    for name, declared in case["inputs"].items():
        spec = overrides.get(name, declared)
        if spec["module"] is not None:
            module = _module(spec["module"], gen, device, training)
            named[name] = module
            leaves.update({f"{name}.{p}": t for p, t in module.named_parameters() if t.requires_grad})
        elif spec["tensor"] is not None:
            tspec = spec["tensor"]
            t = dense(tspec, gen, device)
            if training and tspec["requires_grad"]:
                t.requires_grad_(True)
                if tspec["leaf"]:
                    leaves[name] = t
                else:
                    leaves[f"{name}.leaf"], t = t, _non_leaf(t)
            if tspec["dynamic_dims"]:
                dynamic[name] = tuple(tspec["dynamic_dims"])
            named[name] = t
        elif spec["two_tensor"] is not None:
            rg = training and spec["two_tensor"]["requires_grad"]
            named[name] = _two_tensor(spec["two_tensor"], gen, device, requires_grad=rg)
            if rg:
                leaves[name] = named[name]
        elif spec["view"] is not None:
            with torch.enable_grad():
                # a case file is code (cases/README.md); names are checked by the schema, not sandboxed
                named[name] = eval(spec["view"], {"torch": torch}, dict(named))
        else:
            first = sweep(spec["scalar"])[0]
            named[name] = first if name in overrides else scalars.get(name, first)
    args = [named[name] for name, spec in case["inputs"].items() if not spec["hidden"]]
    return BuiltInputs(args=args, named=named, grad_leaves=leaves, dynamic_dims=dynamic)


def call_points(case: Spec) -> list[CallPoint]:
    """The calls of one pass: every value of the sweep (scalars zipped), then each `calls` entry."""
    swept = [n for n, s in case["inputs"].items() if s["scalar"] is not None and s["scalar"]["values"] is not None]
    n = len(case["inputs"][swept[0]]["scalar"]["values"]) if swept else 1
    points: list[CallPoint] = []
    for i in range(n):
        scalars = {name: sweep(s["scalar"])[i if name in swept else 0]
                   for name, s in case["inputs"].items() if s["scalar"] is not None}
        label = ", ".join(f"{k}={scalars[k]!r}" for k in swept)
        points.append(CallPoint(scalars, {}, f"call {i + 1} ({label})" if n > 1 else "call 1"))
    for j, overrides in enumerate(case["calls"]):
        what = ", ".join(f"{k}: {describe_input(spec)}" for k, spec in overrides.items())
        points.append(CallPoint(dict(points[0].scalars), dict(overrides), f"call {n + j + 1} ({what})"))
    return points


def describe_input(spec: Spec) -> str:
    if spec["tensor"] is not None:
        return f"tensor{list(spec['tensor']['shape'])}"
    if spec["scalar"] is not None:
        return repr(sweep(spec["scalar"])[0])
    if spec["view"] is not None:
        return str(spec["view"])
    return next(k for k in ("two_tensor", "module") if spec[k] is not None)
