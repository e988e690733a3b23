#!/usr/bin/env python3
"""torch_compile_error_the_item_the_7534bb [cpu-none-inference]: error on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (torch.compile | error | the item | the item could not run | RuntimeError: Inference tensors do not track version counter.): compiled differs from eager.

  harness error: RuntimeError: Inference tensors do not track version counter.

Case file: /work/runs/control-2.15/shards/1/findings/torch_compile_error_the_item_the_7534bb.yaml (sha256 f8e19c02850db025); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v595-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
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


def counts_graphs(backend: str) -> bool:
    """Whether the backend goes through dynamo, whose graphs a compile count counts (aot_function
    and `none` compile no dynamo graph: a count says nothing about them)."""
    return not backend.startswith(AOT_FUNCTION) and backend != NONE


def is_aot_function(label: str) -> bool:
    """aot_function, with or without keep_inference_input_mutations (a record's backend label)."""
    return label in (AOT_FUNCTION, KIIM_LABEL)


def in_user_words(label: str) -> str:
    """A record's backend label as a user wrote the call (`kiim` is our abbreviation)."""
    return f"{AOT_FUNCTION}, keep_inference_input_mutations=True" if label == KIIM_LABEL else label


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


WRITE_THROUGH = "after writing through the outputs"


@dataclass(frozen=True)
class Mismatch:
    """One difference, located structurally: `path` names what differs (`out[0]`, `input x`,
    `grad of w`, `outputs`, `call`, `backward`, `after the call`, `calls[1].after`, `cold pass over
    3 call(s)`), `phase` when it was seen (empty, or `WRITE_THROUGH`), `call` which call of the
    pass (1-based; None where the pass has one call or the check speaks of the whole pass) with
    `call_label` its words, `warm` whether in the warm rerun; `role`, `subject` and `inner` name
    the tensor a check read. `where` renders them as one phrase; nothing parses it back."""

    check: str
    path: str
    expected: str
    actual: str
    detail: str = ""
    source: str = "eager"
    phase: str = ""
    call: int | None = None
    call_label: str = ""
    warm: bool = False
    role: str = ""  # what `subject` is: output, input, grad (of an input), or empty (the call, the outputs...)
    subject: str = ""  # out[0]; an input tensor as tensors_of names it (x, net.fc1.weight); a grad leaf (x.leaf)
    inner: tuple[str, ...] = ()  # inner tensors of a subclass, outermost first

    @property
    def where(self) -> str:
        return (("warm rerun, " if self.warm else "") + (f"{self.call_label}: " if self.call_label else "")
                + (f"{self.phase}: " if self.phase else "") + self.path)

    def message(self) -> str:
        return sentence(self.check, self.where, self.expected, self.actual, detail=self.detail, source=self.source)

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "where": self.where}

    def located(self, *, call: int | None, call_label: str, warm: bool) -> Mismatch:
        """The same mismatch placed in its call and pass."""
        return dataclasses.replace(self, call=call, call_label=call_label, warm=warm)

    def seen(self, phase: str) -> Mismatch:
        return dataclasses.replace(self, phase=phase)


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


# -------------------- conformance/core/checks.py
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch


Compare = Literal["equal", "close", "moved", "special"]
# (actual, expected, tolerance) -> None where compiled agrees with eager, else a detail ("" for none)
Judge = Callable[[Any, Any, Tolerance], str | None]
EXACT = Tolerance()


def equal(actual: Any, expected: Any, tol: Tolerance) -> str | None:
    return None if actual == expected else ""


def moved(actual: int, expected: int, tol: Tolerance) -> str | None:
    """Both changed or neither: how far is `_version delta`'s question (extra bumps are allowed)."""
    return None if (actual > 0) == (expected > 0) else ""


def close(actual: torch.Tensor, expected: torch.Tensor, tol: Tolerance) -> str | None:
    """assert_close within the case's tolerance (both or neither given; torch's defaults for the
    dtype otherwise), NaN equal to NaN, on the CPU; the detail is assert_close's own words."""
    rtol, atol = tol.rtol, tol.atol
    if (rtol is None) != (atol is None):  # assert_close takes both or neither
        rtol, atol = rtol or 0.0, atol or 0.0
    try:
        torch.testing.assert_close(actual.cpu(), expected.cpu(), rtol=rtol, atol=atol, equal_nan=True,
                                   check_device=False, check_stride=False)
    except AssertionError as exc:
        return "; ".join([ln.strip() for ln in str(exc).splitlines() if ln.strip()][:4])
    return None


def close_number(actual: Any, expected: Any, tol: Tolerance) -> str | None:
    """A Python float within the tolerance (float32's defaults when none is given), NaN equal to NaN;
    any other value exactly."""
    if not (isinstance(actual, float) and isinstance(expected, float)):
        return equal(actual, expected, tol)
    rtol = tol.rtol if tol.rtol is not None else 1.3e-6
    atol = tol.atol if tol.atol is not None else 1e-5
    agree = abs(actual - expected) <= atol + rtol * abs(expected) or (math.isnan(actual) and math.isnan(expected))
    return None if agree else ""


def significant_strides(shape: Any, stride: Any) -> Any:
    """The strides that say something about the layout: a dim of size 1 has none (any stride
    reaches its one element; PyTorch's own tests compare strides this way), nor has an empty
    tensor. Anything but a shape and strides (an error's text) is kept as it is."""
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple(s if n > 1 else None for n, s in zip(shape, stride, strict=False))


def one_raised(actual: BaseException | None, expected: BaseException | None, tol: Tolerance) -> str | None:
    """One side raised where the other did not (what each raised is the mismatch's text)."""
    return None if (actual is None) == (expected is None) else ""


def same_base(actual: str | None, expected: str | None, tol: Tolerance) -> str | None:
    """The input an output is an autograd view of; an intermediate base is any base (See Note
    [View-ness of outputs] in compare.py for where this is asked)."""
    if (actual is None) != (expected is None):
        return ""
    return None if actual == expected or "<intermediate>" in (actual, expected) else ""


@dataclass(frozen=True)
class About:
    """What tensor a check read (see Mismatch): placed on each mismatch the check makes."""

    role: str = ""
    subject: str = ""
    inner: tuple[str, ...] = ()


NOTHING_IN_PARTICULAR = About()


@dataclass(frozen=True)
class Check:
    id: str
    about: str
    observe: str
    compare: Compare = "equal"
    judge: Judge = equal

    def mismatch(self, where: str, expected: str, actual: str, detail: str = "", *, source: str = "eager",
                 of: About = NOTHING_IN_PARTICULAR) -> Mismatch:
        """A difference this check found (or, with `source`, a difference from what the case expects)."""
        return Mismatch(self.id, where, expected, actual, detail, source, role=of.role, subject=of.subject,
                        inner=of.inner)

    def judged(self, where: str, actual: Any, expected: Any, tol: Tolerance = EXACT, *,
               show: Callable[[Any], str] = short, of: About = NOTHING_IN_PARTICULAR) -> Mismatch | None:
        """The mismatch where compiled's `actual` and eager's `expected` differ by this check's judge,
        each side shown by `show`; None where they agree."""
        detail = self.judge(actual, expected, tol)
        return None if detail is None else self.mismatch(where, show(expected), show(actual), detail, of=of)


CHECKS: dict[str, Check] = {c.id: c for c in (
    Check("type", "the tensor's class", "f'{type(t).__module__}.{type(t).__qualname__}'"),
    Check("dtype", "dtype", "t.dtype"),
    Check("device", "device", "str(t.device)"),
    Check("shape", "sizes", "tuple(t.shape)"),
    Check("stride", "strides of the dims longer than 1 (None for a dim of size 1: it has no layout)",
          "significant_strides(tuple(t.shape), t.stride())"),
    Check("storage_offset", "storage offset", "t.storage_offset()"),
    Check("requires_grad", "requires_grad", "t.requires_grad"),
    Check("is_leaf", "is_leaf", "t.is_leaf"),
    Check("values", "values, within the case's tolerance", "t.detach()", "close", close),
    Check("storage size", "elements in the storage the tensor lives in",
          "t.untyped_storage().nbytes() // t.element_size()"),
    Check("storage contents", "every value in the storage the tensor lives in (writes outside its geometry)",
          "torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage()).detach()", "close", close),
    Check("inner tensors", "a subclass's inner tensors", "sorted(type(t).__tensor_flatten__(t)[0])"),
    Check("value", "a non-tensor output", "t", judge=close_number),
    Check("_version moved", "whether the version counter moved during the call", "t._version - v0", "moved", moved),
    Check("_version delta", "how far the version counter moved during the call", "t._version - v0"),
    Check("storage swapped (set_)", "whether the tensor lives in another storage after the call",
          "t.untyped_storage() is not s0"),
    Check("shares storage with", "the other inputs and outputs living in the same storage",
          "sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None "
          "and storage_key(x) == storage_key(t))"),
    Check("is the input object", "whether an output is an input object itself",
          "next((n for n, x in tensors.items() if x is t), None)"),
    Check("view of (_base)", "which input an output is an autograd view of",
          "None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), "
          "'<intermediate>')", judge=same_base),
    Check("exists", "whether a tensor exists after the call (optimizer state)", "t is not None"),
    Check(".grad", "whether a leaf has a gradient after the backward", "t.grad is not None"),
    Check("grad mode", "grad mode right after the call", "modes[0]"),
    Check("inference mode", "inference mode right after the call", "modes[1]"),
    Check("autocast", "autocast right after the call", "modes[2]"),
    Check("structure", "the containers around the outputs", "structure(out)", "special"),
    Check("number of outputs", "how many outputs", "len(outs)"),
    Check("exception", "what the call (or its backward, or a caller action) raised", "raised", "special", one_raised),
    Check("in-place write through outputs", "whether writing through each output works", "written", "special"),
    Check("graphs compiled", "graphs the backend compiled over the pass", "len(graphs)", "special"),
    Check("internals probe", "the generated wrapper against the reference (--strict-internals)", "", "special"),
)}


# -------------------- conformance/core/build.py
import importlib
import linecache
import math
import re
import sys
import types
from collections.abc import Collection
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


# Note [Inputs as code]
# Inputs are built by running Python statements that the builder writes (`input_code`), in a
# namespace of their own: the generator, the two helpers below, the case's classes and the inputs
# built so far. A reproducer prints the same statements, so what it builds is what the harness
# built, drawn by the same calls in the same order, and no second copy of the drawing exists.


def place(values: torch.Tensor, stride: tuple[int, ...], offset: Any, numel: int, device: str) -> torch.Tensor:
    """`values` with that exact geometry, in a zeroed storage of `numel` elements of its own."""
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out


def non_leaf(leaf: torch.Tensor) -> torch.Tensor:
    """`leaf`'s geometry and values, made from it by an op (a grad_fn), in a zeroed storage of its own."""
    t, nbytes = torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes()
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


def draw_expr(spec: Spec, gen: str) -> str:  # noqa: PLR0911  # one return per init kind
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
    kinds: dict[str, str] = field(default_factory=dict)

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


def _dense_expr(spec: Spec, device: str, code: InputCode) -> str:
    stride, offset = geometry(spec)
    shape = tuple(spec["shape"])
    where = spec["device"] or device
    fresh = spec["init"] != "arange" or spec["values"] is not None  # arange's reshape is a view
    if fresh and stride == contiguous_strides(shape) and offset == 0:
        return draw_expr(spec, code.gen) + (f".to({where!r})" if where != "cpu" else "")
    return (f"{code.need('place')}({draw_expr(spec, code.gen)}, {stride}, {offset}, "
            f"{storage_numel(shape, stride, offset)}, {where!r})")


def _inner_expr(spec: Spec, device: str, classes: dict[str, Any], code: InputCode) -> str:
    if spec["tensor"] is not None:
        return _dense_expr(spec["tensor"], device, code)
    if spec["two_tensor"] is not None:
        return _two_tensor_expr(spec["two_tensor"], device, classes, code, requires_grad=False)
    return _subclass_expr(spec["subclass"], device, classes, code, requires_grad=False)


def _two_tensor_expr(spec: Spec, device: str, classes: dict[str, Any], code: InputCode, *, requires_grad: bool) -> str:
    two_tensor_type()  # FeatureUnavailable on a build without it
    code.imported(TWO_TENSOR_IMPORT)
    a, b = (_inner_expr(spec[k], device, classes, code) for k in ("a", "b"))
    return f"TwoTensor({a}, {b})" + (".requires_grad_()" if requires_grad else "")


def _subclass_expr(spec: Spec, device: str, classes: dict[str, Any], code: InputCode, *, requires_grad: bool) -> str:
    cls = class_expr(spec["class"], classes, torch.Tensor, "subclass", code)
    args = [_inner_expr(a, device, classes, code) for a in spec["args"]]
    args += [f"{k}={value_literal(v)}" for k, v in spec["kwargs"].items()]
    return f"{cls}({', '.join(args)})" + (".requires_grad_()" if requires_grad else "")


def _module_lines(name: str, spec: Spec, device: str, *, training: bool, classes: dict[str, Any],
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
        f"    {name} = {cls}({', '.join(args)})",
        f"{name}.to({to}).train({spec['train']})" + ("" if training else ".requires_grad_(False)"),
    ]


def _optimizer_line(name: str, spec: Spec, classes: dict[str, Any], code: InputCode) -> str:
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


def input_code(case: Spec, device: str, mode: str, point: CallPoint | None = None, *,
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
        kind = next(k for k in ("scalar", "module", "optimizer", "tensor", "two_tensor", "subclass", "view")
                    if spec[k] is not None)
        code.kinds[name] = kind
        if kind == "scalar":
            first = sweep(spec["scalar"])[0]
            code.lines.append(f"{name} = {value_literal(first if name in overrides else scalars.get(name, first))}")
        elif kind == "module":
            code.lines += _module_lines(name, spec["module"], device, training=training, classes=classes, code=code)
        elif kind == "optimizer":
            code.lines.append(_optimizer_line(name, spec["optimizer"], classes, code))
        elif kind == "tensor":
            tspec = spec["tensor"]
            dense_ = _dense_expr(tspec, device, code)
            if training and tspec["requires_grad"] and not tspec["leaf"]:
                var = leaf_var(name, names)
                code.lines += [f"{var} = {dense_}.requires_grad_()", f"{name} = {code.need('non_leaf')}({var})"]
            else:
                code.lines.append(f"{name} = {dense_}" + (".requires_grad_()" if training and tspec["requires_grad"]
                                                          else ""))
        elif kind == "two_tensor":
            rg = training and spec["two_tensor"]["requires_grad"]
            two = _two_tensor_expr(spec["two_tensor"], device, classes, code, requires_grad=rg)
            code.lines.append(f"{name} = {two}")
        elif kind == "subclass":
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


def build_inputs(case: Spec, device: str, mode: str, point: CallPoint | None = None,
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


def _run_input(name: str, kind: str, source: str, scope: dict[str, Any]) -> None:
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


def _leaves_of(name: str, spec: Spec, value: Any, scope: dict[str, Any], *, training: bool,
               names: set[str]) -> dict[str, torch.Tensor]:
    """The grad leaves an input brings, by name."""
    if isinstance(value, torch.nn.Module):
        return {f"{name}.{p}": t for p, t in value.named_parameters() if t.requires_grad}
    if not training or (spec["tensor"] is None and spec["two_tensor"] is None and spec["subclass"] is None):
        return {}
    if spec["tensor"] is not None:
        if not spec["tensor"]["requires_grad"]:
            return {}
        return {name: value} if spec["tensor"]["leaf"] else {f"{name}.leaf": scope[leaf_var(name, names)]}
    return {name: value} if (spec["two_tensor"] or spec["subclass"])["requires_grad"] else {}


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
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch


def is_subclass(t: torch.Tensor) -> bool:
    return type(t) is not torch.Tensor and hasattr(type(t), "__tensor_flatten__")


def flatten_outputs(out: Any) -> list[Any]:
    """A program's return value as a flat list (tuples/lists/dicts in order; a bare value alone)."""
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]


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


@functools.cache
def _storages_preserved() -> bool:
    """Whether the build gives one Python object per storage (PyObject preservation), so that
    `is` tells storages apart where a data_ptr cannot."""
    t = torch.empty(1)
    return t.untyped_storage() is t.untyped_storage()


def storage_object(t: torch.Tensor) -> Any:
    """The storage object of a dense tensor, where the build preserves it (None otherwise)."""
    if is_subclass(t) or t.device.type == "meta" or not _storages_preserved():
        return None
    return _safe(t.untyped_storage)


def same_storage(before: TensorState, after: TensorState) -> bool:
    """Whether a tensor still lives in the storage it had: by the storage object where there is one
    (a data_ptr is reused once the old storage is freed), else by (device, data_ptr)."""
    if before.storage_object is not None and after.storage_object is not None:
        return before.storage_object is after.storage_object
    return before.storage == after.storage


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
    # The storage object itself, held so that it outlives the call: a storage freed during the call
    # (resize_storage_bytes_(x, 0), then set_) hands its memory, and so its data_ptr, to the next one.
    storage_object: Any = field(default=None, compare=False, repr=False)


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
        storage_object=storage_object(t),
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
        return refusal(exc)


def refusal(exc: BaseException) -> str:
    """An autograd refusal by kind: its type and first sentence, without the node that made the view
    (eager's `Output 1 of Unbind` is compiled's `Output 0 of Select` or `of CompiledFunction`, where
    the runtime wrapper regenerates the view: one refusal in two wordings)."""
    first = str(exc).split(".")[0]
    return f"raises {type(exc).__name__}: " + re.sub(r"\bOutput \d+ of \w+", "A view's output", first)


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
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch



def compare_values(
    where: str, actual: torch.Tensor | None, expected: torch.Tensor | None, tol: Tolerance,
    check: Check = CHECKS["values"], *, of: About = NOTHING_IN_PARTICULAR,
) -> list[Mismatch]:
    """`of`: what the tensor is (see Mismatch)."""
    if actual is None or expected is None:
        if (actual is None) == (expected is None):
            return []
        return [check.mismatch(where, "unreadable" if expected is None else "readable",
                              "unreadable" if actual is None else "readable", of=of)]
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return []  # reported by the metadata checks
    found = check.judged(where, actual, expected, tol, show=lambda t: short(t.flatten()[:8].tolist()), of=of)
    return [] if found is None else [found]


def compare_state(
    where: str,
    actual: TensorState,
    expected: TensorState,
    tol: Tolerance,
    *,
    strides: bool = True,
    grad_fields: bool = True,
    storage: bool = True,
    of: About = NOTHING_IN_PARTICULAR,
) -> list[Mismatch]:
    """Metadata, values (and the whole storage's values) of one tensor, recursing into subclasses."""
    out: list[Mismatch] = []

    def field(check: Check, a: Any, e: Any) -> None:
        if (m := check.judged(where, a, e, of=of)) is not None:
            out.append(m)

    field(CHECKS["type"], actual.type, expected.type)
    field(CHECKS["dtype"], actual.dtype, expected.dtype)
    field(CHECKS["device"], actual.device, expected.device)
    field(CHECKS["shape"], actual.shape, expected.shape)
    if strides:
        field(CHECKS["stride"], significant_strides(actual.shape, actual.stride),
              significant_strides(expected.shape, expected.stride))
        field(CHECKS["storage_offset"], actual.storage_offset, expected.storage_offset)
    if grad_fields:
        field(CHECKS["requires_grad"], actual.requires_grad, expected.requires_grad)
        field(CHECKS["is_leaf"], actual.is_leaf, expected.is_leaf)
    if out:
        return out
    out += compare_values(where, actual.values, expected.values, tol, of=of)
    if storage and not out and actual.storage_values is not None and expected.storage_values is not None:
        if actual.storage_values.shape != expected.storage_values.shape:
            field(CHECKS["storage size"], tuple(actual.storage_values.shape), tuple(expected.storage_values.shape))
        else:
            out += compare_values(where, actual.storage_values, expected.storage_values, tol,
                                  CHECKS["storage contents"], of=of)
    for name in sorted(set(actual.inner) | set(expected.inner)):
        a, e = actual.inner.get(name), expected.inner.get(name)
        if a is None or e is None:
            field(CHECKS["inner tensors"], sorted(actual.inner), sorted(expected.inner))
            break
        out += compare_state(f"{where}.{name}", a, e, tol, strides=strides, grad_fields=False, storage=storage,
                             of=dataclasses.replace(of, inner=(*of.inner, name)))
    return out


def compare_plain(where: str, actual: Any, expected: Any, tol: Tolerance, *,
                  of: About = NOTHING_IN_PARTICULAR) -> list[Mismatch]:
    """A non-tensor output (Python number, None, string...)."""
    if type(actual) is not type(expected):
        m = CHECKS["type"].judged(where, type(actual), type(expected), show=lambda t: t.__name__, of=of)
    else:
        m = CHECKS["value"].judged(where, actual, expected, tol, of=of)
    return [] if m is None else [m]


@dataclass(frozen=True)
class InputChange:
    """What a call did to one input: compared by default as 'did it happen', not 'how much'."""

    storage_swapped: bool
    version_delta: int | None


def input_change(before: TensorState, after: TensorState) -> InputChange:
    delta = None
    if before.version is not None and after.version is not None:
        delta = after.version - before.version
    return InputChange(storage_swapped=not same_storage(before, after), version_delta=delta)


def compare_change(where: str, actual: InputChange, expected: InputChange, version: str, *,
                   of: About = NOTHING_IN_PARTICULAR) -> list[Mismatch]:
    found = [CHECKS["storage swapped (set_)"].judged(where, actual.storage_swapped, expected.storage_swapped,
                                                      show=str, of=of)]
    a, e = actual.version_delta, expected.version_delta
    if version != "ignore" and a is not None and e is not None:
        if version == "exact":
            found.append(CHECKS["_version delta"].judged(where, a, e, show=str, of=of))
        else:
            found.append(CHECKS["_version moved"].judged(where, a, e, show=lambda d: f"{d > 0} (delta {d})", of=of))
    return [m for m in found if m is not None]


def compare_relations(actual: Sequence[Relation | None], expected: Sequence[Relation | None]) -> list[Mismatch]:
    """Aliasing of each output. See Note [View-ness of outputs]."""
    out: list[Mismatch | None] = []
    for k, (a, e) in enumerate(zip(actual, expected, strict=False)):
        if a is None or e is None:
            continue
        where = f"out[{k}]"
        of = About("output", where)
        out.append(CHECKS["is the input object"].judged(where, a.is_input, e.is_input, of=of))
        if e.requires_grad:
            out.append(CHECKS["view of (_base)"].judged(where, a.view_of_input, e.view_of_input, of=of))
        out.append(CHECKS["shares storage with"].judged(where, list(a.shares_storage_with),
                                                        list(e.shares_storage_with), of=of))
    return [m for m in out if m is not None]


def compare_ambient(actual: Ambient, expected: Ambient) -> list[Mismatch]:
    found = [CHECKS["grad mode"].judged("after the call", actual.grad_enabled, expected.grad_enabled, show=str),
             CHECKS["inference mode"].judged("after the call", actual.inference_mode, expected.inference_mode,
                                             show=str),
             CHECKS["autocast"].judged("after the call", actual.autocast, expected.autocast)]
    return [m for m in found if m is not None]


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
    objects: dict[str, torch.Tensor] = field(default_factory=dict)  # the input tensors the call was given
    rebound: set[str] = field(default_factory=set)  # inputs a caller action replaced by another tensor


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
                held=[_held(t) for t in tensors.values()], objects=dict(tensors))
    result = None
    with torch.set_grad_enabled(case["grad_enabled"]), torch.inference_mode(case["inference_mode"]):
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
    side.rebound = {n for n, t in tensors.items() if n in side.objects and side.objects[n] is not t}


def plain_tangent(out: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A seeded gradient shaped like the plain tensor `out`."""
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)


def tangent(out: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A seeded gradient shaped like `out`; for a subclass, the same subclass built from inner
    tangents, so the backward sees what a user's backward of that output would."""
    if is_subclass(out):
        names, ctx = type(out).__tensor_flatten__(out)  # type: ignore[attr-defined]  # subclass protocol
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())  # type: ignore[attr-defined, no-any-return]  # subclass protocol
    return plain_tangent(out, gen)


def backward_outputs(outputs: list[Any], seed: int) -> None:
    """Backward through every differentiable output at once, with tangents seeded by `seed`."""
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad
            and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])


def backward(side: Side, case: Spec, is_program_exception: Callable[[BaseException], bool] = program_raised) -> None:
    """The backward of one side's outputs (backward_outputs), what it raised kept."""
    try:
        backward_outputs(side.outputs, case["seed"] + TANGENT_SEED_OFFSET)
    except BaseException as exc:
        if not is_program_exception(exc):
            raise
        side.backward_exc = exc.with_traceback(None)
    side.grads = {name: (tensor_state(leaf.grad, with_storage=False) if leaf.grad is not None else None)
                  for name, leaf in side.inputs.grad_leaves.items()}


def write_through_outputs(outputs: list[Any]) -> list[str | None]:
    """Write through every output in place (so that aliasing shows): what each write raised."""
    errors: list[str | None] = []
    with torch.no_grad():
        for o in outputs:
            if not isinstance(o, torch.Tensor):
                errors.append(None)
                continue
            try:
                if o.dtype == torch.bool:
                    o.logical_not_()
                else:
                    o.add_(1)
                errors.append(None)
            except Exception as exc:
                errors.append(type(exc).__name__)
    return errors


def write_through(side: Side) -> None:
    """Write through every output, so aliasing shows as changed inputs/outputs."""
    side.write_errors = write_through_outputs(side.outputs)
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
            out.append(CHECKS["exception"].mismatch("call", want, got, source="expect.raises"))
        elif name == "compiled" and (m := CHECKS["exception"].judged("call", side.exc, None,
                                                                     show=exception_summary)) is not None:
            out.append(m)  # against no exception: eager raising where no raise is declared broke the case
    return out


def _compare_outputs(eager: Side, comp: Side, case: Spec, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (m := CHECKS["structure"].judged("outputs", comp.structure, eager.structure, show=str)) is not None:
        out.append(m)
    if (m := CHECKS["number of outputs"].judged("outputs", len(comp.outputs), len(eager.outputs),
                                                show=str)) is not None:
        return [*out, m]
    for k, (a, e) in enumerate(zip(comp.outputs, eager.outputs, strict=True)):
        sa, se = comp.out_states[k], eager.out_states[k]
        if sa is not None and se is not None:
            # Note [Scratch storage of outputs]: the rest of a fresh output's storage is scratch
            rel = eager.relations[k] if k < len(eager.relations) else None
            shared = rel is not None and bool(rel.shares_storage_with)
            out += compare_state(f"out[{k}]", sa, se, tol, strides=case["expect"]["strides"], storage=shared,
                                 of=About("output", f"out[{k}]"))
        elif (sa is None) != (se is None):
            out.append(CHECKS["type"].mismatch(f"out[{k}]", type(e).__name__, type(a).__name__,
                                               of=About("output", f"out[{k}]")))  # a tensor on one side only
        else:
            out += compare_plain(f"out[{k}]", a, e, tol, of=About("output", f"out[{k}]"))
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
            out.append(CHECKS["exists"].mismatch(f"input {name}", str(se is not None), str(sa is not None),
                                                 of=About("input", name)))
            continue
        out += compare_state(f"input {name}", sa, se, tol, of=About("input", name))
        # an input a caller action replaced is another tensor: what the call did to the old one is not
        # in it (its version counter starts wherever the new tensor's does)
        if name in eager.before and name in comp.before and not (name in eager.rebound and name in comp.rebound):
            ce = input_change(_as_state(eager.before[name]), se)
            ca = input_change(_as_state(comp.before[name]), sa)
            out += compare_change(f"input {name}", ca, ce, version_mode(case, name), of=About("input", name))
        shared = CHECKS["shares storage with"].judged(f"input {name}", list(comp.sharing.get(name, ())),
                                                       list(eager.sharing.get(name, ())), show=str,
                                                       of=About("input", name))
        out += [shared] if shared is not None else []
    return out


def _compare_grads(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (m := CHECKS["exception"].judged("backward", comp.backward_exc, eager.backward_exc,
                                        show=exception_summary)) is not None:
        out.append(m)
    for name, ge in eager.grads.items():
        ga = comp.grads.get(name)
        if (m := CHECKS[".grad"].judged(f"grad of {name}", ga is not None, ge is not None,
                                        show=lambda has: "a tensor" if has else "None",
                                        of=About("grad", name))) is not None:
            out.append(m)
        elif ga is not None and ge is not None:
            out += compare_state(f"grad of {name}", ga, ge, tol, strides=False, grad_fields=False, storage=False,
                                 of=About("grad", name))
    return out


def _compare_write_through(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (m := CHECKS["in-place write through outputs"].judged("outputs", comp.write_errors, eager.write_errors,
                                                             show=str)) is not None:
        out.append(m)
    outputs = {f"out[{k}]" for k in range(len(eager.outputs))}
    for name, se in eager.after_write.items():
        sa = comp.after_write.get(name)
        if sa is not None:
            role = "output" if name in outputs else "input"
            out += [m.seen(WRITE_THROUGH) for m in compare_state(name, sa, se, tol, strides=False, grad_fields=False,
                                                                  storage=False, of=About(role, name))]
    return out


def compare_call(eager: Side, comp: Side, case: Spec, prefix: str, training: bool) -> list[Mismatch]:
    """Everything one call left behind, compiled against eager (the caller places it in its call)."""
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
    return found


# -------------------- conformance/core/compile.py
import contextlib
import difflib
import hashlib
import importlib
import importlib.util
import json
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
    """A backend wrapper that counts the graphs the backend it wraps compiled: `count`, those whose
    compile returned (what dynamo can install), and `backend_calls`, every graph it was handed. They
    differ where a compile was aborted and retried: dynamo's tensorify restart (a float it tried to
    make a tensor must stay a Python float after all) raises out of the backend and traces the frame
    again, which is no recompile."""

    def __init__(self, inner: Callable[..., Any]) -> None:
        self.inner = inner
        self.count = 0
        self.backend_calls = 0
        # what dynamo names the backend in its errors ("backend='inductor' raised: ..."): the user's
        # choice, never this wrapper's repr
        self.__name__ = str(getattr(inner, "__name__", type(inner).__name__))

    def __repr__(self) -> str:
        return self.__name__

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        self.backend_calls += 1
        compiled = self.inner(gm, example_inputs, **kwargs)
        self.count += 1
        return compiled


# Backends torch registers whatever is installed, which import a package of their own when they
# compile: without it they raise (an ImportError wrapped in BackendCompilerFailed), which is no
# verdict on the build. Vendors' backends register only where their package is installed.
BACKEND_PACKAGES = {"tvm": ("tvm", "apache-tvm"), "openxla": ("torch_xla", "torch_xla"),
                    "openxla_eval": ("torch_xla", "torch_xla"), "onnxrt": ("onnxruntime", "onnxruntime")}


def backend_missing(name: str) -> str | None:
    """Why a registered backend cannot compile here (a package it imports is absent), or None."""
    module, package = BACKEND_PACKAGES.get(name, (None, ""))
    if module is None or importlib.util.find_spec(module) is not None:
        return None
    return f"backend {name!r} needs the {package} package, which is not installed here (no module {module!r})"


def lookup_backend(name: str) -> Callable[..., Any]:
    """A torch.compile backend by its registered name; FeatureUnavailable if this build has none
    or it cannot run here."""
    import torch._dynamo

    missing = backend_missing(name)
    if missing is not None:
        raise FeatureUnavailable(missing)

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
    counter.__name__ = backend
    return torch.compile(fn, backend=counter, dynamic=options["dynamic"], fullgraph=options["fullgraph"]), counter


def config_flag(key: str) -> tuple[Any, str]:
    """The config module and flag name a case's `config:` key names. FeatureUnavailable where this
    build lacks it (another release may have it), CaseBroken where the module is no torch config
    module (it cannot be patched on any build)."""
    module_name, _, flag = key.partition(".config.")
    module_name += ".config"
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise FeatureUnavailable(f"no module {module_name} in this build (torch {torch.__version__})") from None
    flags = getattr(module, "get_config_copy", None)
    if not callable(flags) or not callable(getattr(module, "patch", None)):
        raise CaseBroken(f"{module_name} is not a torch config module (it has no patch()); name a flag of e.g. "
                         "torch._dynamo.config or torch._inductor.config")
    known = flags()
    if flag not in known:
        close = difflib.get_close_matches(flag, list(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise FeatureUnavailable(f"no such flag in this build (torch {torch.__version__}){hint}")
    return module, flag


def config_patches(case: Spec, backend: str) -> list[tuple[Any, dict[str, Any]]]:
    """(config module, {name: value}) for the case's config and its inductor options and mode; a
    flag this build lacks skips the item (validate says so at its line, deep_check)."""
    patches: list[tuple[Any, dict[str, Any]]] = []
    for key, value in case["config"].items():
        try:
            module, flag = config_flag(key)
        except FeatureUnavailable as exc:
            raise FeatureUnavailable(f"config: {key}: {exc}") from None
        except CaseBroken as exc:
            raise CaseBroken(f"config: {key}: {exc}") from None
        patches.append((module, {flag: value}))
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
def item_cache_key(*parts: object) -> Iterator[None]:
    """See Note [Cold and warm passes]; a build without the tag (before 2.6) shares its caches."""
    config = getattr(getattr(torch, "compiler", None), "config", None)
    if config is None or not hasattr(config, "cache_key_tag"):
        yield
        return
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()[:24]
    with config.patch(cache_key_tag=f"torch-conformance-{digest}"):
        yield


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
    if expected is None or not counts_graphs(target.backend) or count == expected:
        return None
    return CHECKS["graphs compiled"].mismatch(f"{pass_name} pass over {calls} call(s)", str(expected), str(count),
                                              "a recompile per value" if count >= calls > 1 else "",
                                              source="expect.compiles")


def recompile_note(case: Spec, target: Target, per_call: list[int]) -> str | None:
    """Graphs compiled after the first call of the cold pass, where the case does not say how
    many to expect: never a silent pass (the record and the report show it), never a verdict."""
    later = sum(per_call[1:])
    if case["expect"]["compiles"] is not None or not counts_graphs(target.backend) or not later:
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
        stack.enter_context(item_cache_key(case, target.program, target.classes, target.device, target.backend,
                                           target.kiim, target.mode))
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
            outcome.compile_counts[f"{pass_name}_backend_calls"] = counter.backend_calls
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
        return [CHECKS["exception"].mismatch(f"{point.where}.{which}", "no exception", raised[1])]
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
            several = len(points) > 1
            found += [m.located(call=i + 1 if several else None, call_label=point.label if several else "",
                                warm=bool(warm_prefix))
                      for m in [*pending, *compare_call(eager, comp, case, prefix, training)]]
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
 'behavior': 'mutation_epilogue',
 'summary': 'Explorer finding (torch.compile | error | the item | the item could not run | RuntimeError: '
            'Inference tensors do not track version counter.): compiled differs from eager.',
 'upstream': ['https://github.com/pytorch/pytorch/pull/179600'],
 'devices': None,
 'backends': ['none'],
 'compile': {'dynamic': None,
             'fullgraph': False,
             'mode': None,
             'options': {},
             'keep_inference_input_mutations': [False]},
 'config': {},
 'seed': 4,
 'classes': None,
 'inputs': {'m': {'tensor': None,
                  'view': None,
                  'two_tensor': None,
                  'subclass': None,
                  'scalar': None,
                  'module': {'class': 'torch.nn.Linear',
                             'args': [4, 4],
                             'kwargs': {},
                             'train': True,
                             'dtype': None,
                             'parameters': {},
                             'buffers': {}},
                  'optimizer': None,
                  'hidden': False,
                  'persist': True},
            'opt': {'tensor': None,
                    'view': None,
                    'two_tensor': None,
                    'subclass': None,
                    'scalar': None,
                    'module': None,
                    'optimizer': {'class': 'torch.optim.SGD',
                                  'params': 'm',
                                  'kwargs': {'lr': 0.1, 'momentum': 0.9}},
                    'hidden': False,
                    'persist': None}},
 'program': 'def f(m, opt):\n    m.weight.grad = torch.ones_like(m.weight)\n    opt.step()\n',
 'calls': [{'before': None, 'after': None}],
 'modes': ['inference'],
 'grad_enabled': True,
 'inference_mode': True,
 'expect': {'rtol': None,
            'atol': None,
            'strides': True,
            'version': 'moved',
            'write_through': True,
            'compiles': None,
            'warm_rerun': False,
            'raises': None},
 'known_failures': []}
TARGET = Target(
    program=r'''























def f(m, opt):
    m.weight.grad = torch.ones_like(m.weight)
    opt.step()
''',
    function='f',
    filename='<program of /work/runs/control-2.15/shards/1/findings/torch_compile_error_the_item_the_7534bb.yaml>',
    device='cpu', backend='none', mode='inference', kiim=False,
    classes=None,
    classes_filename='<classes of /work/runs/control-2.15/shards/1/findings/torch_compile_error_the_item_the_7534bb.yaml>',
)
RECORDED = ['harness error: RuntimeError: Inference tensors do not track version counter.']


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
