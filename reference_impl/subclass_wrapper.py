"""Behaviour ``subclass_wrapper`` (upstream #176741): tensor subclasses in and out of a graph.

A compiled graph only sees plain tensors. Around it, a wrapper

* unwraps every subclass input into its inner tensors, depth first in
  ``__tensor_flatten__`` attribute order (nested subclasses recurse), after checking the
  argument really is of the subclass type the graph was compiled for (``type(x) is T``:
  a different subclass would be silently mis-unwrapped); sizes/strides that were symbolic
  at compile time are passed as extra integer arguments (see SymintLayout for where);
* passes ``None`` for subclass inputs that inductor freezing baked into the graph;
* passes trailing arguments the metadata does not cover through unchanged;
* rebuilds each subclass output with ``T.__tensor_unflatten__(inner, ctx, size, stride)``
  from consecutive graph outputs, and appends the saved activations of a training graph.

Where the symbolic sizes go is a calling convention between the wrapper and the graph, and
builds differ (SYMINT_LAYOUTS). Either is the same contract; the probe compares a build
with the layout it follows.

The codegen bakes attribute names, types and indices into ``inner_fn``; the interpreted
form walks the metadata (and the live ``__tensor_flatten__``) for every call.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Union

import torch

from reference_impl._source import SourceBuilder, exec_function
from reference_impl.structural import trace_function
from reference_impl.subclass_outputs import Outputs, after_slots, is_optional_symint_output
from reference_impl.terms import Attr, Call, Const, Effect, Item, Name, Op, Seq, SliceT, Star, Trace

__all__ = [
    "SYMINT_LAYOUTS",
    "PlainMeta",
    "SubclassMeta",
    "SubclassWrapperForm",
    "SubclassWrapperMeta",
    "SymintLayout",
    "codegen_subclass_wrapper",
    "compile_subclass_wrapper",
    "is_wrapper_subclass",
    "mark_symbolic",
    "run_subclass_wrapper_interpreted",
    "structural_form",
    "subclass_meta_of",
]

PARAMS = ("args",)

SymintLayout = Literal["outer", "per-tensor"]
SYMINT_LAYOUTS: tuple[SymintLayout, ...] = ("outer", "per-tensor")
"""Where the symbolic sizes/strides of a subclass travel.

``"outer"`` (2.12-2.14): only each subclass's own symbolic sizes, then strides, after its
inner tensors, in and out at fixed positions. ``"per-tensor"`` (2.15): every tensor of the
tree, each inner tensor and each subclass, is followed by its own symbolic sizes then
strides on the way in. On the way out an inner tensor's positions are optional (the graph
may return the integer or not: skipped when it holds one and enough outputs remain); a
subclass's own are optional where its outer size (stride) is read back from an inner
tensor, which is so when every inner tensor has the outer size (stride), and required
otherwise, rebuilding the outer size (stride) from them and the static entries.
"""


@dataclass(frozen=True)
class PlainMeta:
    """A plain tensor (or a non-tensor) in a position where a subclass could be; as the
    inner tensor of a subclass, the size and stride dims that were symbolic at compile time."""

    symbolic_size: tuple[int, ...] = ()
    symbolic_stride: tuple[int, ...] = ()

    @property
    def symbolic_count(self) -> int:
        return len(self.symbolic_size) + len(self.symbolic_stride)


@dataclass(frozen=True)
class SubclassMeta:
    """One subclass value: its type, inner attributes (nested), flatten context and outer
    size/stride, where ``None`` marks an entry that was symbolic at compile time."""

    cls: type
    attrs: tuple[tuple[str, Union[PlainMeta, SubclassMeta]], ...]  # noqa: UP007  # runtime-evaluated self reference
    ctx: object = None
    outer_size: tuple[int | None, ...] = ()
    outer_stride: tuple[int | None, ...] = ()
    #: the inner attribute whose size (stride) is the outer one, when every inner tensor's is
    #: (the per-tensor layout reads the outer size back from it)
    size_from: str | None = None
    stride_from: str | None = None

    @property
    def arg_count(self) -> int:
        """Graph values this subclass occupies in the outer layout: inner leaves, then
        symbolic sizes/strides."""
        inner = sum(m.arg_count if isinstance(m, SubclassMeta) else 1 for _, m in self.attrs)
        return inner + self.symbolic_count

    @property
    def symbolic_count(self) -> int:
        return sum(s is None for s in (*self.outer_size, *self.outer_stride))

    def slots(self, layout: SymintLayout) -> list[bool]:
        """The graph positions this subclass occupies, in order: ``True`` for one the graph
        always returns (a tensor, a required symbolic size), ``False`` for an optional one."""
        out: list[bool] = []
        for _, m in self.attrs:
            if isinstance(m, SubclassMeta):
                out += m.slots(layout)
            else:
                out.append(True)
                if layout == "per-tensor":
                    out += [False] * m.symbolic_count
        if layout == "outer":
            return out + [False] * self.symbolic_count
        for entries, source in ((self.outer_size, self.size_from), (self.outer_stride, self.stride_from)):
            out += [source is None] * sum(s is None for s in entries)
        return out


Meta = Union[PlainMeta, SubclassMeta]  # noqa: UP007  # used at runtime in isinstance-free aliases


@dataclass(frozen=True)
class SubclassWrapperMeta:
    """Inputs and outputs of one compiled region, frozen inputs, and (training) the number
    of activations the graph returns after the user outputs."""

    inputs: tuple[Meta, ...]
    outputs: tuple[Meta, ...]
    frozen_inputs: frozenset[int] = frozenset()
    num_saved_activations: int | None = None
    layout: SymintLayout = "outer"


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
    tensors = {n: t for n in names if isinstance(t := getattr(x, n), torch.Tensor)}

    def agreeing(read: Callable[[torch.Tensor], object]) -> str | None:
        first = next(iter(tensors), None)
        return first if first is not None and all(read(t) == read(x) for t in tensors.values()) else None

    return SubclassMeta(type(x), attrs, ctx, size, stride,
                        agreeing(lambda t: tuple(t.size())), agreeing(lambda t: tuple(t.stride())))


def mark_symbolic(
    meta: Meta, symbolic: Mapping[str, tuple[Collection[int], Collection[int]]], path: str = ""
) -> Meta:
    """``meta`` with the size/stride entries that were symbolic at compile time set to
    ``None`` (listed, for an inner plain tensor). ``symbolic`` maps a subclass's attribute
    path (``""`` for the value itself, ``"a"``, ``"a.b"`` for nested ones) to its symbolic
    size dims and stride dims; which
    ones are symbolic is the compiler's choice (dynamic shapes), so the caller supplies it.
    """
    sizes, strides = symbolic.get(path, ((), ()))
    if not isinstance(meta, SubclassMeta):
        return PlainMeta(tuple(sorted(sizes)), tuple(sorted(strides))) if path else meta
    attrs = tuple(
        (name, mark_symbolic(m, symbolic, f"{path}.{name}" if path else name))
        for name, m in meta.attrs
    )
    outer = frozenset(sizes), frozenset(strides)
    # equal values with different symbolic dims are different symbols: the outer size is then
    # not an inner tensor's
    size_same = all(_symbolic_sets(m)[0] == outer[0] for _, m in attrs)
    stride_same = all(_symbolic_sets(m)[1] == outer[1] for _, m in attrs)
    return replace(
        meta,
        attrs=attrs,
        outer_size=tuple(None if d in sizes else s for d, s in enumerate(meta.outer_size)),
        outer_stride=tuple(None if d in strides else s for d, s in enumerate(meta.outer_stride)),
        size_from=meta.size_from if size_same else None,
        stride_from=meta.stride_from if stride_same else None,
    )


def _symbolic_sets(meta: Meta) -> tuple[frozenset[int], frozenset[int]]:
    if isinstance(meta, PlainMeta):
        return frozenset(meta.symbolic_size), frozenset(meta.symbolic_stride)
    dims = _symbolic_dims(meta)
    return frozenset(dims[0]), frozenset(dims[1])


def _sizes(x: Any, sizes: Sequence[int], strides: Sequence[int], out: list[Any]) -> None:
    size, stride = x.size(), x.stride()
    out.extend(size[d] for d in sizes)
    out.extend(stride[d] for d in strides)


def _symbolic_dims(meta: SubclassMeta) -> tuple[list[int], list[int]]:
    return (
        [d for d, s in enumerate(meta.outer_size) if s is None],
        [d for d, s in enumerate(meta.outer_stride) if s is None],
    )


def _flatten(x: Any, meta: SubclassMeta, out: list[Any], layout: SymintLayout) -> None:
    names, _ = x.__tensor_flatten__()
    inner_metas = dict(meta.attrs)
    for name in names:
        inner = getattr(x, name)
        inner_meta = inner_metas.get(name, PlainMeta())
        if isinstance(inner_meta, SubclassMeta):
            _flatten(inner, inner_meta, out, layout)
        else:
            out.append(inner)
            if layout == "per-tensor":
                _sizes(inner, inner_meta.symbolic_size, inner_meta.symbolic_stride, out)
    _sizes(x, *_symbolic_dims(meta), out)


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


def _unflatten_per_tensor(meta: SubclassMeta, outs: Outputs) -> Any:
    inner: dict[str, Any] = {}
    for name, m in meta.attrs:
        if isinstance(m, SubclassMeta):
            inner[name] = _unflatten_per_tensor(m, outs)
        else:
            inner[name] = outs.tensor()
            for _ in range(m.symbolic_count):
                outs.optional()
    size, stride = outs.outer(meta, inner)
    return meta.cls.__tensor_unflatten__(inner, meta.ctx, size, stride)  # type: ignore[attr-defined]  # protocol method


def _slots(outputs: Sequence[Meta], layout: SymintLayout) -> list[bool]:
    return [s for m in outputs for s in (m.slots(layout) if isinstance(m, SubclassMeta) else [True])]


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
            _flatten(x, m, unwrapped, meta.layout)
    unwrapped.extend(args[len(meta.inputs) :])
    args.clear()
    outs = compiled_fn(unwrapped)
    wrapped: list[Any] = []
    saved = meta.num_saved_activations or 0
    if meta.layout == "per-tensor":
        reader = Outputs(outs, _slots(meta.outputs, meta.layout), len(outs) - saved)
        for m in meta.outputs:
            wrapped.append(_unflatten_per_tensor(m, reader) if isinstance(m, SubclassMeta) else reader.tensor())
    pos = 0
    if meta.layout == "outer":
        for m in meta.outputs:
            if isinstance(m, SubclassMeta):
                value, pos = _unflatten(m, outs, pos)
                wrapped.append(value)
            else:
                wrapped.append(outs[pos])
                pos += 1
    if meta.num_saved_activations is None:
        return tuple(wrapped)
    return tuple(wrapped) + tuple(outs[len(outs) - saved :] if meta.layout == "per-tensor" else outs[pos:])


def _attr(var: str, name: str) -> str:
    return f"{var}.{name}" if name.isidentifier() else f"getattr({var}, {name!r})"


def _emit_sizes(b: SourceBuilder, var: str, sizes: Sequence[int], strides: Sequence[int]) -> None:
    for method, dims in (("size", sizes), ("stride", strides)):
        for d in dims:
            b.emit(f"unwrapped_args.append({var}.{method}()[{d}])")


def _emit_unwrap(b: SourceBuilder, meta: SubclassMeta, var: str, layout: SymintLayout) -> None:
    for name, m in meta.attrs:
        if isinstance(m, SubclassMeta):
            inner = b.fresh("_inner")
            b.emit(f"{inner} = {_attr(var, name)}")
            _emit_unwrap(b, m, inner, layout)
        else:
            b.emit(f"unwrapped_args.append({_attr(var, name)})")
            if layout == "per-tensor":
                _emit_sizes(b, _attr(var, name), m.symbolic_size, m.symbolic_stride)
    _emit_sizes(b, var, *_symbolic_dims(meta))


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


class _PerTensorEmitter:
    """Emits the per-tensor layout's reads: `_out_idx` walks the outputs, and each symbolic
    position is skipped when it holds an integer and the outputs left still fit."""

    def __init__(self, b: SourceBuilder, slots: Sequence[bool]) -> None:
        self.b = b
        self.after = after_slots(slots)
        self.slot = 0
        self.is_symint = b.bind("_is_optional_symint_output", is_optional_symint_output)

    def tensor(self, prefix: str) -> str:
        var = self.b.fresh(prefix)
        self.b.emit(f"{var} = unwrapped_outs[_out_idx]")
        self.b.emit("_out_idx += 1")
        self.slot += 1
        return var

    def optional(self) -> None:
        tensors, optional = self.after[self.slot]
        left, include = self.b.fresh("_remaining_outs"), self.b.fresh("_include_symints")
        self.b.emit(f"{left} = _num_wrapped_outs - _out_idx")
        self.b.emit(
            f"{include} = ({left} - 1 >= {tensors} and {left} - 1 <= {tensors + optional})"
            f" and {self.is_symint}(unwrapped_outs[_out_idx])"
        )
        self.b.emit(f"if {include}:")
        self.b.emit("_out_idx += 1", 2)
        self.slot += 1

    def wrap(self, meta: SubclassMeta) -> str:
        entries = []
        for name, m in meta.attrs:
            if isinstance(m, SubclassMeta):
                entries.append((name, self.wrap(m)))
            else:
                entries.append((name, self.tensor("_out_attr")))
                for _ in range(m.symbolic_count):
                    self.optional()
        inner = self.b.fresh("_out_inner")
        self.b.emit(f"{inner} = {{{', '.join(f'{n!r}: {v}' for n, v in entries)}}}")
        named = dict(entries)
        outer = []
        for values, source, read in ((meta.outer_size, meta.size_from, "size"),
                                     (meta.outer_stride, meta.stride_from, "stride")):
            if source is not None:
                for _ in range(sum(s is None for s in values)):
                    self.optional()
                outer.append(f"{named[source]}.{read}()")
            else:
                parts = [self.tensor("_out_sym") if s is None else repr(s) for s in values]
                outer.append(f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})")
        cls = self.b.bind("_subclass_type", meta.cls)
        ctx = self.b.bind("_meta", meta.ctx)
        result = self.b.fresh("_out")
        self.b.emit(f"{result} = {cls}.__tensor_unflatten__({inner}, {ctx}, {outer[0]}, {outer[1]})")
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
            _emit_unwrap(b, m, var, meta.layout)
    b.globals["_type_error_"] = _type_error
    b.emit(f"unwrapped_args.extend(args[{len(meta.inputs)}:])")
    b.emit("args.clear()")
    b.emit("unwrapped_outs = compiled_fn(unwrapped_args)")
    results = []
    saved = meta.num_saved_activations
    if meta.layout == "per-tensor":
        b.emit("_out_idx = 0")
        b.emit(f"_num_wrapped_outs = len(unwrapped_outs){f' - {saved}' if saved else ''}")
        emitter = _PerTensorEmitter(b, _slots(meta.outputs, meta.layout))
        for m in meta.outputs:
            results.append(emitter.wrap(m) if isinstance(m, SubclassMeta) else emitter.tensor("_out_plain"))
        rest = f"len(unwrapped_outs) - {saved}"
    else:
        pos = [0]
        for m in meta.outputs:
            if isinstance(m, SubclassMeta):
                results.append(_emit_wrap(b, m, pos, "unwrapped_outs"))
            else:
                results.append(f"unwrapped_outs[{pos[0]}]")
                pos[0] += 1
        rest = str(pos[0])
    tup = f"({', '.join(results)},)" if results else "()"
    if saved is not None:
        b.emit(f"return {tup} + tuple(unwrapped_outs[{rest}:])")
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


def _passed_through(args: Seq) -> Seq:
    """``[..., args[k], *args[k + 1:]]`` is ``[..., *args[k:]]``: a trailing plain input the
    build's metadata names (a tensorified float, say) is passed through all the same."""
    items = list(args.items)
    while len(items) >= 2:
        star, last = items[-1], items[-2]
        if not (isinstance(star, Star) and isinstance(star.value, Item) and isinstance(star.value.index, SliceT)):
            break
        lower, base = star.value.index.lower, star.value.base
        if not (
            star.value.index.upper is None
            and isinstance(lower, Const)
            and isinstance(lower.value, int)
            and last == Item(base, Const(lower.value - 1))
        ):
            break
        items[-2:] = [Star(Item(base, SliceT(Const(lower.value - 1), None)))]
    return Seq(args.kind, tuple(items))


def _normalised(effect: Effect) -> Effect:
    term = effect.term
    if isinstance(term, Call) and len(term.args) == 1 and isinstance(term.args[0], Seq):
        return Effect(effect.kind, Call(term.func, (_passed_through(term.args[0]),), term.kwargs), effect.guards)
    return effect


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
        lines.append(_erase_geometry(_normalised(e)))
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
