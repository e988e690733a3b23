"""The observation of a program, re-expressed in the terms of one compiled region.

Note [Program terms and region terms]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
:func:`observe` describes the *program*: argument ``k`` is input ``k``, output ``j`` is the
``j``-th returned value. A compiler cuts out a *region* whose signature differs: dynamo
orders graph inputs by first use, inserts symbolic sizes and tensorified floats, lifts
module parameters in front, and returns from the graph only the values it computed
(an input returned unchanged is handed back by the frame, not the graph). Generated code
indexes the region's values, so before the reference generates anything the observation
is re-expressed in region terms by :func:`region`: each region input is an argument, a
named attribute (a module parameter) or nothing the program sees (a size, a lifted
constant); each region output is a program output or nothing the program returns. The
classification (how each input was mutated, how each output aliases) is re-done over the
region's values with the same rules, because an output's relation is to the region's
inputs and the region's other outputs. Which values form the region is the compiler's
choice; the caller supplies it (the runner reads it from the graph it compiled).

The output relation follows the published AOTAutograd rules, since they decide what the
generated code must regenerate: an output sharing storage with an input is that input
(identity) or an alias of it, unless it and every other output on that storage are
differentiable pieces of multi-output views (``unbind``, ``split``, ``chunk``); an output
that is a view of an intermediate is regenerated from a base only when both require grad
and another output (not a multi-output piece) aliases the same storage (a lone view is
returned as it is, "unsafe view"); ``(out, out.detach())`` regenerates the detached one
from its twin; everything else is plain. A returned structure counts by its leaves. Wrapper subclasses have no storage
of their own: their relation is read from ``_base`` and from their inner tensors' storage.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch

from reference_impl.observe import (
    InputObservation,
    Observation,
    OutputObservation,
    predict_trace_joint,
    relate_outputs,
)
from reference_impl.runtime_wrapper import AliasKind, ViewSpec
from reference_impl.subclass_wrapper import Meta, PlainMeta, is_wrapper_subclass

__all__ = ["Geometry", "UnseenAlias", "region", "synthetic_bases"]


# A region output the program does not see, described by the input it aliases: that input's
# region slot and, for a view, its (size, stride, storage offset); ``None``: the input itself.
Geometry = tuple[tuple[int, ...], tuple[int, ...], int]
UnseenAlias = tuple[int, Geometry | None]


def region(
    obs: Observation,
    inputs: Sequence[int | str | None],
    outputs: Sequence[int | None] | None = None,
    *,
    unseen_inputs: Mapping[int, Meta] | None = None,
    unseen_outputs: Mapping[int, UnseenAlias] | None = None,
) -> Observation:
    """The observation in the terms of one compiled region (Note [Program terms and region
    terms]).

    ``inputs``: per region input, the argument index, the attribute name, or ``None`` for a
    value the program does not see (a symbolic size, a lifted constant, a tensorified
    float). ``outputs``: per region output, the program output index or ``None``; ``None``
    for the whole means the region returns exactly the program's outputs.
    ``unseen_inputs``: the subclass structure of region inputs the program does not see (an
    inner tensor of a subclass argument, a parameter lifted by its attribute path); plain
    otherwise. ``unseen_outputs``: region outputs the program does not see that alias a
    region input (a buffer the program reassigned, handed back to the frame), so that they
    are classified like any other alias of an input.
    """
    named = {a.name: a for a in obs.attributes}
    slot_inputs: list[InputObservation | None] = []
    slot_values: list[Any] = []
    slot_subclasses: list[Meta] = []
    for slot, ref in enumerate(inputs):
        inp: InputObservation | None = None
        value: Any = None
        meta: Meta = PlainMeta()
        if isinstance(ref, str):
            if ref not in named:
                raise KeyError(f"region input {slot}: no attribute {ref!r} was observed")
            inp, value, meta = named[ref].input, named[ref].value, named[ref].subclass
        elif ref is not None:
            if not 0 <= ref < len(obs.inputs):
                raise IndexError(f"region input {slot}: the program has no argument {ref}")
            inp, value, meta = obs.inputs[ref], obs.raw_args[ref], obs.input_subclasses[ref]
        if ref is None and unseen_inputs and slot in unseen_inputs:
            meta = unseen_inputs[slot]
        slot_inputs.append(None if inp is None else replace(inp, index=slot))
        slot_values.append(value)
        slot_subclasses.append(meta)
    if outputs is None:
        outs = obs.raw_outputs
    else:
        for ref in outputs:
            if ref is not None and not 0 <= ref < len(obs.raw_outputs):
                raise IndexError(f"region output: the program has no output {ref}")
        aliases = unseen_outputs or {}
        outs = tuple(
            obs.raw_outputs[ref] if ref is not None
            else _alias_value(slot_values, aliases[j]) if j in aliases else None
            for j, ref in enumerate(outputs)
        )
    origins = None
    if obs.output_origins is not None:
        program_outputs = range(len(obs.raw_outputs)) if outputs is None else outputs
        origins = [
            None if ref is None or ref >= len(obs.output_origins)
            else frozenset(k for k, r in enumerate(inputs) if isinstance(r, int) and r in obs.output_origins[ref])
            for ref in program_outputs
        ]
    rel, n_bases = relate_outputs(slot_values, outs, origins)
    if outputs is not None and unseen_outputs:
        rel = tuple(_alias_of_unseen(o, outs[j], unseen_outputs.get(j), inputs) for j, o in enumerate(rel))
    return Observation(
        tuple(slot_inputs),
        rel,
        n_bases,
        obs.grad_enabled_before,
        obs.grad_enabled_after,
        predict_trace_joint(slot_inputs, rel),
        tuple(slot_subclasses),
        obs.saved_plain_tensors,
        outs,
        tuple(slot_values),
        obs.attributes,
        obs.view_bases,
    )


def _alias_of_unseen(
    out: OutputObservation, value: Any, alias: UnseenAlias | None, inputs: Sequence[int | str | None]
) -> OutputObservation:
    """A program output the region computes from an input the program does not see (a loss
    handed from the region before a graph break, returned detached) is, in region terms, an
    alias of that input: the observation of the program cannot relate the two."""
    if alias is None or out.kind is not AliasKind.PLAIN or not isinstance(value, torch.Tensor):
        return out
    slot, geometry = alias
    if not 0 <= slot < len(inputs) or inputs[slot] is not None:
        return out
    if geometry is None:
        return replace(out, kind=AliasKind.IS_INPUT, base_index=slot)
    return replace(out, kind=AliasKind.ALIAS_OF_INPUT, base_index=slot, view=ViewSpec(*geometry))


def _alias_value(values: Sequence[Any], alias: UnseenAlias) -> Any:
    """The value an unseen output stands for: the input itself or a view of it with the
    output's geometry (``None`` when that input was not observed or has no such view)."""
    slot, geometry = alias
    base = values[slot] if 0 <= slot < len(values) else None
    if not isinstance(base, torch.Tensor) or is_wrapper_subclass(base):
        return None
    if geometry is None:
        return base
    size, stride, offset = geometry
    try:
        return base.as_strided(size, stride, offset)
    except RuntimeError:
        return None


def _elements(geometry: tuple[tuple[int, ...], tuple[int, ...], int]) -> set[int]:
    """Storage element indices a tensor of this geometry covers."""
    size, stride, offset = geometry
    if 0 in size:
        return set()
    extent = offset + 1 + sum((n - 1) * st for n, st in zip(size, stride, strict=True))
    return set(torch.as_strided(torch.arange(extent), size, stride, offset).flatten().tolist())


def _storage_groups(
    obs: Observation, tensor_slots: Collection[int]
) -> tuple[list[list[int]], list[int]]:
    """Region inputs grouped by storage (first appearance order), and the non-tensor ones."""
    groups: dict[object, list[int]] = {}
    non_tensors: list[int] = []
    for slot, value in enumerate(obs.raw_args):
        inp = obs.inputs[slot] if slot < len(obs.inputs) else None
        if isinstance(value, torch.Tensor) and inp is not None and not is_wrapper_subclass(value):
            key: object = ("storage", inp.before.storage_ptr) if inp.before.storage_ptr else slot
            groups.setdefault(key, []).append(slot)
        elif isinstance(value, torch.Tensor) or slot in tensor_slots:
            groups.setdefault(slot, []).append(slot)
        else:
            non_tensors.append(slot)
    return list(groups.values()), non_tensors


def _synthetic_base(obs: Observation, members: Sequence[int]) -> tuple[InputObservation, Any] | None:
    """The base AOTAutograd passes for ``members`` (aliased region inputs), when it must."""
    inputs = [obs.inputs[s] for s in members]
    if len(members) < 2 or not any(i is not None and i.mutates_data for i in inputs):
        return None
    cover = [_elements(i.before.geometry) for i in inputs if i is not None]
    if not any(a & b for k, a in enumerate(cover) for b in cover[k + 1 :]):
        return None  # views of one storage that do not overlap: no base needed
    named = {id(b.value): b for b in (*obs.view_bases, *obs.attributes)}
    bases = [obs.raw_args[s]._base for s in members if obs.raw_args[s]._base is not None]
    # The views' common base (one of the inputs when it is their root). Inputs that share a
    # storage without being views (through set_) get the storage itself as base; the first
    # of them stands for it here (for how it was mutated, not for its geometry).
    base = bases[0] if bases else obs.raw_args[members[0]]
    among = [s for s in members if obs.raw_args[s] is base]
    if among and (inp := obs.inputs[among[0]]) is not None:
        return inp, base
    if id(base) in named:
        return named[id(base)].input, base
    return None  # a base we did not observe: the region is left as it is


def synthetic_bases(
    obs: Observation, tensor_slots: Collection[int] = ()
) -> tuple[Observation, tuple[int | None, ...]]:
    """AOTAutograd's synthetic bases, in region terms (see Note [Program terms and region
    terms]): region inputs that overlap in memory, one of them with its values mutated,
    are replaced by one input, their common ``_base`` (the root when one of them is it),
    and the region's inputs are reordered: the bases first, then the non-tensor inputs,
    then the tensor inputs grouped by storage. Returns the observation in the new terms
    and, per new input, the old one it is (``None``: a synthetic base).

    ``tensor_slots``: inputs known to be tensors although their value was not observed (a
    tensorified float); an input without a value is otherwise taken for a non-tensor.
    """
    unchanged = (obs, tuple(range(len(obs.inputs))))
    if not any(i is not None and i.mutates_data for i in obs.inputs):
        return unchanged
    groups, others = _storage_groups(obs, tensor_slots)
    merged: list[tuple[InputObservation, Any]] = []
    reshaped: list[tuple[int, int]] = []  # (member, its base's new index)
    for members in groups:
        found = _synthetic_base(obs, members)
        if found is None:
            others.extend(members)
        else:
            reshaped.extend((s, len(merged)) for s in members if (i := obs.inputs[s]) and i.mutates_metadata)
            merged.append(found)
    if not merged:
        return unchanged
    new_inputs: list[InputObservation | None] = [replace(b, index=k) for k, (b, _) in enumerate(merged)]
    values: list[Any] = [v for _, v in merged]
    subclasses: list[Meta] = [PlainMeta() for _ in merged]
    for k, old in enumerate(others, start=len(merged)):
        inp = obs.inputs[old]
        new_inputs.append(None if inp is None else replace(inp, index=k))
        values.append(obs.raw_args[old])
        subclasses.append(obs.input_subclasses[old])
    rel, n_bases = relate_outputs(values, obs.raw_outputs)
    # A member whose geometry changed is returned as an extra output viewing its base, from
    # which the wrapper reapplies the geometry to the caller's tensor (merging it into the
    # base alone would lose it).
    rel = (*rel, *(
        OutputObservation(len(rel) + n, AliasKind.ALIAS_OF_INPUT, k, obs.raw_args[s].requires_grad,
                          ViewSpec.of(obs.raw_args[s]), PlainMeta())
        for n, (s, k) in enumerate(sorted(reshaped))
    ))
    merged_obs = replace(
        obs,
        inputs=tuple(new_inputs),
        outputs=rel,
        num_intermediate_bases=n_bases,
        trace_joint=predict_trace_joint(new_inputs, rel),
        input_subclasses=tuple(subclasses),
        raw_args=tuple(values),
    )
    return merged_obs, (*(None for _ in merged), *others)
