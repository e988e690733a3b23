"""Input builders: seeded, deterministic, and fresh for each side of the comparison.

Eager and compiled each get their own `build_inputs` call with the same seed, so values,
geometry (size/stride/offset, storage sizes) and aliasing between inputs are identical while
no tensor is shared between the two sides. Values are drawn from one generator on the CPU, in
declaration order, and moved to the device.

Note [Persisted inputs]
An input that says `persist: true` (and every optimizer) is built at the first call of a pass
and the same object is passed to every later call of that pass, on each side its own: a model
trained over steps, an optimizer whose state lives across them. Each side keeps them in its
`Env`, with the case's classes (one namespace per variant, shared by both sides: the types are
the same, the instances are not) and the previous call's return value for the caller's actions.
"""

from __future__ import annotations

import importlib
import linecache
import math
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.core.mismatch import CaseBroken, FeatureUnavailable, exception_summary

Spec = dict[str, Any]
LAYOUT_OFFSET = 3
CALL_ACTIONS = ("before", "after")


@dataclass
class Env:
    """What one side keeps across the calls of a pass (Note [Persisted inputs])."""

    classes: dict[str, Any] = field(default_factory=dict)
    persisted: dict[str, tuple[Any, dict[str, torch.Tensor], tuple[int, ...]]] = field(default_factory=dict)
    out: Any = None


def load_classes(source: str | None, filename: str) -> dict[str, Any]:
    """Run a case's classes block as a module of its own (registered, so that its classes have
    a home module: pickling, dynamo's guards and tracebacks find them) and return its names."""
    if not source:
        return {}
    name = "torch_conformance_classes." + re.sub(r"\W", "_", filename.strip("<>"))
    module = types.ModuleType(name)
    module.__dict__["torch"] = torch
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    sys.modules[name] = module
    try:
        exec(compile(source, filename, "exec"), module.__dict__)
    except (Exception, SystemExit) as exc:  # a real Ctrl-C still stops the run
        where = source_line(exc, filename)
        line = int(where.rsplit(":", 1)[1]) if where else None
        raise CaseBroken(f"the classes block raised {exception_summary(exc)}{where}", line) from None
    return {k: v for k, v in module.__dict__.items() if not k.startswith("__")}


def source_line(exc: BaseException, filename: str) -> str:
    """' at <where>:<line>' for the deepest frame of `exc` in the source registered as `filename`."""
    import traceback

    found = ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == filename:
            found = f" at {filename.strip('<>')}:{lineno}"
    return found


def resolve_class(ref: str, classes: dict[str, Any], base: type, what: str) -> type:
    """The class a case names: from its classes block (`MyTwo`, `MyTwo.Inner`), or a dotted
    import path (`torch.nn.BatchNorm1d`); CaseBroken unless it is a subclass of `base`."""
    head, *rest = ref.split(".")
    found: Any = None
    if head in classes:
        found = classes[head]
        for part in rest:
            found = getattr(found, part, None)
    else:
        for cut in range(len(rest), 0, -1):
            try:
                found = importlib.import_module(".".join([head, *rest[:cut - 1]]))
            except ImportError:
                continue
            for part in rest[cut - 1:]:
                found = getattr(found, part, None)
            break
    if not isinstance(found, type):
        raise CaseBroken(f"{what} class {ref!r} is neither a class the classes block defines nor an importable "
                         "dotted name of a class")
    if not issubclass(found, base):
        raise CaseBroken(f"{what} class {ref!r} is not a {base.__module__}.{base.__qualname__}")
    return found


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
    if spec["values"] is not None:
        return torch.tensor(spec["values"], dtype=dtype).reshape(shape)
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


def _inner(spec: Spec, gen: torch.Generator, device: str, env: Env) -> torch.Tensor:
    if spec["tensor"] is not None:
        return dense(spec["tensor"], gen, device)
    if spec["two_tensor"] is not None:
        return _two_tensor(spec["two_tensor"], gen, device, env, requires_grad=False)
    return _subclass(spec["subclass"], gen, device, env, requires_grad=False)


def _two_tensor(spec: Spec, gen: torch.Generator, device: str, env: Env, *, requires_grad: bool) -> torch.Tensor:
    two = two_tensor_type()
    a = _inner(spec["a"], gen, device, env)
    b = _inner(spec["b"], gen, device, env)
    out = two(a, b)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _subclass(spec: Spec, gen: torch.Generator, device: str, env: Env, *, requires_grad: bool) -> torch.Tensor:
    cls = resolve_class(spec["class"], env.classes, torch.Tensor, "subclass")
    args = [_inner(a, gen, device, env) for a in spec["args"]]
    try:
        out = cls(*args, **spec["kwargs"])
    except Exception as exc:
        raise CaseBroken(f"building {spec['class']}(...) raised {exception_summary(exc)}") from None
    if not isinstance(out, torch.Tensor):
        raise CaseBroken(f"{spec['class']}(...) made a {type(out).__name__}, not a tensor")
    if requires_grad:
        out.requires_grad_(True)
    return out


def _module(spec: Spec, gen: torch.Generator, device: str, training: bool, env: Env) -> torch.nn.Module:
    if spec["class"] is not None:
        return _module_instance(spec, gen, device, training, env)
    module = torch.nn.Module()
    for pname, pspec in spec["parameters"].items():
        data = _inner(pspec, gen, device, env)
        module.register_parameter(pname, torch.nn.Parameter(data, requires_grad=training and pspec["requires_grad"]))
    for bname, bspec in spec["buffers"].items():
        module.register_buffer(bname, _inner(bspec, gen, device, env))
    return module


def _module_instance(spec: Spec, gen: torch.Generator, device: str, training: bool, env: Env) -> torch.nn.Module:
    """An instance of the spec's module class, initialised from a seed drawn from the case's
    generator: eager and compiled get equal, independent modules. Inference freezes every parameter."""
    cls = resolve_class(spec["class"], env.classes, torch.nn.Module, "module")
    seed = int(torch.randint(0, 1 << 62, (1,), generator=gen))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        try:
            module: torch.nn.Module = cls(*spec["args"], **spec["kwargs"])
        except Exception as exc:
            raise CaseBroken(f"building {spec['class']}(...) raised {exception_summary(exc)}") from None
    module.to(device=device, dtype=getattr(torch, spec["dtype"]) if spec["dtype"] else None)
    module.train(spec["train"])
    if not training:
        module.requires_grad_(False)
    return module


def _optimizer(spec: Spec, named: dict[str, Any], env: Env) -> torch.optim.Optimizer:
    cls = resolve_class(spec["class"], env.classes, torch.optim.Optimizer, "optimizer")
    head, _, path = spec["params"].partition(".")
    module = named[head]
    if path:
        try:
            module = module.get_submodule(path)
        except AttributeError as exc:
            raise CaseBroken(f"optimizer params {spec['params']!r}: {exc}") from None
    try:
        optimizer: torch.optim.Optimizer = cls(module.parameters(), **spec["kwargs"])
        return optimizer
    except Exception as exc:
        raise CaseBroken(f"building {spec['class']}(...) raised {exception_summary(exc)}") from None


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
    """Every tensor among the inputs: a module's parameters and buffers as `name.param`, an
    optimizer's state as `opt.state[net.weight].exp_avg` and its tensor hyperparameters as
    `opt.param_groups[0].lr`."""
    out: dict[str, torch.Tensor] = {}
    owner: dict[int, str] = {}
    for name, value in named.items():
        if isinstance(value, torch.Tensor):
            out[name] = value
        elif isinstance(value, torch.nn.Module):
            for pname, t in (*value.named_parameters(), *value.named_buffers()):
                out[f"{name}.{pname}"] = t
                owner.setdefault(id(t), f"{name}.{pname}")
    for name, value in named.items():
        if isinstance(value, torch.optim.Optimizer):
            k = 0
            for i, group in enumerate(value.param_groups):
                out.update({f"{name}.param_groups[{i}].{key}": v for key, v in group.items()
                            if isinstance(v, torch.Tensor) and key != "params"})
                for p in group["params"]:
                    state = value.state.get(p, {})
                    label = owner.get(id(p), f"params[{k}]")
                    out.update({f"{name}.state[{label}].{key}": v for key, v in state.items()
                                if isinstance(v, torch.Tensor)})
                    k += 1
    return out


@dataclass
class BuiltInputs:
    """One side's inputs: `named` holds every input, hidden ones too; `args` (the `passed` ones,
    in order) go to the program."""

    passed: list[str]
    named: dict[str, Any]
    grad_leaves: dict[str, torch.Tensor] = field(default_factory=dict)
    dynamic_dims: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def args(self) -> list[Any]:
        return [self.named[n] for n in self.passed]


@dataclass(frozen=True)
class CallPoint:
    """One call of a variant: this call's scalar values, replaced inputs and caller actions."""

    scalars: dict[str, Any]
    overrides: dict[str, Spec]
    label: str
    before: str | None = None
    after: str | None = None
    where: str = ""  # the actions' place in the case file, e.g. calls[0]


def sweep(scalar: Spec) -> tuple[Any, ...]:
    items = [scalar["value"]] if scalar["values"] is None else list(scalar["values"])
    return tuple(float(v) for v in items) if scalar["type"] == "float" else tuple(items)


def _build_one(name: str, spec: Spec, gen: torch.Generator, device: str, *, training: bool, named: dict[str, Any],
               env: Env) -> tuple[Any, dict[str, torch.Tensor], tuple[int, ...]]:
    """One input: its value, the grad leaves it brings (by name) and its dynamic dims."""
    leaves: dict[str, torch.Tensor] = {}
    if spec["module"] is not None:
        module = _module(spec["module"], gen, device, training, env)
        return module, {f"{name}.{p}": t for p, t in module.named_parameters() if t.requires_grad}, ()
    if spec["optimizer"] is not None:
        return _optimizer(spec["optimizer"], named, env), {}, ()
    if spec["tensor"] is not None:
        tspec = spec["tensor"]
        t = dense(tspec, gen, device)
        if training and tspec["requires_grad"]:
            t.requires_grad_(True)
            if tspec["leaf"]:
                leaves[name] = t
            else:
                leaves[f"{name}.leaf"], t = t, _non_leaf(t)
        return t, leaves, tuple(tspec["dynamic_dims"])
    if spec["two_tensor"] is not None or spec["subclass"] is not None:
        rg = training and (spec["two_tensor"] or spec["subclass"])["requires_grad"]
        if spec["two_tensor"] is not None:
            t = _two_tensor(spec["two_tensor"], gen, device, env, requires_grad=rg)
        else:
            t = _subclass(spec["subclass"], gen, device, env, requires_grad=rg)
        return t, ({name: t} if rg else {}), ()
    with torch.enable_grad():
        # a case file is code (cases/README.md); names are checked by the schema, not sandboxed
        return eval(spec["view"], {"torch": torch, **env.classes}, dict(named)), {}, ()


def build_inputs(case: Spec, device: str, mode: str, point: CallPoint | None = None,
                 env: Env | None = None) -> BuiltInputs:
    """One side's inputs for `case` on `device`. In inference mode no input requires grad (so
    AOTAutograd takes its inference path); in training mode inputs are built as declared.
    Persisted inputs come from `env` after the first call (Note [Persisted inputs])."""
    training = mode == "training"
    env = env if env is not None else Env()
    scalars = point.scalars if point is not None else {}
    overrides = point.overrides if point is not None else {}
    gen = torch.Generator().manual_seed(case["seed"])
    named: dict[str, Any] = {}
    leaves: dict[str, torch.Tensor] = {}
    dynamic: dict[str, tuple[int, ...]] = {}
    for name, declared in case["inputs"].items():
        spec = overrides.get(name, declared)
        if spec["scalar"] is not None:
            first = sweep(spec["scalar"])[0]
            named[name] = first if name in overrides else scalars.get(name, first)
            continue
        if name in env.persisted and name not in overrides:
            value, brought, dims = env.persisted[name]
        else:
            value, brought, dims = _build_one(name, spec, gen, device, training=training, named=named, env=env)
            if spec["persist"] or spec["optimizer"] is not None:
                env.persisted[name] = (value, brought, dims)
        named[name] = value
        leaves.update(brought)
        if dims:
            dynamic[name] = dims
    passed = [name for name, spec in case["inputs"].items() if not spec["hidden"]]
    return BuiltInputs(passed=passed, named=named, grad_leaves=leaves, dynamic_dims=dynamic)


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
    for j, entry in enumerate(case["calls"]):
        overrides = {k: v for k, v in entry.items() if k not in CALL_ACTIONS}
        what = [f"{k}: {describe_input(spec)}" for k, spec in overrides.items()]
        what += [f"{a}: {_first_line(entry[a])}" for a in CALL_ACTIONS if entry.get(a)]
        label = f"call {n + j + 1}" + (f" ({', '.join(what)})" if what else "")
        points.append(CallPoint(dict(points[0].scalars), overrides, label, entry.get("before"), entry.get("after"),
                                f"calls[{j}]"))
    return points


def _first_line(source: str) -> str:
    lines = [line.strip() for line in source.strip().splitlines()]
    return lines[0][:40] + (" ..." if len(lines) > 1 or len(lines[0]) > 40 else "")


def describe_input(spec: Spec) -> str:
    if spec["tensor"] is not None:
        return f"tensor{list(spec['tensor']['shape'])}"
    if spec["scalar"] is not None:
        return repr(sweep(spec["scalar"])[0])
    if spec["view"] is not None:
        return str(spec["view"])
    if spec["subclass"] is not None:
        return str(spec["subclass"]["class"])
    return next(k for k in ("two_tensor", "module", "optimizer") if spec[k] is not None)
