"""Behaviour ``mutation_epilogue`` (upstream #179600): putting mutated inputs back.

A compiled graph is functional: where the program mutated an input, the graph returns the
*updated* value as an extra output, and a runtime epilogue makes the caller's tensor match
eager again. Which operation that takes depends only on how the input was mutated:

==========================  ===========================================================
mutation seen in eager      epilogue operation on the caller's tensor ``orig``
==========================  ===========================================================
values only                 ``orig.copy_(updated)``; for a leaf that requires grad (only
                            possible when every mutation was hidden from autograd, e.g.
                            under ``no_grad``) ``orig.detach().copy_(updated)``, decided by
                            ``orig.requires_grad`` at call time
size/stride/offset only     ``orig.as_strided_(u.size(), u.stride(), u.storage_offset())``
values and metadata         ``as_strided_`` as above, then the value copy as above
storage swapped (``set_``)  ``orig.set_(u)`` under ``torch.no_grad()``; nothing else
==========================  ===========================================================

In a training graph (``trace_joint``) metadata and storage updates arrive wrapped in an
alias marker so autograd does not see them as outputs; they are unwrapped first
(:func:`unwrap_alias`). Mutations the graph keeps for itself (``in_graph``) are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from reference_impl._source import SourceBuilder, exec_function
from reference_impl.structural import trace_function
from reference_impl.terms import Const, Item, Name, Term, Trace

__all__ = [
    "InputMutation",
    "MutationEpilogueForm",
    "MutationEpilogueMeta",
    "OutputAlias",
    "apply_mutations_interpreted",
    "codegen_mutation_epilogue",
    "compile_mutation_epilogue",
    "structural_form",
    "unwrap_alias",
]

PARAMS = ("orig_inputs", "updated_inputs")


@dataclass(frozen=True)
class OutputAlias:
    """Marks a graph output that is an alias whose metadata, not values, matters."""

    alias: torch.Tensor


def unwrap_alias(x: object) -> torch.Tensor:
    """The tensor inside an :class:`OutputAlias`; anything else is a contract violation."""
    if isinstance(x, OutputAlias):
        return x.alias
    raise TypeError(f"expected an OutputAlias around the updated input, got {type(x).__name__}")


@dataclass(frozen=True)
class InputMutation:
    """How one input was mutated, as observed on an eager run.

    ``hidden_from_autograd`` means every mutation happened under ``no_grad`` or through a
    detached alias. ``in_graph`` means the compiled graph applies the mutation itself, so
    the epilogue must not (a compiler placement decision, see :mod:`reference_impl.observe`).
    """

    index: int
    mutates_data: bool = False
    mutates_metadata: bool = False
    mutates_storage: bool = False
    is_leaf: bool = True
    requires_grad: bool = False
    hidden_from_autograd: bool = False
    in_graph: bool = False

    @property
    def mutated(self) -> bool:
        return self.mutates_data or self.mutates_metadata or self.mutates_storage


@dataclass(frozen=True)
class MutationEpilogueMeta:
    """The mutated inputs of one compiled region, and whether it is a training graph."""

    inputs: tuple[InputMutation, ...]
    trace_joint: bool = False

    def __post_init__(self) -> None:
        indices = [m.index for m in self.inputs]
        if len(set(indices)) != len(indices):
            raise ValueError(f"duplicate input indices in mutation metadata: {indices}")

    @property
    def runtime_mutations(self) -> tuple[InputMutation, ...]:
        """Mutations the epilogue applies, in input order; position = updated slot."""
        return tuple(
            sorted((m for m in self.inputs if m.mutated and not m.in_graph), key=lambda m: m.index)
        )


def apply_mutations_interpreted(
    meta: MutationEpilogueMeta,
    orig_inputs: Mapping[int, Any],
    updated_inputs: Sequence[Any],
) -> None:
    """The data-driven loop the codegen replaced: branch on the metadata for every input."""
    for slot, m in enumerate(meta.runtime_mutations):
        orig = orig_inputs[m.index]
        updated = updated_inputs[slot]
        if m.mutates_storage:
            if meta.trace_joint:
                updated = unwrap_alias(updated)
            with torch.no_grad():
                orig.set_(updated)
            continue
        if m.mutates_metadata and not m.mutates_data:
            if meta.trace_joint:
                updated = unwrap_alias(updated)
            orig.as_strided_(updated.size(), updated.stride(), updated.storage_offset())
            continue
        if m.mutates_metadata:
            orig.as_strided_(updated.size(), updated.stride(), updated.storage_offset())
        if m.is_leaf and orig.requires_grad:
            orig.detach().copy_(updated)
        else:
            orig.copy_(updated)


def codegen_mutation_epilogue(meta: MutationEpilogueMeta) -> tuple[str, dict[str, object]]:
    """Straight-line ``_apply_mutations(orig_inputs, updated_inputs)``: one group per input."""
    b = SourceBuilder()
    b.globals.update({"torch": torch, "_unwrap_tensoralias": unwrap_alias})
    b.emit("def _apply_mutations(orig_inputs, updated_inputs):", indent=0)
    for slot, m in enumerate(meta.runtime_mutations):
        oi, ui = f"orig_inputs[{m.index}]", f"updated_inputs[{slot}]"
        if m.mutates_storage or (m.mutates_metadata and not m.mutates_data):
            u = f"_u{slot}"
            b.emit(f"{u} = _unwrap_tensoralias({ui})" if meta.trace_joint else f"{u} = {ui}")
            if m.mutates_storage:
                b.emit(f"with torch.no_grad(): {oi}.set_({u})")
            else:
                b.emit(f"{oi}.as_strided_({u}.size(), {u}.stride(), {u}.storage_offset())")
            continue
        if m.mutates_metadata:
            b.emit(f"{oi}.as_strided_({ui}.size(), {ui}.stride(), {ui}.storage_offset())")
        if m.is_leaf:
            b.emit(f"if {oi}.requires_grad: {oi}.detach().copy_({ui})")
            b.emit(f"else: {oi}.copy_({ui})")
        else:
            b.emit(f"{oi}.copy_({ui})")
    if len(b.lines) == 1:
        b.emit("pass")
    return b.source(), b.globals


def compile_mutation_epilogue(meta: MutationEpilogueMeta) -> Callable[[Any, Any], None]:
    """Exec the generated source; the returned function has the interpreted signature."""
    source, globals_ = codegen_mutation_epilogue(meta)
    return exec_function(
        source, globals_, "_apply_mutations", filename="<reference_impl:mutation_epilogue>"
    )


@dataclass(frozen=True)
class MutationEpilogueForm:
    """Per original-input slot, the ordered effects applied to it (see Note [Structural form]).

    Slot ``None`` collects effects that touch no input (a ``raise``, an unknown call): they
    are kept so that an extra statement is a difference, never silently dropped.
    """

    groups: tuple[tuple[int | None, tuple[str, ...]], ...]

    @property
    def slots(self) -> tuple[int, ...]:
        return tuple(s for s, _ in self.groups if s is not None)

    def describe(self) -> list[str]:
        out: list[str] = []
        for slot, effects in self.groups:
            head = "no input" if slot is None else f"input {slot}"
            out.extend(f"{head}: {e}" for e in effects)
        return out or ["(no mutations applied)"]


def _orig_slot(term: Term) -> int | None:
    """The ``orig_inputs[k]`` a call's receiver chain is rooted at."""
    node: Any = term
    while True:
        if isinstance(node, Item) and node.base == Name("orig_inputs"):
            idx = getattr(node.index, "value", None)
            return idx if isinstance(idx, int) else None
        nxt = getattr(node, "func", None) or getattr(node, "base", None)
        if nxt is None:
            return None
        node = nxt


def form_from_trace(trace: Trace) -> MutationEpilogueForm:
    groups: dict[int | None, list[str]] = {}
    for effect in trace.effects:
        if effect.kind == "return" and effect.term == Const(None):
            continue
        slot = _orig_slot(effect.term) if effect.kind in ("call", "setitem") else None
        groups.setdefault(slot, []).append(effect.describe())
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
    return MutationEpilogueForm(tuple((k, tuple(v)) for k, v in ordered))


def structural_form(source: str) -> MutationEpilogueForm:
    """Reduce any build's (or our) ``_apply_mutations`` source to its structural form."""
    return form_from_trace(trace_function(source, PARAMS))
