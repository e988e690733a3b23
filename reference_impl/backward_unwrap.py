"""Behaviour ``backward_unwrap`` (upstream #178927): the backward prologue's saved arguments.

Before the compiled backward runs, its non-tangent arguments (saved tensors, symints,
opaque objects) must be plain: any tensor subclass among them is flattened into its inner
tensors. Under AOT dispatch the compiled forward already ran on unwrapped inner tensors,
so every saved argument is plain and the correct unwrap is the identity, ``list(args)``:
O(1) per backward call instead of an ``isinstance`` check per argument. Only if metadata
declares a subclass among the saved arguments does the unwrap do work, slot by slot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Union

from reference_impl._source import SourceBuilder, exec_function
from reference_impl.structural import trace_function
from reference_impl.subclass_wrapper import SubclassMeta, is_wrapper_subclass
from reference_impl.terms import Trace

__all__ = [
    "BackwardUnwrapForm",
    "BackwardUnwrapMeta",
    "SavedKind",
    "codegen_backward_unwrap",
    "compile_backward_unwrap",
    "structural_form",
    "unwrap_interpreted",
]

PARAMS = ("args",)


class SavedKind(str, Enum):
    TENSOR = "tensor"
    SYMINT = "symint"
    OPAQUE = "opaque"


Saved = Union[SavedKind, SubclassMeta]  # noqa: UP007  # a runtime alias


@dataclass(frozen=True)
class BackwardUnwrapMeta:
    """The kind of every non-tangent backward argument, in order."""

    saved: tuple[Saved, ...]

    @property
    def all_plain(self) -> bool:
        return all(isinstance(s, SavedKind) for s in self.saved)


def _plain_leaves(x: Any, out: list[Any]) -> None:
    names, _ = x.__tensor_flatten__()
    for name in names:
        inner = getattr(x, name)
        if is_wrapper_subclass(inner):
            _plain_leaves(inner, out)
        else:
            out.append(inner)


def unwrap_interpreted(args: Sequence[Any]) -> list[Any]:
    """The per-argument loop the codegen replaced: flatten any subclass, keep the rest."""
    out: list[Any] = []
    for a in args:
        if is_wrapper_subclass(a):
            _plain_leaves(a, out)
        else:
            out.append(a)
    return out


def _emit_leaves(b: SourceBuilder, meta: SubclassMeta, expr: str) -> None:
    for name, m in meta.attrs:
        inner = f"{expr}.{name}" if name.isidentifier() else f"getattr({expr}, {name!r})"
        if isinstance(m, SubclassMeta):
            _emit_leaves(b, m, inner)
        else:
            b.emit(f"out.append({inner})")


def codegen_backward_unwrap(meta: BackwardUnwrapMeta) -> tuple[str, dict[str, object]]:
    """``unwrap_fn(args)``: the identity when every saved argument is plain."""
    b = SourceBuilder()
    b.emit("def unwrap_fn(args):", 0)
    if meta.all_plain:
        b.emit("return list(args)")
        return b.source(), b.globals
    b.emit("out = []")
    for i, s in enumerate(meta.saved):
        if isinstance(s, SubclassMeta):
            _emit_leaves(b, s, f"args[{i}]")
        else:
            b.emit(f"out.append(args[{i}])")
    b.emit(f"out.extend(args[{len(meta.saved)}:])")
    b.emit("return out")
    return b.source(), b.globals


def compile_backward_unwrap(meta: BackwardUnwrapMeta) -> Callable[[Sequence[Any]], list[Any]]:
    source, globals_ = codegen_backward_unwrap(meta)
    return exec_function(source, globals_, "unwrap_fn", filename="<reference_impl:backward_unwrap>")


@dataclass(frozen=True)
class BackwardUnwrapForm:
    """What ``unwrap_fn`` returns (and any other effect). Identity is ``return list(args)``."""

    effects: tuple[str, ...]

    @property
    def is_identity(self) -> bool:
        return self.effects == ("return list(args)",)

    def describe(self) -> list[str]:
        return list(self.effects)


def form_from_trace(trace: Trace) -> BackwardUnwrapForm:
    return BackwardUnwrapForm(tuple(e.describe() for e in trace.effects))


def structural_form(source: str) -> BackwardUnwrapForm:
    """Reduce any build's (or our) ``unwrap_fn`` source to its structural form."""
    return form_from_trace(trace_function(source, PARAMS))
