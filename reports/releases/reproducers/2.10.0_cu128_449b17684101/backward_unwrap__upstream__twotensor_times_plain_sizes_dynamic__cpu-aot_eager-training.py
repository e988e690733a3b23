#!/usr/bin/env python3
"""backward_unwrap/upstream/twotensor_times_plain_sizes_dynamic [cpu-aot_eager-training]: fail on torch 2.10.0+cu128 (git 449b1768410104d3ed79d3bcfe4ba1d65c7f22c0)

With dynamic=True, a TwoTensor scaled by the symbolic sizes of two plain inputs (sizes saved for backward) gives eager's values and gradients, for two shapes from one compile.

  call 1: out[0]: stride is (3, 1), but eager gives (4, 1)
  call 2 (p: tensor[9, 10], q: tensor[11, 12]): out[0]: stride is (3, 1), but eager gives (4, 1)

Case file: cases/backward_unwrap/upstream/twotensor_times_plain_sizes_dynamic.yaml (sha256 3592889641abcf7e); upstream: https://github.com/pytorch/pytorch/pull/178927
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The full check: every contract, inputs rebuilt exactly as the harness did (its core is embedded below).
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""

from __future__ import annotations

# -------------------- conformance/core/entry.py
AOT_FUNCTION = "aot_function"  # functorch.compile.aot_function with nop compilers
KIIM_LABEL = "aot_function-kiim"  # the same with keep_inference_input_mutations=True
DYNAMO_EAGER = "eager"  # dynamo alone, no AOTAutograd (so no tensorify pass either)
NONE = "none"  # no compilation at all: both sides run the program eagerly (a control for the harness itself)
DEFAULT_BACKENDS = ("aot_eager", "inductor")


# -------------------- conformance/core/mismatch.py
import dataclasses
import re
from dataclasses import dataclass
from typing import Any


def sentence(check: str, where: str, expected: str, actual: str, *, detail: str = "", source: str = "eager") -> str:
    """`<where>: <check> is <actual>, but <source> gives <expected> (<detail>)`: how every
    mismatch is worded, in records, reports, terminal output and reproducers."""
    text = f"{where}: {check} is {actual}, but {source} gives {expected}"
    return f"{text} ({detail})" if detail else text


@dataclass(frozen=True)
class Mismatch:
    check: str
    where: str
    expected: str
    actual: str
    detail: str = ""
    source: str = "eager"

    def message(self) -> str:
        return sentence(self.check, self.where, self.expected, self.actual, detail=self.detail, source=self.source)

    def to_json(self) -> dict[str, str]:
        return dataclasses.asdict(self)

    def at(self, prefix: str) -> Mismatch:
        """The same mismatch with its `where` prefixed (by the call or the pass it happened in)."""
        return dataclasses.replace(self, where=prefix + self.where)


@dataclass(frozen=True)
class Tolerance:
    rtol: float | None = None
    atol: float | None = None


class CaseBroken(Exception):
    """The case itself is wrong (eager fails, a config key is unknown): an `error`, not a verdict.
    `line`: where in the case file, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class FeatureUnavailable(Exception):
    """The build lacks something a case needs (a subclass, an entry point): the item skips."""


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _exception_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def exception_summary(exc: BaseException | None) -> str:
    """The exception's type and first line, and its cause's when it wraps one (a backend's failure
    says only `backend=... raised:`); object addresses left out, so that runs compare equal."""
    if exc is None:
        return "no exception"
    text = f"{type(exc).__name__}: {_exception_line(exc)}"
    cause = exc.__cause__ or getattr(exc, "inner_exception", None)
    if isinstance(cause, BaseException) and cause is not exc:
        text += f" (caused by {type(cause).__name__}: {_exception_line(cause)})"
    return _ADDRESS.sub(" at 0x...", text)[:400]


# -------------------- conformance/core/build.py
import importlib
import linecache
import math
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import torch


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


# -------------------- conformance/core/state.py
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch


def is_subclass(t: torch.Tensor) -> bool:
    return type(t) is not torch.Tensor and hasattr(type(t), "__tensor_flatten__")


def flatten_outputs(out: Any) -> list[Any]:
    """A program's return value as a flat list (tuples/lists/dicts in order; a bare value alone)."""
    if isinstance(out, tuple | list):
        return [x for item in out for x in flatten_outputs(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flatten_outputs(out[k])]
    return [out]


def output_structure(out: Any) -> str:
    """The containers around a return value, leaves as ``*``: ``tuple(*, list(*, *))``,
    ``dict(a: *, b: *)``. flatten_outputs drops this; callers that unpack rely on it."""
    if isinstance(out, tuple | list):
        return f"{type(out).__name__}({', '.join(output_structure(x) for x in out)})"
    if isinstance(out, dict):
        return f"dict({', '.join(f'{k}: {output_structure(out[k])}' for k in sorted(out, key=str))})"
    return "*"


def storage_key(t: torch.Tensor) -> tuple[str, int] | None:
    """Identity of a dense tensor's storage (device, data_ptr), None if it has none to share."""
    if is_subclass(t) or t.device.type == "meta":
        return None
    try:
        st = t.untyped_storage()
        if st.nbytes() == 0:
            return None
        # a wrapper subclass without the flatten protocol has a storage that refuses its pointer
        return (str(t.device), st.data_ptr())
    except (RuntimeError, NotImplementedError):
        return None


@dataclass
class TensorState:
    """Everything about one tensor that a contract speaks of, detached from the live tensor."""

    type: str
    dtype: str
    device: str
    shape: tuple[int, ...]
    stride: tuple[int, ...] | None
    storage_offset: int | None
    requires_grad: bool | str
    is_leaf: bool | str
    version: int | None
    storage: tuple[str, int] | None
    values: torch.Tensor | None
    storage_values: torch.Tensor | None
    inner: dict[str, TensorState] = field(default_factory=dict)


def _safe(fn: Any, default: Any = None) -> Any:
    try:
        return fn()
    except (RuntimeError, NotImplementedError, AttributeError, TypeError):
        return default


def tensor_state(t: torch.Tensor, *, with_storage: bool = True) -> TensorState:
    sub = is_subclass(t)
    inner: dict[str, TensorState] = {}
    if sub:
        names, _ctx = type(t).__tensor_flatten__(t)  # type: ignore[attr-defined]  # subclass protocol
        for name in names:
            inner[name] = tensor_state(getattr(t, name), with_storage=with_storage)
    values = None if sub else _safe(lambda: t.detach().clone(memory_format=torch.contiguous_format))
    storage_values = None
    if with_storage and not sub:
        storage_values = _safe(lambda: _whole_storage(t))
    return TensorState(
        type=f"{type(t).__module__}.{type(t).__qualname__}",
        dtype=str(t.dtype),
        device=str(t.device),
        shape=tuple(t.shape),
        stride=_safe(lambda: tuple(t.stride())),
        storage_offset=_safe(t.storage_offset),
        requires_grad=_autograd_field(t, "requires_grad"),
        is_leaf=_autograd_field(t, "is_leaf"),
        version=_safe(lambda: t._version),
        storage=storage_key(t),
        values=values,
        storage_values=storage_values,
        inner=inner,
    )


def _autograd_field(t: torch.Tensor, name: str) -> bool | str:
    """A view whose base was written in place can refuse to answer (multi-output views, views
    made under no_grad); the refusal itself is then what eager and compiled must agree on."""
    try:
        return bool(getattr(t, name))
    except RuntimeError as exc:
        return f"raises {type(exc).__name__}: {str(exc).split('.')[0]}"


def whole_storage_view(t: torch.Tensor) -> torch.Tensor | None:
    """A tensor over the full storage `t` lives in, as its dtype (None if it has no such storage)."""
    st = t.untyped_storage()
    if st.nbytes() % t.element_size():
        return None
    st.data_ptr()  # raises for a wrapper subclass's storage, which set_ would crash on (segfault)
    whole = torch.empty(0, dtype=t.dtype, device=t.device)
    whole.set_(st, 0, (st.nbytes() // t.element_size(),), (1,))
    return whole


def _whole_storage(t: torch.Tensor) -> torch.Tensor | None:
    """The full storage's contents: catches writes outside the tensor's geometry."""
    whole = whole_storage_view(t)
    return None if whole is None else whole.detach().clone()


def restore(t: torch.Tensor, state: TensorState | None) -> None:
    """Put back the storage contents `state` saw (recursing into a subclass's inner tensors)."""
    if state is None:
        return
    for name, inner in state.inner.items():
        restore(getattr(t, name), inner)
    if state.storage_values is not None:
        whole = _safe(lambda: whole_storage_view(t))
        if whole is not None and whole.shape == state.storage_values.shape:
            with torch.no_grad():
                whole.copy_(state.storage_values)


@dataclass
class Relation:
    """How output k relates to the inputs and earlier outputs of the same call."""

    is_input: str | None
    view_of_input: str | None
    shares_storage_with: tuple[str, ...]
    requires_grad: bool = False


def relations(named_inputs: dict[str, Any], outputs: Sequence[Any]) -> list[Relation | None]:
    """For each output: is it an input object, a view whose `_base` is (the base of) an input,
    and which inputs/outputs share its storage. Names: input names, and `out[k]`."""
    input_storage: dict[tuple[str, int], list[str]] = {}
    for name, value in named_inputs.items():
        if isinstance(value, torch.Tensor):
            key = storage_key(value)
            if key is not None:
                input_storage.setdefault(key, []).append(name)
    out_storage: dict[tuple[str, int], list[str]] = {}
    rels: list[Relation | None] = []
    for k, out in enumerate(outputs):
        if not isinstance(out, torch.Tensor):
            rels.append(None)
            continue
        same = next((n for n, v in named_inputs.items() if v is out), None)
        base = out._base
        view_of = None
        if base is not None:
            view_of = next(
                (n for n, v in named_inputs.items() if isinstance(v, torch.Tensor) and (v is base or v._base is base)),
                "<intermediate>",
            )
        key = storage_key(out)
        sharing: list[str] = []
        if key is not None:
            sharing = [*input_storage.get(key, []), *out_storage.get(key, [])]
            out_storage.setdefault(key, []).append(f"out[{k}]")
        rels.append(Relation(is_input=same, view_of_input=view_of, shares_storage_with=tuple(sorted(sharing)),
                             requires_grad=out.requires_grad))
    return rels


def storage_sharing(tensors: dict[str, torch.Tensor]) -> dict[str, tuple[str, ...]]:
    """For each tensor, the others that live in the same storage (e.g. after `x.set_(y)`)."""
    by_key: dict[tuple[str, int], list[str]] = {}
    for name, t in tensors.items():
        key = storage_key(t)
        if key is not None:
            by_key.setdefault(key, []).append(name)
    return {name: tuple(sorted(n for n in group if n != name)) for group in by_key.values() for name in group}


@dataclass
class Ambient:
    """Global modes a call may legitimately change (and then eager changes them too)."""

    grad_enabled: bool
    inference_mode: bool
    autocast: tuple[tuple[str, bool], ...]


def restore_ambient(before: Ambient) -> None:
    """Put grad mode and autocast back as they were (a caller action may have changed them and
    left the reset to an `after:` block that did not run: the probe replays `before:` only)."""
    torch.set_grad_enabled(before.grad_enabled)
    for dev, enabled in before.autocast:
        if _safe(lambda d=dev: torch.is_autocast_enabled(d), None) != enabled:
            _safe(lambda d=dev, e=enabled: torch.set_autocast_enabled(d, e), None)


def ambient() -> Ambient:
    autocast = []
    for dev in ("cpu", "cuda"):
        enabled = _safe(lambda d=dev: torch.is_autocast_enabled(d), None)
        if enabled is not None:
            autocast.append((dev, bool(enabled)))
    return Ambient(
        grad_enabled=torch.is_grad_enabled(),
        inference_mode=torch.is_inference_mode_enabled(),
        autocast=tuple(autocast),
    )


# -------------------- conformance/core/compare.py
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch



def compare_values(
    where: str, actual: torch.Tensor | None, expected: torch.Tensor | None, tol: Tolerance, check: str = "values"
) -> list[Mismatch]:
    if actual is None or expected is None:
        if (actual is None) != (expected is None):
            return [Mismatch(check, where, "readable" if expected is not None else "unreadable",
                             "readable" if actual is not None else "unreadable")]
        return []
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return []  # reported by the metadata checks
    rtol, atol = tol.rtol, tol.atol
    if (rtol is None) != (atol is None):  # assert_close takes both or neither
        rtol, atol = rtol or 0.0, atol or 0.0
    try:
        torch.testing.assert_close(
            actual.cpu(),
            expected.cpu(),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            check_device=False,
            check_stride=False,
        )
    except AssertionError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        detail = "; ".join(lines[:4])
        return [Mismatch(check, where, short(expected.flatten()[:8].tolist()),
                         short(actual.flatten()[:8].tolist()), detail)]
    return []


def compare_state(
    where: str,
    actual: TensorState,
    expected: TensorState,
    tol: Tolerance,
    *,
    strides: bool = True,
    grad_fields: bool = True,
    storage: bool = True,
) -> list[Mismatch]:
    """Metadata, values (and the whole storage's values) of one tensor, recursing into subclasses."""
    out: list[Mismatch] = []

    def field(name: str, a: Any, e: Any) -> None:
        if a != e:
            out.append(Mismatch(name, where, short(e), short(a)))

    field("type", actual.type, expected.type)
    field("dtype", actual.dtype, expected.dtype)
    field("device", actual.device, expected.device)
    field("shape", actual.shape, expected.shape)
    if strides:
        field("stride", actual.stride, expected.stride)
        field("storage_offset", actual.storage_offset, expected.storage_offset)
    if grad_fields:
        field("requires_grad", actual.requires_grad, expected.requires_grad)
        field("is_leaf", actual.is_leaf, expected.is_leaf)
    if out:
        return out
    out += compare_values(where, actual.values, expected.values, tol)
    if storage and not out and actual.storage_values is not None and expected.storage_values is not None:
        if actual.storage_values.shape != expected.storage_values.shape:
            field("storage size", tuple(actual.storage_values.shape), tuple(expected.storage_values.shape))
        else:
            out += compare_values(where, actual.storage_values, expected.storage_values, tol, "storage contents")
    for name in sorted(set(actual.inner) | set(expected.inner)):
        a, e = actual.inner.get(name), expected.inner.get(name)
        if a is None or e is None:
            out.append(Mismatch("inner tensors", where, short(sorted(expected.inner)), short(sorted(actual.inner))))
            break
        out += compare_state(f"{where}.{name}", a, e, tol, strides=strides, grad_fields=False, storage=storage)
    return out


def compare_plain(where: str, actual: Any, expected: Any, tol: Tolerance) -> list[Mismatch]:
    """A non-tensor output (Python number, None, string...)."""
    if type(actual) is not type(expected):
        return [Mismatch("type", where, type(expected).__name__, type(actual).__name__)]
    if isinstance(expected, float) and isinstance(actual, float):
        rtol = tol.rtol if tol.rtol is not None else 1.3e-6
        atol = tol.atol if tol.atol is not None else 1e-5
        both_nan = math.isnan(actual) and math.isnan(expected)
        if not (abs(actual - expected) <= atol + rtol * abs(expected) or both_nan):
            return [Mismatch("value", where, short(expected), short(actual))]
        return []
    if actual != expected:
        return [Mismatch("value", where, short(expected), short(actual))]
    return []


@dataclass(frozen=True)
class InputChange:
    """What a call did to one input: compared by default as 'did it happen', not 'how much'."""

    storage_swapped: bool
    version_delta: int | None


def input_change(before: TensorState, after: TensorState) -> InputChange:
    delta = None
    if before.version is not None and after.version is not None:
        delta = after.version - before.version
    return InputChange(storage_swapped=before.storage != after.storage, version_delta=delta)


def compare_change(where: str, actual: InputChange, expected: InputChange, version: str) -> list[Mismatch]:
    out = []
    if actual.storage_swapped != expected.storage_swapped:
        out.append(
            Mismatch("storage swapped (set_)", where, str(expected.storage_swapped), str(actual.storage_swapped))
        )
    if version != "ignore" and actual.version_delta is not None and expected.version_delta is not None:
        if version == "exact":
            if actual.version_delta != expected.version_delta:
                out.append(Mismatch("_version delta", where, str(expected.version_delta), str(actual.version_delta)))
        elif (actual.version_delta > 0) != (expected.version_delta > 0):
            out.append(
                Mismatch(
                    "_version moved",
                    where,
                    f"{expected.version_delta > 0} (delta {expected.version_delta})",
                    f"{actual.version_delta > 0} (delta {actual.version_delta})",
                )
            )
    return out


def compare_relations(actual: Sequence[Relation | None], expected: Sequence[Relation | None]) -> list[Mismatch]:
    """Aliasing of each output. See Note [View-ness of outputs]."""
    out = []
    for k, (a, e) in enumerate(zip(actual, expected, strict=False)):
        if a is None or e is None:
            continue
        where = f"out[{k}]"
        if a.is_input != e.is_input:
            out.append(Mismatch("is the input object", where, short(e.is_input), short(a.is_input)))
        if e.requires_grad and (
            (a.view_of_input is None) != (e.view_of_input is None)
            or (a.view_of_input != e.view_of_input and "<intermediate>" not in (a.view_of_input, e.view_of_input))
        ):
            out.append(Mismatch("view of (_base)", where, short(e.view_of_input), short(a.view_of_input)))
        if a.shares_storage_with != e.shares_storage_with:
            out.append(Mismatch("shares storage with", where, short(list(e.shares_storage_with)),
                                short(list(a.shares_storage_with))))
    return out


def compare_ambient(actual: Ambient, expected: Ambient) -> list[Mismatch]:
    out = []
    if actual.grad_enabled != expected.grad_enabled:
        out.append(Mismatch("grad mode", "after the call", str(expected.grad_enabled), str(actual.grad_enabled)))
    if actual.inference_mode != expected.inference_mode:
        out.append(
            Mismatch("inference mode", "after the call", str(expected.inference_mode), str(actual.inference_mode))
        )
    if actual.autocast != expected.autocast:
        out.append(Mismatch("autocast", "after the call", short(expected.autocast), short(actual.autocast)))
    return out


def matches_exception(exc: BaseException | None, type_name: str, pattern: str | None) -> bool:
    if exc is None:
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    if type_name not in names:
        return False
    return pattern is None or re.search(pattern, str(exc)) is not None


# -------------------- conformance/core/call.py
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch


TANGENT_SEED_OFFSET = 7919

# Note [Scratch storage of outputs]
# The whole storage behind a tensor is compared so that writes outside its geometry show. For an
# input that storage is ours (built zeroed, then filled), and for an output that shares storage
# with an input or another output it is what the caller sees through them. The storage of a
# fresh output is the kernel's business: eager's mse_loss leaves its 0-dim result in a
# 16-element buffer whose other elements were never written, inductor in a 1-element one. So
# an output's storage size and contents are compared only where it shares storage (eager's
# relations); its own elements are always compared.  # the tangents' generator: seeded apart from the inputs' own


def program_raised(exc: BaseException) -> bool:
    """The default `stopping` test's inverse: Exception, SystemExit and KeyboardInterrupt are the
    program's own (the harness installs a finer one that knows about real Ctrl-C)."""
    return isinstance(exc, Exception | SystemExit | KeyboardInterrupt)


@dataclass
class Side:
    """What one side (eager or compiled) of one call left behind."""

    inputs: BuiltInputs
    before: dict[str, tuple[tuple[str, int] | None, int | None]]
    exc: BaseException | None = None
    where: str = ""  # " at <case file>:<line>" for an exception the program raised
    result: Any = None  # the return value as the program gave it (`out` in the caller's actions)
    outputs: list[Any] = field(default_factory=list)
    structure: str = ""
    out_states: list[TensorState | None] = field(default_factory=list)
    after: dict[str, TensorState] = field(default_factory=dict)
    sharing: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ambient: Ambient | None = None
    relations: list[Relation | None] = field(default_factory=list)
    grads: dict[str, TensorState | None] = field(default_factory=dict)
    backward_exc: BaseException | None = None
    write_errors: list[str | None] = field(default_factory=list)
    after_write: dict[str, TensorState] = field(default_factory=dict)
    # the inputs' storages from before the call, kept alive while the side is: a storage freed by a
    # set_ could otherwise be reallocated at the same address and the swap would go unseen
    held: list[Any] = field(default_factory=list)


def _held(t: torch.Tensor) -> Any:
    try:
        return t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None


def _light(t: torch.Tensor) -> tuple[tuple[str, int] | None, int | None]:
    try:
        version: int | None = t._version
    except (RuntimeError, AttributeError):
        version = None
    return storage_key(t), version


def _program_line(exc: BaseException) -> str:
    """Where in the case's program an exception was raised (its deepest frame there), or ''."""
    import traceback

    found = ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        name = frame.f_code.co_filename
        if name.startswith("<program of "):
            found = f" at {name[len('<program of '):-1]}:{lineno}"
    return found


def call(fn: Callable[..., Any], inputs: BuiltInputs, case: Spec,
         is_program_exception: Callable[[BaseException], bool] = program_raised) -> Side:
    tensors = tensors_of(inputs.named)
    side = Side(inputs=inputs, before={n: _light(t) for n, t in tensors.items()},
                held=[_held(t) for t in tensors.values()])
    result = None
    with torch.set_grad_enabled(case["grad_enabled"]):
        try:
            result = fn(*inputs.args)
        except BaseException as exc:
            if not is_program_exception(exc):
                raise
            # keep no frame alive: a program that allocated without bound holds it in its locals
            side.where = _program_line(exc)
            side.exc = exc.with_traceback(None)
        side.ambient = ambient()
    if side.exc is None:
        side.result = result
        side.outputs = flatten_outputs(result)
        side.structure = output_structure(result)
        side.relations = relations(tensors_of(inputs.named), side.outputs)
    return side


def act(inputs: BuiltInputs, source: str, filename: str, *, env: Env, out: Any,
        is_program_exception: Callable[[BaseException], bool] = program_raised) -> str | None:
    """Run a caller action (a `before:`/`after:` block) on one side's inputs; rebinding an input's
    name replaces that input (a persisted one for the rest of the pass). The exception it raised,
    summarised, or None."""
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope: dict[str, Any] = {"torch": torch, **env.classes, **inputs.named, "out": out}
    try:
        exec(compile(source, filename, "exec"), scope)
    except BaseException as exc:
        if not is_program_exception(exc):
            raise
        return exception_summary(exc) + source_line(exc, filename)
    for name, value in inputs.named.items():
        if scope.get(name) is not value:
            inputs.named[name] = scope.get(name)
            if name in env.persisted:
                env.persisted[name] = (scope.get(name), *env.persisted[name][1:])
    return None


def snapshot(side: Side) -> None:
    side.out_states = [tensor_state(o) if isinstance(o, torch.Tensor) else None for o in side.outputs]
    tensors = tensors_of(side.inputs.named)
    side.after = {n: tensor_state(t) for n, t in tensors.items()}
    side.sharing = storage_sharing(tensors)


def tangent(out: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A seeded gradient shaped like `out`; for a subclass, the same subclass built from inner
    tangents, so the backward sees what a user's backward of that output would."""
    if is_subclass(out):
        names, ctx = type(out).__tensor_flatten__(out)  # type: ignore[attr-defined]  # subclass protocol
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        built: torch.Tensor = type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())  # type: ignore[attr-defined]  # subclass protocol
        return built
    draw = torch.randn(tuple(out.shape), generator=gen, dtype=torch.complex64 if out.is_complex() else torch.float32)
    return draw.to(device=out.device, dtype=out.dtype)


def backward(side: Side, case: Spec, is_program_exception: Callable[[BaseException], bool] = program_raised) -> None:
    """Backward through every differentiable output at once, with seeded tangents."""
    diff = [o for o in side.outputs if isinstance(o, torch.Tensor) and o.requires_grad
            and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(case["seed"] + TANGENT_SEED_OFFSET)
        with torch.enable_grad():
            try:
                torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])
            except BaseException as exc:
                if not is_program_exception(exc):
                    raise
                side.backward_exc = exc.with_traceback(None)
    side.grads = {name: (tensor_state(leaf.grad, with_storage=False) if leaf.grad is not None else None)
                  for name, leaf in side.inputs.grad_leaves.items()}


def write_through(side: Side) -> None:
    """Write through every output, so aliasing shows as changed inputs/outputs."""
    with torch.no_grad():
        for o in side.outputs:
            if not isinstance(o, torch.Tensor):
                side.write_errors.append(None)
                continue
            try:
                if o.dtype == torch.bool:
                    o.logical_not_()
                else:
                    o.add_(1)
                side.write_errors.append(None)
            except Exception as exc:
                side.write_errors.append(type(exc).__name__)
    states = {n: tensor_state(t) for n, t in tensors_of(side.inputs.named).items()}
    for k, o in enumerate(side.outputs):
        if isinstance(o, torch.Tensor):
            states[f"out[{k}]"] = tensor_state(o)
    side.after_write = states


def undo_write_through(side: Side) -> None:
    """Put back what the write-through changed (from the snapshot), so that persisted inputs and
    the `out` of the caller's next action hold what the program and the caller left: the
    write-through is the harness's probe, not part of the program."""
    for name, t in tensors_of(side.inputs.named).items():
        restore(t, side.after.get(name))
    for o, state in zip(side.outputs, side.out_states, strict=False):
        if isinstance(o, torch.Tensor):
            restore(o, state)


def mark_dynamic(inputs: BuiltInputs) -> None:
    import torch._dynamo

    for name, dims in inputs.dynamic_dims.items():
        torch._dynamo.mark_dynamic(inputs.named[name], list(dims))


def eager_must_not_raise(eager: Side, case: Spec, prefix: str) -> None:
    """An eager exception the case does not declare breaks the case whatever compiled does."""
    raises = case["expect"]["raises"]
    if eager.exc is not None and (raises is None or "eager" not in raises["sides"]):
        raise CaseBroken(f"{prefix}eager raised {exception_summary(eager.exc)}{eager.where}; fix the program, or "
                         "declare expect.raises for a negative case")


def _compare_exceptions(eager: Side, comp: Side, case: Spec, prefix: str) -> list[Mismatch]:
    out: list[Mismatch] = []
    raises = case["expect"]["raises"]
    for name, side in (("eager", eager), ("compiled", comp)):
        if raises is not None and name in raises["sides"]:
            if matches_exception(side.exc, raises["type"], raises["match"]):
                continue
            want = raises["type"] + (f" matching {raises['match']!r}" if raises["match"] else "")
            got = exception_summary(side.exc)
            if name == "eager":
                raise CaseBroken(f"{prefix}expect.raises: eager gives {got}, but the case expects {want}")
            out.append(Mismatch("exception", "call", want, got, source="expect.raises"))
        elif side.exc is not None and name == "compiled":
            out.append(Mismatch("exception", "call", exception_summary(None), exception_summary(side.exc)))
    return out


def _compare_outputs(eager: Side, comp: Side, case: Spec, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if comp.structure != eager.structure:
        out.append(Mismatch("structure", "outputs", eager.structure, comp.structure))
    if len(comp.outputs) != len(eager.outputs):
        return [*out, Mismatch("number of outputs", "outputs", str(len(eager.outputs)), str(len(comp.outputs)))]
    for k, (a, e) in enumerate(zip(comp.outputs, eager.outputs, strict=True)):
        sa, se = comp.out_states[k], eager.out_states[k]
        if sa is not None and se is not None:
            # Note [Scratch storage of outputs]: the rest of a fresh output's storage is scratch
            rel = eager.relations[k] if k < len(eager.relations) else None
            shared = rel is not None and bool(rel.shares_storage_with)
            out += compare_state(f"out[{k}]", sa, se, tol, strides=case["expect"]["strides"], storage=shared)
        elif (sa is None) != (se is None):
            out.append(Mismatch("type", f"out[{k}]", type(e).__name__, type(a).__name__))
        else:
            out += compare_plain(f"out[{k}]", a, e, tol)
    out += compare_relations(comp.relations, eager.relations)
    return out


def _as_state(light: tuple[tuple[str, int] | None, int | None]) -> TensorState:
    return TensorState(type="", dtype="", device="", shape=(), stride=None, storage_offset=None,
                       requires_grad=False, is_leaf=True, version=light[1], storage=light[0],
                       values=None, storage_values=None)


def version_mode(case: Spec, name: str) -> str:
    """How `expect.version` compares the tensor `name`: one mode for all, or the mode of the
    longest key naming it or a tensor above it (`bn` covers `bn.running_mean`); else moved."""
    version = case["expect"]["version"]
    if isinstance(version, str):
        return version
    keys = [k for k in version if name == k or name.startswith((k + ".", k + "["))]
    return str(version[max(keys, key=len)]) if keys else "moved"


def _compare_inputs(eager: Side, comp: Side, case: Spec, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    for name in [*eager.after, *(n for n in comp.after if n not in eager.after)]:
        se, sa = eager.after.get(name), comp.after.get(name)
        if se is None or sa is None:  # e.g. optimizer state that one side's step created
            out.append(Mismatch("exists", f"input {name}", str(se is not None), str(sa is not None)))
            continue
        out += compare_state(f"input {name}", sa, se, tol)
        if name in eager.before and name in comp.before:
            ce = input_change(_as_state(eager.before[name]), se)
            ca = input_change(_as_state(comp.before[name]), sa)
            out += compare_change(f"input {name}", ca, ce, version_mode(case, name))
        shared_e, shared_a = eager.sharing.get(name, ()), comp.sharing.get(name, ())
        if shared_a != shared_e:
            out.append(Mismatch("shares storage with", f"input {name}", str(list(shared_e)), str(list(shared_a))))
    return out


def _compare_grads(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (comp.backward_exc is None) != (eager.backward_exc is None):
        out.append(Mismatch("exception", "backward", exception_summary(eager.backward_exc),
                            exception_summary(comp.backward_exc)))
    for name, ge in eager.grads.items():
        ga = comp.grads.get(name)
        if (ga is None) != (ge is None):
            out.append(Mismatch(".grad", f"grad of {name}", "a tensor" if ge is not None else "None",
                                "a tensor" if ga is not None else "None"))
        elif ga is not None and ge is not None:
            out += compare_state(f"grad of {name}", ga, ge, tol, strides=False, grad_fields=False, storage=False)
    return out


def _compare_write_through(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if comp.write_errors != eager.write_errors:
        out.append(Mismatch("in-place write through outputs", "outputs", str(eager.write_errors),
                            str(comp.write_errors)))
    for name, se in eager.after_write.items():
        sa = comp.after_write.get(name)
        if sa is not None:
            out += compare_state(f"after writing through the outputs: {name}", sa, se, tol, strides=False,
                                 grad_fields=False, storage=False)
    return out


def compare_call(eager: Side, comp: Side, case: Spec, prefix: str, training: bool) -> list[Mismatch]:
    """Everything one call left behind, compiled against eager; `where` prefixed with the call."""
    found = _compare_exceptions(eager, comp, case, prefix)
    if eager.exc is None and comp.exc is None:
        expect = case["expect"]
        tol = Tolerance(expect["rtol"], expect["atol"])
        found += _compare_outputs(eager, comp, case, tol)
        found += _compare_inputs(eager, comp, case, tol)
        assert comp.ambient is not None
        assert eager.ambient is not None
        found += compare_ambient(comp.ambient, eager.ambient)
        if training:
            found += _compare_grads(eager, comp, tol)
        if expect["write_through"]:
            found += _compare_write_through(eager, comp, tol)
    return [m.at(prefix) for m in found]


# -------------------- conformance/core/compile.py
import contextlib
import importlib
import linecache
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import torch



def make_function(program: str, name: str, filename: str, classes: dict[str, Any] | None = None) -> Callable[..., Any]:
    """A fresh function object from the program, with the case's classes in its globals. The
    source is registered with linecache under a name of its own: dynamo and tracebacks read
    source lines, and a case file is not Python."""
    linecache.cache[filename] = (len(program), None, program.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"torch": torch, **(classes or {}), "__name__": "torch_conformance_case"}
    exec(compile(program, filename, "exec"), namespace)
    fn: Callable[..., Any] = namespace[name]
    return fn


class CountingBackend:
    """A backend wrapper that counts the graphs handed to the backend it wraps."""

    def __init__(self, inner: Callable[..., Any]) -> None:
        self.inner = inner
        self.count = 0

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        self.count += 1
        return self.inner(gm, example_inputs, **kwargs)


def lookup_backend(name: str) -> Callable[..., Any]:
    """A torch.compile backend by its registered name; FeatureUnavailable if this build has none."""
    import torch._dynamo

    lookup: Callable[[str], Callable[..., Any]] | None = getattr(torch._dynamo, "lookup_backend", None)
    if lookup is None:
        from torch._dynamo.backends.registry import lookup_backend

        lookup = lookup_backend
    try:
        return lookup(name)
    except Exception as exc:  # an unknown name raises InvalidBackend, whose module moved between releases
        raise FeatureUnavailable(f"backend {name!r} is not registered on this build ({exc})") from None


def make_compiled(
    fn: Callable[..., Any],
    case: Spec,
    backend: str,
    kiim: bool,
    counting: Callable[[Callable[..., Any], bool], CountingBackend] = lambda inner, _aot: CountingBackend(inner),
) -> tuple[Callable[..., Any], CountingBackend]:
    """`fn` compiled with the variant's entry point; `counting(inner, aot)` wraps the backend."""
    options = case["compile"]
    if backend == NONE:
        return fn, counting(lambda gm, _example_inputs, **_kw: gm, False)
    if backend == AOT_FUNCTION:
        try:
            from functorch.compile import aot_function, nop  # type: ignore[attr-defined]  # re-exported without __all__
        except ImportError as exc:
            raise FeatureUnavailable(f"functorch.compile.aot_function is not available: {exc}") from None
        counter = counting(nop, True)
        compiled = aot_function(fn, fw_compiler=counter, bw_compiler=nop, keep_inference_input_mutations=kiim,
                                dynamic=bool(options["dynamic"]))
        return compiled, counter
    counter = counting(lookup_backend(backend), False)
    return torch.compile(fn, backend=counter, dynamic=options["dynamic"], fullgraph=options["fullgraph"]), counter


def config_patches(case: Spec, backend: str) -> list[tuple[Any, dict[str, Any]]]:
    """(config module, {name: value}) for the case's config and its inductor options and mode."""
    patches: list[tuple[Any, dict[str, Any]]] = []
    for key, value in case["config"].items():
        module_name, _, attr = key.partition(".config.")
        module_name += ".config"
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise CaseBroken(f"config: {key}: {module_name} is not importable on this build ({exc})") from None
        target: Any = module
        for part in attr.split("."):
            if not hasattr(target, part):
                raise CaseBroken(f"config: {key}: this build has no config {attr!r} in {module_name}")
            target = getattr(target, part)
        patches.append((module, {attr: value}))
    options = case["compile"]
    if backend == "inductor" and (options["options"] or options["mode"]):
        import torch._inductor
        import torch._inductor.config as inductor_config

        chosen: dict[str, Any] = {}
        if options["mode"]:
            chosen.update(torch._inductor.list_mode_options(options["mode"], options["dynamic"]))
        chosen.update(options["options"])
        patches.append((inductor_config, chosen))
    return patches


@contextlib.contextmanager
def isolated(case: Spec, backend: str) -> Iterator[None]:
    """See Note [Isolation between cases]."""
    import torch._dynamo

    torch._dynamo.reset()
    grad = torch.is_grad_enabled()
    try:
        with contextlib.ExitStack() as stack:
            for module, patch in config_patches(case, backend):
                stack.enter_context(module.patch(patch))
            torch.manual_seed(case["seed"])
            yield
    finally:
        torch.set_grad_enabled(grad)
        torch._dynamo.reset()


@contextlib.contextmanager
def fresh_compile_caches() -> Iterator[None]:
    """See Note [Cold and warm passes]."""
    names = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    saved = {n: os.environ.get(n) for n in names}
    with tempfile.TemporaryDirectory(prefix="torch-conformance-cold-") as tmp:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        try:
            yield
        finally:
            for n, v in saved.items():
                if v is None:
                    os.environ.pop(n, None)
                else:
                    os.environ[n] = v


# -------------------- conformance/core/check.py
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


# How a reproducer script exits (the short and the full one alike); 1 and 2 are Python's own
# (a crash, a bad command line), so they never mean a verdict.
REPRO_MATCHES, REPRO_DIFFERS, REPRO_CANNOT_TELL = 0, 3, 4


class Hooks:
    """Extension points of the loop; every default does nothing."""

    def program_exception(self, exc: BaseException) -> bool:
        """Whether an exception out of the program is the program's own (else it stops the run)."""
        return program_raised(exc)

    def counting(self, inner: Callable[..., Any], aot: bool) -> CountingBackend:
        """The backend wrapper that counts (and may describe) the graphs compiled."""
        return CountingBackend(inner)

    def compiled(self, compiled: Callable[..., Any]) -> Callable[..., Any]:
        """The compiled callable the loop calls (a seeded fault wraps it)."""
        return compiled

    def around_pass(self, index: int) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def loaded(self, classes: dict[str, Any]) -> None:
        """The case's classes block ran (once per variant); its names."""

    def pass_done(self, index: int, counter: CountingBackend) -> None:
        """After pass `index` (0 cold, 1 warm), with the counter of its compiles."""

    def calling(self, counter: CountingBackend, inputs: BuiltInputs | None) -> None:
        """Right before the compiled call (its inputs) and right after it (None)."""

    def timed(self, bucket: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def spent(self, bucket: str, seconds: float) -> None:
        """Time measured by the loop itself (the compiled call: `compile` or `compiled_calls`)."""


@dataclass
class Outcome:
    mismatches: list[Mismatch] = field(default_factory=list)
    compile_counts: dict[str, int | None] = field(default_factory=dict)
    calls: int = 0
    recompiles: str | None = None  # graphs compiled after the first call where expect.compiles says nothing


@dataclass(frozen=True)
class Target:
    """What a variant runs: the program and the classes block (and where their lines come
    from) on a device and backend."""

    program: str
    function: str
    filename: str
    device: str
    backend: str
    mode: str
    kiim: bool = False
    classes: str | None = None
    classes_filename: str = "<classes>"


def compile_count_mismatch(case: Spec, target: Target, pass_name: str, calls: int, count: int) -> Mismatch | None:
    expected = case["expect"]["compiles"]
    if expected is None or target.backend in (AOT_FUNCTION, NONE) or count == expected:
        return None
    return Mismatch("graphs compiled", f"{pass_name} pass over {calls} call(s)", str(expected), str(count),
                    "a recompile per value" if count >= calls > 1 else "", source="expect.compiles")


def recompile_note(case: Spec, target: Target, per_call: list[int]) -> str | None:
    """Graphs compiled after the first call of the cold pass, where the case does not say how
    many to expect: never a silent pass (the record and the report show it), never a verdict."""
    later = sum(per_call[1:])
    if case["expect"]["compiles"] is not None or target.backend in (AOT_FUNCTION, NONE) or not later:
        return None
    every = all(n > 0 for n in per_call[1:])
    return (f"{sum(per_call)} graph(s) over {len(per_call)} calls, {later} of them after the first call"
            + (" (a recompile on every call)" if every and len(per_call) > 2 else "")
            + "; expect.compiles is not set")


def run_passes(case: Spec, target: Target, hooks: Hooks | None = None) -> Outcome:
    """Every pass of the variant (a second, with caches warm, where the case asks), isolated."""
    import torch._dynamo

    hooks = hooks or Hooks()
    points = call_points(case)
    warm = case["expect"]["warm_rerun"]
    outcome = Outcome()
    with contextlib.ExitStack() as stack:
        if warm:
            stack.enter_context(fresh_compile_caches())
        stack.enter_context(isolated(case, target.backend))
        classes = load_classes(target.classes, target.classes_filename)
        hooks.loaded(classes)
        for p in range(2 if warm else 1):
            pass_name = "cold" if p == 0 else "warm"
            if p:
                torch._dynamo.reset()
            eager_fn = make_function(target.program, target.function, target.filename, classes)
            compiled, counter = make_compiled(make_function(target.program, target.function, target.filename, classes),
                                              case, target.backend, target.kiim, hooks.counting)
            per_call: list[int] = []
            with hooks.around_pass(p):
                outcome.mismatches += _run_pass(
                    case, target, hooks, eager_fn=eager_fn, compiled=hooks.compiled(compiled), counter=counter,
                    points=points, warm_prefix="warm rerun, " if p else "", envs=(Env(classes), Env(classes)),
                    per_call=per_call)
            outcome.calls += len(points)
            outcome.compile_counts[f"{pass_name}_graphs"] = counter.count
            if p == 0:
                outcome.recompiles = recompile_note(case, target, per_call)
                outcome.compile_counts["cold_first_call"] = per_call[0] if per_call else 0
            hooks.pass_done(p, counter)
            miscount = compile_count_mismatch(case, target, pass_name, len(points), counter.count)
            if miscount is not None:
                outcome.mismatches.append(miscount)
    return outcome


def _actions(target: Target, hooks: Hooks, point: CallPoint, which: str, *, sides: list[tuple[Side, Env]],
             prefix: str) -> list[Mismatch]:
    """The call's `before`/`after` block on each side: eager raising breaks the case; compiled
    raising alone is a mismatch (e.g. an output that should alias an input and does not)."""
    source = getattr(point, which)
    if source is None:
        return []
    filename = f"<{point.where}.{which} of {target.filename.removeprefix('<program of ').rstrip('>')}>"
    raised = []
    for side, env in sides:
        if side.exc is None:
            out = side.result if which == "after" else env.out
            raised.append(act(side.inputs, source, filename, env=env, out=out,
                              is_program_exception=hooks.program_exception))
        else:
            raised.append(None)
    if raised[0] is not None:
        raise CaseBroken(f"{prefix}{point.where}.{which}: eager raised {raised[0]}; fix the case")
    if len(raised) > 1 and raised[1] is not None:
        return [Mismatch("exception", f"{point.where}.{which}", "no exception", raised[1])]
    return []


def _run_pass(case: Spec, target: Target, hooks: Hooks, *, eager_fn: Callable[..., Any], compiled: Callable[..., Any],
              counter: CountingBackend, points: list[CallPoint], warm_prefix: str, envs: tuple[Env, Env],
              per_call: list[int]) -> list[Mismatch]:
    """Each call: both sides' inputs (fresh, or persisted), the `before` actions, eager then
    compiled, the backward (training), the `after` actions, then everything compared."""
    training = target.mode == "training"
    e_env, c_env = envs
    found: list[Mismatch] = []
    for i, point in enumerate(points):
        prefix = warm_prefix + (f"{point.label}: " if len(points) > 1 else "")
        with hooks.timed("build_inputs"):
            e_in = build_inputs(case, target.device, target.mode, point, e_env)
            c_in = build_inputs(case, target.device, target.mode, point, c_env)
        pending: list[Mismatch] = []
        e_pre, c_pre = Side(e_in, {}), Side(c_in, {})
        pending += _actions(target, hooks, point, "before", sides=[(e_pre, e_env), (c_pre, c_env)], prefix=prefix)
        with hooks.timed("eager"):
            eager = call(eager_fn, e_in, case, hooks.program_exception)
        # a broken case is broken whatever compiled does; do not run it (it might hang or allocate again)
        eager_must_not_raise(eager, case, prefix)
        if target.backend != AOT_FUNCTION:
            mark_dynamic(c_in)
        before = counter.count
        comp = _compiled_call(case, hooks, compiled, counter, c_in, first=i == 0 and not warm_prefix)
        per_call.append(counter.count - before)
        if training:
            with hooks.timed("eager"):
                _each([eager], lambda side: backward(side, case, hooks.program_exception))
            with hooks.timed("compiled_calls"):
                _each([comp], lambda side: backward(side, case, hooks.program_exception))
        pending += _actions(target, hooks, point, "after", sides=[(eager, e_env), (comp, c_env)], prefix=prefix)
        with hooks.timed("oracles"):
            _each([eager, comp], snapshot)
            if case["expect"]["write_through"]:
                _each([eager, comp], write_through)
            found += [m.at(prefix) for m in pending] + compare_call(eager, comp, case, prefix, training)
            if case["expect"]["write_through"]:
                _each([eager, comp], undo_write_through)
        e_env.out, c_env.out = eager.result, comp.result
    return found


def _each(sides: list[Side], step: Callable[[Side], None]) -> None:
    """`step` on every side whose call returned (a side that raised has nothing to snapshot)."""
    for side in sides:
        if side.exc is None:
            step(side)


def _compiled_call(case: Spec, hooks: Hooks, compiled: Callable[..., Any], counter: CountingBackend,
                   inputs: BuiltInputs, *, first: bool) -> Side:
    before = counter.count
    hooks.calling(counter, inputs)
    start = time.perf_counter()
    try:
        comp = call(compiled, inputs, case, hooks.program_exception)
    finally:
        hooks.calling(counter, None)
    # a call during which the backend compiled counts as compile time
    hooks.spent("compile" if counter.count > before or first else "compiled_calls", time.perf_counter() - start)
    return comp


# -------------------- the case
CASE = {'version': 2,
 'id': None,
 'behavior': 'backward_unwrap',
 'summary': 'With dynamic=True, a TwoTensor scaled by the symbolic sizes of two plain inputs (sizes saved '
            "for backward) gives eager's values and gradients, for two shapes from one compile.",
 'upstream': ['https://github.com/pytorch/pytorch/pull/178927'],
 'devices': None,
 'backends': ['aot_eager', 'inductor'],
 'compile': {'dynamic': True,
             'fullgraph': True,
             'mode': None,
             'options': {},
             'keep_inference_input_mutations': [False]},
 'config': {},
 'seed': 0,
 'classes': None,
 'inputs': {'t': {'tensor': None,
                  'view': None,
                  'two_tensor': {'a': {'tensor': {'shape': [3, 4],
                                                  'values': None,
                                                  'dtype': 'float32',
                                                  'requires_grad': False,
                                                  'leaf': True,
                                                  'layout': 'contiguous',
                                                  'stride': None,
                                                  'storage_offset': None,
                                                  'init': None,
                                                  'device': None,
                                                  'dynamic_dims': []},
                                       'two_tensor': None,
                                       'subclass': None},
                                 'b': {'tensor': {'shape': [3, 4],
                                                  'values': None,
                                                  'dtype': 'float32',
                                                  'requires_grad': False,
                                                  'leaf': True,
                                                  'layout': 'contiguous',
                                                  'stride': None,
                                                  'storage_offset': None,
                                                  'init': None,
                                                  'device': None,
                                                  'dynamic_dims': []},
                                       'two_tensor': None,
                                       'subclass': None},
                                 'requires_grad': True},
                  'subclass': None,
                  'scalar': None,
                  'module': None,
                  'optimizer': None,
                  'hidden': False,
                  'persist': None},
            'p': {'tensor': {'shape': [5, 6],
                             'values': None,
                             'dtype': 'float32',
                             'requires_grad': True,
                             'leaf': True,
                             'layout': 'contiguous',
                             'stride': None,
                             'storage_offset': None,
                             'init': None,
                             'device': None,
                             'dynamic_dims': []},
                  'view': None,
                  'two_tensor': None,
                  'subclass': None,
                  'scalar': None,
                  'module': None,
                  'optimizer': None,
                  'hidden': False,
                  'persist': None},
            'q': {'tensor': {'shape': [7, 8],
                             'values': None,
                             'dtype': 'float32',
                             'requires_grad': False,
                             'leaf': True,
                             'layout': 'contiguous',
                             'stride': None,
                             'storage_offset': None,
                             'init': None,
                             'device': None,
                             'dynamic_dims': []},
                  'view': None,
                  'two_tensor': None,
                  'subclass': None,
                  'scalar': None,
                  'module': None,
                  'optimizer': None,
                  'hidden': False,
                  'persist': None}},
 'program': 'def f(t, p, q):\n    r, c = p.size()\n    m, n = q.size()\n    return t * r * c * m * n\n',
 'calls': [{'before': None,
            'after': None,
            'p': {'tensor': {'shape': [9, 10],
                             'values': None,
                             'dtype': 'float32',
                             'requires_grad': True,
                             'leaf': True,
                             'layout': 'contiguous',
                             'stride': None,
                             'storage_offset': None,
                             'init': None,
                             'device': None,
                             'dynamic_dims': []},
                  'view': None,
                  'two_tensor': None,
                  'subclass': None,
                  'scalar': None,
                  'module': None,
                  'optimizer': None,
                  'hidden': False,
                  'persist': None},
            'q': {'tensor': {'shape': [11, 12],
                             'values': None,
                             'dtype': 'float32',
                             'requires_grad': False,
                             'leaf': True,
                             'layout': 'contiguous',
                             'stride': None,
                             'storage_offset': None,
                             'init': None,
                             'device': None,
                             'dynamic_dims': []},
                  'view': None,
                  'two_tensor': None,
                  'subclass': None,
                  'scalar': None,
                  'module': None,
                  'optimizer': None,
                  'hidden': False,
                  'persist': None}}],
 'modes': ['inference', 'training'],
 'grad_enabled': True,
 'expect': {'rtol': None,
            'atol': None,
            'strides': True,
            'version': 'moved',
            'write_through': True,
            'compiles': 1,
            'warm_rerun': False,
            'raises': None},
 'known_failures': []}
TARGET = Target(
    program=r'''








def f(t, p, q):
    r, c = p.size()
    m, n = q.size()
    return t * r * c * m * n
''',
    function='f',
    filename='<program of cases/backward_unwrap/upstream/twotensor_times_plain_sizes_dynamic.yaml>',
    device='cpu', backend='aot_eager', mode='training', kiim=False,
    classes=None,
    classes_filename='<classes of cases/backward_unwrap/upstream/twotensor_times_plain_sizes_dynamic.yaml>',
)
RECORDED = ['call 1: out[0]: stride is (3, 1), but eager gives (4, 1)',
 'call 2 (p: tensor[9, 10], q: tensor[11, 12]): out[0]: stride is (3, 1), but eager gives (4, 1)']


def main() -> int:
    import sys

    kind = TARGET.device.partition(":")[0]
    module = getattr(torch, kind, None)
    if kind != "cpu" and not (module is not None and getattr(module, "is_available", lambda: False)()):
        print(f"device {TARGET.device} is not available here; run this script where it is", file=sys.stderr)
        return REPRO_CANNOT_TELL
    print(f"torch {torch.__version__} (git {getattr(torch.version, 'git_version', '?')}), device {TARGET.device}, "
          f"backend {TARGET.backend}{'-kiim' if TARGET.kiim else ''}, mode {TARGET.mode}")
    try:
        outcome = run_passes(CASE, TARGET)
    except CaseBroken as exc:
        print(f"CASE ERROR (eager itself fails, so the case is wrong, not the build): {exc}")
        return REPRO_CANNOT_TELL
    print("the harness recorded:")
    for line in RECORDED:
        print(f"  {line}")
    if not outcome.mismatches:
        print("MATCHES: compiled behaves like eager on every check (the failure does not reproduce here)")
        return REPRO_MATCHES
    print(f"MISMATCH: {len(outcome.mismatches)} difference(s) from eager:")
    for m in outcome.mismatches:
        print(f"  {m.message()}")
    return REPRO_DIFFERS


if __name__ == "__main__":
    raise SystemExit(main())
