"""Input builders: seeded, deterministic, and fresh for each side of the comparison.

Eager and compiled each get their own `build_inputs` call with the same seed, so values, geometry (size/stride/offset,
storage sizes) and aliasing between inputs are identical while no tensor is shared between the two sides. Values are
drawn from one generator on the CPU, in declaration order, and moved to the device.

Note [Persisted inputs]
An input that says `persist: true` (and every optimizer) is built at the first call of a pass and the same object is
passed to every later call of that pass, on each side its own: a model trained over steps, an optimizer whose state
lives across them. Each side keeps them in its `Env`, with the case's classes (one namespace per variant, shared by
both sides: the types are the same, the instances are not) and the previous call's return value for its actions.
"""

from __future__ import annotations

import importlib
import itertools
import linecache
import math
import operator
import re
import sys
import traceback
import types
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch

from conformance.core.mismatch import CaseBroken, FeatureUnavailable, exception_summary
from conformance.core.spec import (
    CALL_ACTIONS,
    CallRaisesData,
    CaseData,
    InnerData,
    InputData,
    InputKind,
    ModuleData,
    OptimizerData,
    ScalarData,
    ScalarValue,
    SubclassData,
    TensorData,
    TwoTensorData,
    input_kind,
    replaced_inputs,
)

LAYOUT_OFFSET = 3


@dataclass
class Env:
    """What one side keeps across the calls of a pass (Note [Persisted inputs])."""

    classes: dict[str, Any] = field(default_factory=dict)
    persisted: dict[str, tuple[Any, dict[str, torch.Tensor], tuple[int, ...]]] = field(default_factory=dict)
    out: Any = None


_LOADS = itertools.count()  # load_classes: a module name is never reused


def load_classes(source: str | None, filename: str) -> dict[str, Any]:
    """Run a case's classes block as a module of its own (registered, so that its classes have a home module:
    pickling, dynamo's guards and tracebacks find them) and return its names. Its name is never reused: a frame
    compiled after a reset built a class of an earlier load's module of the same name (measured)."""
    if not source:
        return {}
    name = "torch_conformance_classes." + re.sub(r"\W", "_", filename.strip("<>")) + f"_{next(_LOADS)}"
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
    lines = [n for frame, n in traceback.walk_tb(exc.__traceback__) if frame.f_code.co_filename == filename]
    return f" at {filename.strip('<>')}:{lines[-1]}" if lines else ""


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
        from torch.testing._internal.two_tensor import TwoTensor  # guarded: a build without it
    except ImportError as exc:
        raise FeatureUnavailable(
            f"TwoTensor is not importable from this build (torch.testing._internal.two_tensor: {exc})"
        ) from None
    return TwoTensor


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    inner = itertools.accumulate((max(size, 1) for size in reversed(shape[1:])), operator.mul, initial=1)
    return tuple(reversed(list(inner))) if shape else ()


def geometry(spec: TensorData) -> tuple[tuple[int, ...], int]:
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


# Note [Inputs as code]
# Inputs are built by running Python statements that the builder writes (`input_code`), in a
# namespace of their own: the generator, the two helpers below, the case's classes and the inputs
# built so far. A reproducer prints the same statements, so what it builds is what the harness
# built, drawn by the same calls in the same order, and no second copy of the drawing exists.


def place(values: torch.Tensor, stride: tuple[int, ...], offset: Any, numel: int, device: str) -> torch.Tensor:
    """`values` with that exact geometry, in a zeroed storage of `numel` elements of its own."""
    with torch.no_grad():
        out = torch.empty(0, dtype=values.dtype, device=device).set_(
            torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        return out.copy_(values.to(device))


def non_leaf(leaf: torch.Tensor) -> torch.Tensor:
    """`leaf`'s geometry and values made from it by an op, in a storage of its own: upstream's `leaf.clone()`
    where that keeps the geometry (a dense leaf filling its storage), else a copy."""
    t, nbytes = torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes()
    with torch.enable_grad():
        made = leaf.clone()  # cheap next to a compile; its layout says whether it will do
    if made.stride() == leaf.stride() and leaf.storage_offset() == 0 and made.untyped_storage().nbytes() == nbytes:
        return made
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(),
               leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)


HELPERS = {"place": place, "non_leaf": non_leaf}
TWO_TENSOR_IMPORT = "from torch.testing._internal.two_tensor import TwoTensor"
NOT_IMPORTED = ("torch", "torch.nn", "torch.optim", "torch.nn.modules")  # what `import torch` brings


def value_literal(value: Any) -> str:
    """Python source for a value from a case file (numbers, strings, lists), NaN and infinities too."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, list | tuple):
        inner = ", ".join(value_literal(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{value_literal(k)}: {value_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _flat(values: Any) -> list[Any]:
    return [x for v in values for x in _flat(v)] if isinstance(values, list | tuple) else [values]


def _nested(flat: list[Any], shape: tuple[int, ...]) -> Any:
    if not shape:
        return flat[0]
    step = math.prod(shape[1:])
    return [_nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def draw_expr(spec: TensorData, gen: str) -> str:  # noqa: PLR0911  # one return per init kind
    """The expression that draws a tensor spec's values (on the CPU, from the generator `gen`)."""
    shape = tuple(spec["shape"])
    dtype = f"torch.{spec['dtype']}"
    if spec["values"] is not None:  # nested to the shape here: a reshape would make a view
        return f"torch.tensor({value_literal(_nested(_flat(spec['values']), shape))}, dtype={dtype})"
    floating = getattr(torch, spec["dtype"]).is_floating_point or getattr(torch, spec["dtype"]).is_complex
    init = spec["init"] or ("randn" if floating else ("randint" if spec["dtype"] != "bool" else "rand"))
    if init in ("ones", "zeros"):
        return f"torch.{init}({shape}, dtype={dtype})"
    if init == "arange":
        return f"torch.arange({math.prod(shape)}, dtype=torch.float64).reshape({shape}).to({dtype})"
    if init == "randint":
        return f"torch.randint(0, 10, {shape}, generator={gen}, dtype=torch.int64).to({dtype})"
    if spec["dtype"] == "bool":
        return f"(torch.rand({shape}, generator={gen}) > 0.5)"
    draw = dtype if spec["dtype"] in ("float32", "float64", "complex64") else "torch.float32"
    cast = "" if draw == dtype else f".to({dtype})"
    if init == "randn":
        return f"torch.randn({shape}, generator={gen}, dtype={draw}){cast}"
    plus = " + 0.5" if init == "positive" else ""
    return f"(torch.rand({shape}, generator={gen}, dtype={draw}){plus}){cast}"


@dataclass
class InputCode:
    """The statements that build one side's inputs for one call (Note [Inputs as code])."""

    gen: str
    lines: list[str] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    starts: dict[str, int] = field(default_factory=dict)  # the first line of each input's statements
    kinds: dict[str, InputKind] = field(default_factory=dict)

    def need(self, helper: str) -> str:
        if helper in HELPERS and helper not in self.helpers:
            self.helpers.append(helper)
        return helper

    def imported(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)


def class_expr(ref: str, classes: dict[str, Any], base: type, what: str, code: InputCode) -> str:
    """The expression naming the class a case names (checked by resolve_class): the reference as
    written, its module imported unless `import torch` brings it."""
    resolve_class(ref, classes, base, what)
    parts = ref.split(".")
    if parts[0] not in classes:
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            try:
                importlib.import_module(module)
            except ImportError:
                continue
            if module not in NOT_IMPORTED:
                code.imported(f"import {module}")
            break
    return ref


def _dense_expr(spec: TensorData, device: str, code: InputCode) -> str:
    stride, offset = geometry(spec)
    shape = tuple(spec["shape"])
    where = spec["device"] or device
    # arange's reshape is a view, and stays one where `.to` has nothing to convert (float64)
    fresh = spec["init"] != "arange" or spec["values"] is not None or spec["dtype"] != "float64"
    if fresh and stride == contiguous_strides(shape) and offset == 0:
        return draw_expr(spec, code.gen) + (f".to({where!r})" if where != "cpu" else "")
    return (f"{code.need('place')}({draw_expr(spec, code.gen)}, {stride}, {offset}, "
            f"{storage_numel(shape, stride, offset)}, {where!r})")


def _inner_expr(spec: InnerData, device: str, classes: dict[str, Any], code: InputCode) -> str:
    if spec["tensor"] is not None:
        return _dense_expr(spec["tensor"], device, code)
    if spec["two_tensor"] is not None:
        return _two_tensor_expr(spec["two_tensor"], device, classes, code, requires_grad=False)
    assert spec["subclass"] is not None  # exactly one of the three (the schema's InnerSpec)
    return _subclass_expr(spec["subclass"], device, classes, code, requires_grad=False)


def _two_tensor_expr(spec: TwoTensorData, device: str, classes: dict[str, Any], code: InputCode, *,
                     requires_grad: bool) -> str:
    two_tensor_type()  # FeatureUnavailable on a build without it
    code.imported(TWO_TENSOR_IMPORT)
    a, b = (_inner_expr(spec[k], device, classes, code) for k in ("a", "b"))
    return f"TwoTensor({a}, {b})" + (".requires_grad_()" if requires_grad else "")


def _subclass_expr(spec: SubclassData, device: str, classes: dict[str, Any], code: InputCode, *,
                   requires_grad: bool) -> str:
    cls = class_expr(spec["class"], classes, torch.Tensor, "subclass", code)
    args = [_inner_expr(a, device, classes, code) for a in spec["args"]]
    args += [f"{k}={value_literal(v)}" for k, v in spec["kwargs"].items()]
    return f"{cls}({', '.join(args)})" + (".requires_grad_()" if requires_grad else "")


def _module_lines(name: str, spec: ModuleData, device: str, *, training: bool, classes: dict[str, Any],
                  code: InputCode) -> list[str]:
    if spec["class"] is None:
        lines = [f"{name} = torch.nn.Module()"]
        for pname, pspec in spec["parameters"].items():
            data = _inner_expr(pspec, device, classes, code)
            grad = training and pspec["requires_grad"]
            lines.append(f"{name}.register_parameter({pname!r}, torch.nn.Parameter({data}, requires_grad={grad}))")
        lines += [f"{name}.register_buffer({bname!r}, {_inner_expr(bspec, device, classes, code)})"
                  for bname, bspec in spec["buffers"].items()]
        return lines
    # an instance initialised from a seed drawn from the case's generator: eager and compiled get
    # equal, independent modules; inference freezes every parameter
    cls = class_expr(spec["class"], classes, torch.nn.Module, "module", code)
    args = [value_literal(a) for a in spec["args"]] + [f"{k}={value_literal(v)}" for k, v in spec["kwargs"].items()]
    to = f"device={device!r}" + (f", dtype=torch.{spec['dtype']}" if spec["dtype"] else "")
    return [
        "with torch.random.fork_rng(devices=[]):",
        f"    torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator={code.gen})))",
        f"    {name} = {cls}({', '.join(args)}).to({to}).train({spec['train']})"  # each returns the module
        + ("" if training else ".requires_grad_(False)"),
    ]


def _optimizer_line(name: str, spec: OptimizerData, classes: dict[str, Any], code: InputCode) -> str:
    cls = class_expr(spec["class"], classes, torch.optim.Optimizer, "optimizer", code)
    head, _, path = spec["params"].partition(".")
    params = f"{head}.get_submodule({path!r}).parameters()" if path else f"{head}.parameters()"
    kwargs = "".join(f", {k}={value_literal(v)}" for k, v in spec["kwargs"].items())
    return f"{name} = {cls}({params}{kwargs})"


def leaf_var(name: str, taken: Collection[str]) -> str:
    """The variable holding a non-leaf input's leaf (its grad leaf, `<name>.leaf` in records)."""
    var = f"{name}_leaf"
    while var in taken:
        var += "_"
    return var


def input_code(case: CaseData, device: str, mode: str, point: CallPoint | None = None, *,
               persisted: Collection[str] = (), classes: dict[str, Any] | None = None) -> InputCode:
    """The statements that build one side's inputs for the call `point` (every input but the
    persisted ones, which the namespace holds), checking every class a spec names."""
    training = mode == "training"
    classes = classes or {}
    scalars = point.scalars if point is not None else {}
    overrides = point.overrides if point is not None else {}
    names = set(case["inputs"])
    gen = next(g for g in ("g", "gen", "generator", "_g") if g not in names and g not in classes)
    code = InputCode(gen=gen, lines=[f"{gen} = torch.Generator().manual_seed({case['seed']})"])
    for name, declared in case["inputs"].items():
        if name in persisted and name not in overrides:
            continue
        spec = overrides.get(name, declared)
        code.starts[name] = len(code.lines)
        code.kinds[name] = input_kind(spec)
        if spec["scalar"] is not None:
            first = sweep(spec["scalar"])[0]
            code.lines.append(f"{name} = {value_literal(first if name in overrides else scalars.get(name, first))}")
        elif spec["module"] is not None:
            code.lines += _module_lines(name, spec["module"], device, training=training, classes=classes, code=code)
        elif spec["optimizer"] is not None:
            code.lines.append(_optimizer_line(name, spec["optimizer"], classes, code))
        elif (tspec := spec["tensor"]) is not None:
            dense_ = _dense_expr(tspec, device, code)
            if training and tspec["requires_grad"] and not tspec["leaf"]:
                var = leaf_var(name, names)
                code.lines += [f"{var} = {dense_}.requires_grad_()", f"{name} = {code.need('non_leaf')}({var})"]
            else:
                code.lines.append(f"{name} = {dense_}" + (".requires_grad_()" if training and tspec["requires_grad"]
                                                          else ""))
        elif spec["two_tensor"] is not None:
            rg = training and spec["two_tensor"]["requires_grad"]
            two = _two_tensor_expr(spec["two_tensor"], device, classes, code, requires_grad=rg)
            code.lines.append(f"{name} = {two}")
        elif spec["subclass"] is not None:
            rg = training and spec["subclass"]["requires_grad"]
            code.lines.append(f"{name} = {_subclass_expr(spec['subclass'], device, classes, code, requires_grad=rg)}")
        else:
            code.lines.append(f"{name} = {spec['view']}")
    return code


def tensor_entries(named: dict[str, Any]) -> list[tuple[str, str, torch.Tensor]]:
    """(name, expression, tensor) for every tensor among the inputs: a module's parameters and
    buffers named `name.param`, an optimizer's state `opt.state[net.weight].exp_avg` and its tensor
    hyperparameters `opt.param_groups[0].lr`; the expression reaches it from the inputs' names."""
    out: list[tuple[str, str, torch.Tensor]] = []
    owner: dict[int, tuple[str, str]] = {}
    for name, value in named.items():
        if isinstance(value, torch.Tensor):
            out.append((name, name, value))
        elif isinstance(value, torch.nn.Module):
            for kind, items in (("parameter", value.named_parameters()), ("buffer", value.named_buffers())):
                for pname, t in items:
                    entry = (f"{name}.{pname}", f"{name}.get_{kind}({pname!r})", t)
                    out.append(entry)
                    owner.setdefault(id(t), entry[:2])
    for name, value in named.items():
        if isinstance(value, torch.optim.Optimizer):
            k = 0
            for i, group in enumerate(value.param_groups):
                out += [(f"{name}.param_groups[{i}].{key}", f"{name}.param_groups[{i}][{key!r}]", v)
                        for key, v in group.items() if isinstance(v, torch.Tensor) and key != "params"]
                for j, p in enumerate(group["params"]):
                    label, expr = owner.get(id(p), (f"params[{k}]", f"{name}.param_groups[{i}]['params'][{j}]"))
                    out += [(f"{name}.state[{label}].{key}", f"{name}.state[{expr}][{key!r}]", v)
                            for key, v in value.state.get(p, {}).items() if isinstance(v, torch.Tensor)]
                    k += 1
    return out


def tensors_of(named: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Every tensor among the inputs, by name (see tensor_entries)."""
    return {name: t for name, _expr, t in tensor_entries(named)}


@dataclass
class BuiltInputs:
    """One side's inputs: `named` holds every input, hidden ones too; `args` (the `passed` ones, in order) go to it."""

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

    scalars: dict[str, ScalarValue]
    overrides: dict[str, InputData]
    label: str
    before: str | None = None
    after: str | None = None
    where: str = ""  # the actions' place in the case file, e.g. calls[0]
    raises: CallRaisesData | None = None  # what this call (or, `at: after`, its after action) must raise
    fresh: bool | Literal["keep_cache", "new_backend"] = False  # the compiled side compiles anew before this call;
    compiles: int | None = None  # and the graphs the backend compiles during this call (calls[N].compiles)
    function: str | None = None  # from this call on, this classes-block function in place of the program


def sweep(scalar: ScalarData) -> tuple[ScalarValue, ...]:
    if scalar["values"] is None:
        assert scalar["value"] is not None  # one of value, values (the schema's ScalarSpec)
        items = [scalar["value"]]
    else:
        items = list(scalar["values"])
    return tuple(float(v) for v in items) if scalar["type"] == "float" else tuple(items)


def build_inputs(case: CaseData, device: str, mode: str, point: CallPoint | None = None,
                 env: Env | None = None) -> BuiltInputs:
    """One side's inputs for `case` on `device`, built by running `input_code` (Note [Inputs as
    code]). In inference mode no input requires grad (so AOTAutograd takes its inference path);
    in training mode inputs are built as declared. Persisted inputs come from `env` after the
    first call (Note [Persisted inputs])."""
    training = mode == "training"
    env = env if env is not None else Env()
    overrides = point.overrides if point is not None else {}
    code = input_code(case, device, mode, point, persisted=env.persisted, classes=env.classes)
    scope: dict[str, Any] = {"torch": torch, **HELPERS, **env.classes,
                             **{n: v[0] for n, v in env.persisted.items() if n not in overrides}}
    if code.imports:
        exec("\n".join(code.imports), scope)
    starts = sorted((line, name) for name, line in code.starts.items())
    exec(code.lines[0], scope)  # the generator
    with torch.enable_grad():
        for k, (line, name) in enumerate(starts):
            stop = starts[k + 1][0] if k + 1 < len(starts) else len(code.lines)
            _run_input(name, code.kinds[name], "\n".join(code.lines[line:stop]), scope)
    named: dict[str, Any] = {}
    leaves: dict[str, torch.Tensor] = {}
    dynamic: dict[str, tuple[int, ...]] = {}
    for name, declared in case["inputs"].items():
        spec = overrides.get(name, declared)
        if name in env.persisted and name not in overrides:
            value, brought, dims = env.persisted[name]
        else:
            value = scope[name]
            brought = _leaves_of(name, spec, value, scope, training=training, names=set(case["inputs"]))
            dims = tuple(spec["tensor"]["dynamic_dims"]) if spec["tensor"] is not None else ()
            if spec["persist"] or spec["optimizer"] is not None:
                env.persisted[name] = (value, brought, dims)
        named[name] = value
        leaves.update(brought)
        if dims:
            dynamic[name] = dims
    passed = [name for name, spec in case["inputs"].items() if not spec["hidden"]]
    return BuiltInputs(passed=passed, named=named, grad_leaves=leaves, dynamic_dims=dynamic)


def _run_input(name: str, kind: InputKind, source: str, scope: dict[str, Any]) -> None:
    """One input's statements; a class that cannot be built breaks the case (a view's own error
    is the program's business, as it was the case author's expression)."""
    if kind in ("view", "scalar", "tensor"):
        exec(source, scope)
        return
    try:
        exec(source, scope)
    except Exception as exc:
        what = {"two_tensor": "TwoTensor", "optimizer": "the optimizer", "module": "the module",
                "subclass": "the subclass"}[kind]
        raise CaseBroken(f"building {what} of input {name!r} raised {exception_summary(exc)}") from None
    value = scope.get(name)
    if kind in ("subclass", "two_tensor") and not isinstance(value, torch.Tensor):
        raise CaseBroken(f"input {name!r}: its class made a {type(value).__name__}, not a tensor")


def _leaves_of(name: str, spec: InputData, value: Any, scope: dict[str, Any], *, training: bool,
               names: set[str]) -> dict[str, torch.Tensor]:
    """The grad leaves an input brings, by name. A view expression that makes a leaf requiring grad
    (a TwoTensor over leaves, `x.detach().requires_grad_()`) brings it in either mode: its gradient
    is the program's business wherever a backward reaches it (the harness's, or a caller's)."""
    if spec["view"] is not None:
        return {name: value} if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad else {}
    if isinstance(value, torch.nn.Module):
        return {f"{name}.{p}": t for p, t in value.named_parameters() if t.requires_grad}
    if not training or (spec["tensor"] is None and spec["two_tensor"] is None and spec["subclass"] is None):
        return {}
    if spec["tensor"] is not None:
        if not spec["tensor"]["requires_grad"]:
            return {}
        return {name: value} if spec["tensor"]["leaf"] else {f"{name}.leaf": scope[leaf_var(name, names)]}
    outer = spec["two_tensor"] or spec["subclass"]
    return {name: value} if outer is not None and outer["requires_grad"] else {}


_FRESH = {True: "compiled afresh", "keep_cache": "compiled anew, dynamo's cache kept",
          "new_backend": "compiled anew, a new backend, dynamo's cache kept"}


def call_points(case: CaseData) -> list[CallPoint]:
    """The calls of one pass: every value of the sweep (scalars zipped), then each `calls` entry."""
    swept = {name: s["scalar"]["values"] for name, s in case["inputs"].items()
             if s["scalar"] is not None and s["scalar"]["values"] is not None}
    n = len(next(iter(swept.values()))) if swept else 1
    points: list[CallPoint] = []
    for i in range(n):
        scalars = {name: sweep(s["scalar"])[i if name in swept else 0]
                   for name, s in case["inputs"].items() if s["scalar"] is not None}
        label = ", ".join(f"{k}={scalars[k]!r}" for k in swept)
        points.append(CallPoint(scalars, {}, f"call {i + 1} ({label})" if n > 1 else "call 1"))
    first = case.get("first_call")
    if first:
        what = [f"{a}: {_first_line(source)}" for a in CALL_ACTIONS if (source := first.get(a))]
        points[0] = replace(points[0], label=f"{points[0].label} ({', '.join(what)})" if what else points[0].label,
                            before=first.get("before"), after=first.get("after"), where="first_call",
                            raises=first.get("raises"), compiles=first.get("compiles"))
    for j, entry in enumerate(case["calls"]):
        overrides = replaced_inputs(entry)
        what = [f"{k}: {describe_input(spec)}" for k, spec in overrides.items()]
        what += [f"{a}: {_first_line(source)}" for a in CALL_ACTIONS if (source := entry.get(a))]
        raises = entry.get("raises")
        what += [f"raises {raises['type']}" + (" after" if raises.get("at") == "after" else "")] if raises else []
        what += [f"calls {entry['function']}"] * bool(entry.get("function"))
        what += [_FRESH[entry["fresh"]]] if entry.get("fresh") else []
        label = f"call {n + j + 1}" + (f" ({', '.join(what)})" if what else "")
        points.append(CallPoint(dict(points[0].scalars), overrides, label, entry.get("before"), entry.get("after"),
                                f"calls[{j}]", entry.get("raises"), entry.get("fresh") or False, entry.get("compiles"),
                                entry.get("function")))
    return points


def _first_line(source: str) -> str:
    lines = [line.strip() for line in source.strip().splitlines()]
    return lines[0][:40] + (" ..." if len(lines) > 1 or len(lines[0]) > 40 else "")


def describe_input(spec: InputData) -> str:
    tensor, scalar, view, subclass = spec["tensor"], spec["scalar"], spec["view"], spec["subclass"]
    shown = (f"tensor{list(tensor['shape'])}" if tensor is not None else repr(sweep(scalar)[0]) if scalar is not None
             else view if view is not None else str(subclass["class"]) if subclass is not None else None)
    return shown or next(k for k in ("two_tensor", "module", "optimizer") if spec[k] is not None)
