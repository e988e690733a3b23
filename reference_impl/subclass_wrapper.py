"""Behaviour ``subclass_wrapper`` (upstream #176741): tensor subclasses in and out of a graph.

A compiled graph only sees plain tensors. Around it, a wrapper

* unwraps every subclass input into its inner tensors, depth first in
  ``__tensor_flatten__`` attribute order (nested subclasses recurse), after checking the
  argument really is of the subclass type the graph was compiled for (``type(x) is T``:
  a different subclass would be silently mis-unwrapped); sizes/strides that were symbolic
  at compile time are passed as extra integer arguments after the inner tensors;
* passes ``None`` for subclass inputs that inductor freezing baked into the graph;
* passes trailing arguments the metadata does not cover through unchanged;
* rebuilds each subclass output with ``T.__tensor_unflatten__(inner, ctx, size, stride)``
  from consecutive graph outputs, and appends the saved activations of a training graph.

The codegen bakes attribute names, types and indices into ``inner_fn``; the interpreted
form walks the metadata (and the live ``__tensor_flatten__``) for every call.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Union

import torch

from reference_impl._source import SourceBuilder, exec_function
from reference_impl.structural import trace_function
from reference_impl.terms import Attr, Call, Effect, Name, Op, Trace

__all__ = [
    "PlainMeta",
    "SubclassMeta",
    "SubclassWrapperForm",
    "SubclassWrapperMeta",
    "codegen_subclass_wrapper",
    "compile_subclass_wrapper",
    "is_wrapper_subclass",
    "mark_symbolic",
    "run_subclass_wrapper_interpreted",
    "structural_form",
    "subclass_meta_of",
]

PARAMS = ("args",)


@dataclass(frozen=True)
class PlainMeta:
    """A plain tensor (or a non-tensor) in a position where a subclass could be."""


@dataclass(frozen=True)
class SubclassMeta:
    """One subclass value: its type, inner attributes (nested), flatten context and outer
    size/stride, where ``None`` marks an entry that was symbolic at compile time."""

    cls: type
    attrs: tuple[tuple[str, Union[PlainMeta, SubclassMeta]], ...]  # noqa: UP007  # runtime-evaluated self reference
    ctx: object = None
    outer_size: tuple[int | None, ...] = ()
    outer_stride: tuple[int | None, ...] = ()

    @property
    def arg_count(self) -> int:
        """Graph values this subclass occupies: inner leaves, then symbolic sizes/strides."""
        inner = sum(m.arg_count if isinstance(m, SubclassMeta) else 1 for _, m in self.attrs)
        symbolic = [s for s in (*self.outer_size, *self.outer_stride) if s is None]
        return inner + len(symbolic)


Meta = Union[PlainMeta, SubclassMeta]  # noqa: UP007  # used at runtime in isinstance-free aliases


@dataclass(frozen=True)
class SubclassWrapperMeta:
    """Inputs and outputs of one compiled region, frozen inputs, and (training) the number
    of activations the graph returns after the user outputs."""

    inputs: tuple[Meta, ...]
    outputs: tuple[Meta, ...]
    frozen_inputs: frozenset[int] = frozenset()
    num_saved_activations: int | None = None


def is_wrapper_subclass(x: object) -> bool:
    """A tensor subclass that implements the public flatten protocol."""
    return (
        isinstance(x, torch.Tensor)
        and type(x) is not torch.Tensor
        and hasattr(type(x), "__tensor_flatten__")
    )


def subclass_meta_of(x: object, *, symbolic_dims: frozenset[int] = frozenset()) -> Meta:
    """Derive the metadata of a live value through ``__tensor_flatten__`` (recursively)."""
    if not is_wrapper_subclass(x):
        return PlainMeta()
    assert isinstance(x, torch.Tensor)
    names, ctx = x.__tensor_flatten__()  # type: ignore[attr-defined]  # protocol method
    attrs = tuple((n, subclass_meta_of(getattr(x, n))) for n in names)
    size = tuple(None if d in symbolic_dims else int(s) for d, s in enumerate(x.size()))
    stride = tuple(None if d in symbolic_dims else int(s) for d, s in enumerate(x.stride()))
    return SubclassMeta(type(x), attrs, ctx, size, stride)


def mark_symbolic(
    meta: Meta, symbolic: Mapping[str, tuple[Collection[int], Collection[int]]], path: str = ""
) -> Meta:
    """``meta`` with the outer size/stride entries that were symbolic at compile time set to
    ``None``. ``symbolic`` maps a subclass's attribute path (``""`` for the value itself,
    ``"a"``, ``"a.b"`` for nested ones) to its symbolic size dims and stride dims; which
    ones are symbolic is the compiler's choice (dynamic shapes), so the caller supplies it.
    """
    if not isinstance(meta, SubclassMeta):
        return meta
    sizes, strides = symbolic.get(path, ((), ()))
    attrs = tuple(
        (name, mark_symbolic(m, symbolic, f"{path}.{name}" if path else name))
        for name, m in meta.attrs
    )
    return replace(
        meta,
        attrs=attrs,
        outer_size=tuple(None if d in sizes else s for d, s in enumerate(meta.outer_size)),
        outer_stride=tuple(None if d in strides else s for d, s in enumerate(meta.outer_stride)),
    )


def _flatten(x: Any, meta: SubclassMeta, out: list[Any]) -> None:
    names, _ = x.__tensor_flatten__()
    inner_metas = dict(meta.attrs)
    for name in names:
        inner = getattr(x, name)
        inner_meta = inner_metas.get(name, PlainMeta())
        if isinstance(inner_meta, SubclassMeta):
            _flatten(inner, inner_meta, out)
        else:
            out.append(inner)
    size, stride = x.size(), x.stride()
    out.extend(size[d] for d, s in enumerate(meta.outer_size) if s is None)
    out.extend(stride[d] for d, s in enumerate(meta.outer_stride) if s is None)


def _unflatten(meta: SubclassMeta, outs: Sequence[Any], pos: int) -> tuple[Any, int]:
    inner: dict[str, Any] = {}
    for name, m in meta.attrs:
        if isinstance(m, SubclassMeta):
            inner[name], pos = _unflatten(m, outs, pos)
        else:
            inner[name] = outs[pos]
            pos += 1
    dims = []
    for entries in (meta.outer_size, meta.outer_stride):
        values = []
        for s in entries:
            if s is None:
                values.append(outs[pos])
                pos += 1
            else:
                values.append(s)
        dims.append(tuple(values))
    return meta.cls.__tensor_unflatten__(inner, meta.ctx, dims[0], dims[1]), pos  # type: ignore[attr-defined]  # protocol method


def _type_error(expected: type, got: object) -> AssertionError:
    return AssertionError(f"expected {expected}, got {type(got)}")


def run_subclass_wrapper_interpreted(
    meta: SubclassWrapperMeta, compiled_fn: Callable[[list[Any]], Any], args: list[Any]
) -> tuple[Any, ...]:
    """The data-driven unwrap/rewrap loop the codegen replaced."""
    unwrapped: list[Any] = []
    for i, m in enumerate(meta.inputs):
        x = args[i]
        if isinstance(m, PlainMeta):
            unwrapped.append(x)
        elif i in meta.frozen_inputs:
            unwrapped.append(None)
        else:
            if type(x) is not m.cls:
                raise _type_error(m.cls, x)
            _flatten(x, m, unwrapped)
    unwrapped.extend(args[len(meta.inputs) :])
    args.clear()
    outs = compiled_fn(unwrapped)
    wrapped: list[Any] = []
    pos = 0
    for m in meta.outputs:
        if isinstance(m, SubclassMeta):
            value, pos = _unflatten(m, outs, pos)
            wrapped.append(value)
        else:
            wrapped.append(outs[pos])
            pos += 1
    if meta.num_saved_activations is not None:
        return tuple(wrapped) + tuple(outs[pos:])
    return tuple(wrapped)


def _attr(var: str, name: str) -> str:
    return f"{var}.{name}" if name.isidentifier() else f"getattr({var}, {name!r})"


def _emit_unwrap(b: SourceBuilder, meta: SubclassMeta, var: str) -> None:
    for name, m in meta.attrs:
        if isinstance(m, SubclassMeta):
            inner = b.fresh("_inner")
            b.emit(f"{inner} = {_attr(var, name)}")
            _emit_unwrap(b, m, inner)
        else:
            b.emit(f"unwrapped_args.append({_attr(var, name)})")
    for method, entries in (("size", meta.outer_size), ("stride", meta.outer_stride)):
        for d, s in enumerate(entries):
            if s is None:
                b.emit(f"unwrapped_args.append({var}.{method}()[{d}])")


def _emit_wrap(b: SourceBuilder, meta: SubclassMeta, pos: list[int], outs: str) -> str:
    entries = []
    for name, m in meta.attrs:
        if isinstance(m, SubclassMeta):
            entries.append(f"{name!r}: {_emit_wrap(b, m, pos, outs)}")
        else:
            entries.append(f"{name!r}: {outs}[{pos[0]}]")
            pos[0] += 1
    inner = b.fresh("_out_inner")
    b.emit(f"{inner} = {{{', '.join(entries)}}}")
    tuples = []
    for entries_ in (meta.outer_size, meta.outer_stride):
        parts = []
        for s in entries_:
            if s is None:
                parts.append(f"{outs}[{pos[0]}]")
                pos[0] += 1
            else:
                parts.append(repr(s))
        tuples.append(f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})")
    cls = b.bind("_subclass_type", meta.cls)
    ctx = b.bind("_meta", meta.ctx)
    result = b.fresh("_out")
    b.emit(f"{result} = {cls}.__tensor_unflatten__({inner}, {ctx}, {tuples[0]}, {tuples[1]})")
    return result


def codegen_subclass_wrapper(
    meta: SubclassWrapperMeta, compiled_fn: Callable[[list[Any]], Any] | None = None
) -> tuple[str, dict[str, object]]:
    """Straight-line ``inner_fn(args)`` with types, attributes and indices baked in."""
    b = SourceBuilder()
    b.globals["compiled_fn"] = compiled_fn
    b.emit("def inner_fn(args):", 0)
    b.emit("unwrapped_args = []")
    for i, m in enumerate(meta.inputs):
        if isinstance(m, PlainMeta):
            b.emit(f"unwrapped_args.append(args[{i}])")
        elif i in meta.frozen_inputs:
            b.emit("unwrapped_args.append(None)")
        else:
            var = b.fresh("_inp")
            cls = b.bind("_expected_type", m.cls)
            b.emit(f"{var} = args[{i}]")
            b.emit(f"if type({var}) is not {cls}: raise _type_error_({cls}, {var})")
            _emit_unwrap(b, m, var)
    b.globals["_type_error_"] = _type_error
    b.emit(f"unwrapped_args.extend(args[{len(meta.inputs)}:])")
    b.emit("args.clear()")
    b.emit("unwrapped_outs = compiled_fn(unwrapped_args)")
    pos = [0]
    results = []
    for m in meta.outputs:
        if isinstance(m, SubclassMeta):
            results.append(_emit_wrap(b, m, pos, "unwrapped_outs"))
        else:
            results.append(f"unwrapped_outs[{pos[0]}]")
            pos[0] += 1
    tup = f"({', '.join(results)},)" if results else "()"
    if meta.num_saved_activations is not None:
        b.emit(f"return {tup} + tuple(unwrapped_outs[{pos[0]}:])")
    else:
        b.emit(f"return {tup}")
    return b.source(), b.globals


def compile_subclass_wrapper(
    meta: SubclassWrapperMeta, compiled_fn: Callable[[list[Any]], Any]
) -> Callable[[list[Any]], tuple[Any, ...]]:
    source, globals_ = codegen_subclass_wrapper(meta, compiled_fn)
    return exec_function(source, globals_, "inner_fn", filename="<reference_impl:subclass_wrapper>")


@dataclass(frozen=True)
class SubclassWrapperForm:
    """Type checks, the unwrapped argument list, the graph call and the rebuilt outputs.

    The size/stride arguments of ``__tensor_unflatten__`` are erased: a build may bake
    them or read them from an inner tensor at run time, which is the same contract.
    Assertions other than type checks (output-count sanity checks) are not represented.
    """

    effects: tuple[str, ...]

    def describe(self) -> list[str]:
        return list(self.effects)


def _is_type_check(term: object) -> bool:
    return (
        isinstance(term, Op)
        and term.op == "is"
        and isinstance(term.operands[0], Call)
        and term.operands[0].func == Name("type")
    )


def _erase_geometry(effect: Effect) -> str:
    term = effect.term
    if (
        isinstance(term, Call)
        and isinstance(term.func, Attr)
        and (term.func.attr == "__tensor_unflatten__")
        and len(term.args) == 4
    ):
        term = Call(term.func, (*term.args[:2], Name("<size>"), Name("<stride>")), term.kwargs)
        effect = Effect(effect.kind, term, effect.guards)
    return effect.describe()


def form_from_trace(trace: Trace) -> SubclassWrapperForm:
    lines = []
    for e in trace.effects:
        if e.kind == "assert":
            if _is_type_check(e.term):
                lines.append(f"check {e.term}")
            continue
        if e.kind == "raise" and len(e.guards) == 1 and _is_type_check(_negated(e.guards[0])):
            lines.append(f"check {_negated(e.guards[0])}")
            continue
        lines.append(_erase_geometry(e))
    return SubclassWrapperForm(tuple(lines))


def _negated(guard: Any) -> object:
    """``if type(x) is not T: raise`` is the same check as ``assert type(x) is T``."""
    cond = guard.cond
    if guard.kind == "if" and not guard.negated and isinstance(cond, Op) and cond.op == "is not":
        return Op("is", cond.operands)
    if guard.kind == "if" and guard.negated:
        return cond
    return None


def structural_form(source: str) -> SubclassWrapperForm:
    """Reduce any build's (or our) ``inner_fn`` source to its structural form."""
    return form_from_trace(trace_function(source, PARAMS))
