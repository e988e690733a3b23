"""The metadata oracle: derive every behaviour's metadata by watching an eager run.

Note [Observed, not asked]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The reference never asks torch's compiler what it decided. It snapshots each input before
and after an eager call (values, size/stride/offset, storage pointer, ``_version``, grad
requirements, ``grad_fn``), relates each output to the inputs and intermediates (identity,
storage sharing, ``_base``), watches grad mode, flattens tensor subclasses through the
public ``__tensor_flatten__`` protocol and counts saved tensors through the public
``saved_tensors_hooks``. From that it classifies (:func:`observe`) and builds each
behaviour's metadata (``*_meta`` functions). Two facts are compiler *placement* choices
rather than contracts (whether a mutation stays inside the graph; whether the graph is a
training graph): they are predicted with the published rule and can be overridden by the
caller, e.g. the probe reads them from the build's own runtime wrapper.

:func:`verify_mutation_meta` closes the loop: it replays a metadata through the reference
epilogue on fresh inputs and reports where the result differs from eager, so a wrong
classification is caught rather than trusted.

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

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from reference_impl.backward_unwrap import BackwardUnwrapMeta, SavedKind
from reference_impl.mutation_epilogue import (
    InputMutation,
    MutationEpilogueMeta,
    OutputAlias,
    apply_mutations_interpreted,
)
from reference_impl.runtime_wrapper import (
    AliasKind,
    OutputSpec,
    RuntimeWrapperMeta,
    ViewSpec,
    replay_aliases_interpreted,
)
from reference_impl.scalar_tensorify import (
    ScalarProgramMeta,
    analyze_float_uses,
    float_params_of,
)
from reference_impl.subclass_wrapper import (
    Meta,
    PlainMeta,
    SubclassMeta,
    SubclassWrapperMeta,
    is_wrapper_subclass,
    subclass_meta_of,
)

__all__ = [
    "AttributeObservation",
    "InputObservation",
    "Observation",
    "OutputObservation",
    "TensorState",
    "backward_unwrap_meta",
    "mutation_meta",
    "observe",
    "predict_in_graph",
    "predict_trace_joint",
    "region",
    "runtime_wrapper_meta",
    "scalar_meta",
    "snapshot",
    "subclass_wrapper_meta",
    "synthetic_bases",
    "verify_mutation_meta",
    "verify_output_meta",
]


def _storage_ptr(t: torch.Tensor) -> int:
    """Data pointer of the storage; -1 for wrapper subclasses, which have none."""
    if is_wrapper_subclass(t):
        return -1
    return int(t.untyped_storage().data_ptr())


def _storages(t: torch.Tensor) -> frozenset[int]:
    """Storage pointers holding ``t``'s values: its own, or its inner tensors' for a wrapper
    subclass (which has no storage). Empty tensors hold nothing and share nothing."""
    return frozenset(
        p for leaf in _leaves(t) if leaf.numel() and (p := int(leaf.untyped_storage().data_ptr()))
    )


def _leaves(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The plain tensors holding ``t``'s values (``t`` itself unless a wrapper subclass)."""
    if not is_wrapper_subclass(t):
        return (t.detach(),)
    names, _ = t.__tensor_flatten__()  # type: ignore[attr-defined]  # protocol method
    return tuple(leaf for n in names for leaf in _leaves(getattr(t, n)))


@dataclass(frozen=True)
class TensorState:
    """What an input looks like at one moment. ``values`` are read at this geometry."""

    type_name: str
    dtype: torch.dtype
    size: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int
    storage_ptr: int
    version: int
    requires_grad: bool
    is_leaf: bool
    grad_fn: object = field(compare=False, repr=False)
    values: tuple[torch.Tensor, ...] = field(compare=False, repr=False)
    storages: frozenset[int] = field(default=frozenset(), compare=False, repr=False)

    @property
    def geometry(self) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        return self.size, self.stride, self.storage_offset


def snapshot(t: torch.Tensor) -> TensorState:
    """Record a tensor's observable state (values are cloned, detached)."""
    return TensorState(
        type_name=type(t).__name__,
        dtype=t.dtype,
        size=tuple(t.size()),
        stride=tuple(t.stride()),
        storage_offset=int(t.storage_offset()),
        storage_ptr=_storage_ptr(t),
        version=t._version,
        requires_grad=t.requires_grad,
        is_leaf=t.is_leaf,
        grad_fn=t.grad_fn,
        values=tuple(v.clone() for v in _leaves(t)),
        storages=_storages(t),
    )


def _same_values(xs: Sequence[torch.Tensor], ys: Sequence[torch.Tensor]) -> bool:
    return len(xs) == len(ys) and all(_same(a, b) for a, b in zip(xs, ys, strict=True))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.equal(a.isnan(), b.isnan())) and bool(
            torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
        )
    return bool(torch.equal(a, b))


@dataclass(frozen=True)
class InputObservation:
    """One tensor input, before and after, and how the call mutated it."""

    index: int
    before: TensorState
    after: TensorState
    mutates_data: bool
    mutates_metadata: bool
    mutates_storage: bool
    hidden_from_autograd: bool
    under_no_grad: bool = False

    @property
    def mutated(self) -> bool:
        return self.mutates_data or self.mutates_metadata or self.mutates_storage


class _InPlaceLog(TorchFunctionMode):
    """Records, for every in-place call (``x.mul_``, ``out=``), which storages it wrote and
    whether grad mode was on: a mutation made with grad mode off is one autograd never saw."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[frozenset[int], bool]] = []

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        target = kwargs.get("out")
        if target is None and name.endswith("_") and not name.startswith("__") and args:
            target = args[0]
        if isinstance(target, torch.Tensor):
            self.writes.append((_storages(target), torch.is_grad_enabled()))
        return func(*args, **kwargs)

    def under_no_grad(self, storages: frozenset[int]) -> bool | None:
        """Were all writes into ``storages`` made with grad mode off? ``None``: none seen."""
        modes = [grad for written, grad in self.writes if written & storages]
        return None if not modes else not any(modes)


def _classify_input(
    index: int, t: torch.Tensor, before: TensorState, log: _InPlaceLog, grad_always_off: bool
) -> InputObservation:
    after = snapshot(t)
    storage = after.storage_ptr != before.storage_ptr
    metadata = after.geometry != before.geometry
    data = False
    if not storage:
        if metadata:
            # Read the storage at the old geometry: did the bytes under it change?
            old_view = t.detach().as_strided(*before.geometry)
            data = not _same_values((old_view,), before.values)
        else:
            data = not _same_values(after.values, before.values) or (
                after.version != before.version
            )
    hidden = data and before.requires_grad and (before.is_leaf or after.grad_fn is before.grad_fn)
    seen = log.under_no_grad(before.storages)
    no_grad = data and (grad_always_off if seen is None else seen)
    return InputObservation(
        index, before, after, data, metadata and not storage, storage, hidden, no_grad
    )


@dataclass(frozen=True)
class OutputObservation:
    """One output and its relation to the inputs and intermediates of the call."""

    index: int
    kind: AliasKind
    base_index: int | None
    requires_grad: bool
    view: ViewSpec | None
    subclass: Meta


@dataclass(frozen=True)
class AttributeObservation:
    """A tensor the program reaches through an argument (a module's parameter or buffer):
    not an argument itself, but a compiler may make it an input of the compiled region."""

    name: str
    input: InputObservation
    subclass: Meta
    value: Any = field(compare=False, repr=False)


@dataclass(frozen=True)
class Observation:
    """Everything the reference derives its metadata from (see Note [Observed, not asked]).

    In program terms after :func:`observe`, in region terms after :func:`region` (Note
    [Program terms and region terms]).
    """

    inputs: tuple[InputObservation | None, ...]
    outputs: tuple[OutputObservation, ...]
    num_intermediate_bases: int
    grad_enabled_before: bool
    grad_enabled_after: bool
    trace_joint: bool
    input_subclasses: tuple[Meta, ...]
    saved_plain_tensors: int | None
    raw_outputs: tuple[Any, ...] = field(compare=False, repr=False)
    raw_args: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    attributes: tuple[AttributeObservation, ...] = ()
    view_bases: tuple[AttributeObservation, ...] = ()

    @property
    def mutated_inputs(self) -> tuple[InputObservation, ...]:
        return tuple(i for i in self.inputs if i is not None and i.mutated)


def _flatten_outputs(out: object) -> tuple[Any, ...]:
    """The leaves of a returned structure (tuples, lists, dict values, in order): what a
    compiled region returns, one value per leaf."""
    if isinstance(out, tuple | list):
        return tuple(leaf for item in out for leaf in _flatten_outputs(item))
    if isinstance(out, dict):
        return tuple(leaf for item in out.values() for leaf in _flatten_outputs(item))
    return (out,)


# Autograd's node for each output of a multi-output view op (unbind, split, chunk).
_MULTI_OUTPUT_VIEWS = frozenset({"UnbindBackward0", "SplitBackward0", "SplitWithSizesBackward0"})


def _multi_output_view(t: object) -> bool:
    return isinstance(t, torch.Tensor) and type(t.grad_fn).__name__ in _MULTI_OUTPUT_VIEWS


def _same_metadata(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (
        type(a) is type(b)
        and a.dtype == b.dtype
        and a.size() == b.size()
        and a.stride() == b.stride()
        and a.storage_offset() == b.storage_offset()
    )


def _relate_outputs(
    inputs: Sequence[object], outs: Sequence[object]
) -> tuple[tuple[OutputObservation, ...], int]:
    """Classify each output against ``inputs`` and the other outputs (see the Note)."""
    tensors = {i: a for i, a in enumerate(inputs) if isinstance(a, torch.Tensor)}
    in_storages = {i: _storages(a) for i, a in tensors.items()}
    out_storages = [_storages(o) if isinstance(o, torch.Tensor) else frozenset() for o in outs]
    result: list[OutputObservation] = []
    bases: list[torch.Tensor] = []
    for j, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            result.append(OutputObservation(j, AliasKind.PLAIN, None, False, None, PlainMeta()))
            continue
        kind, base = AliasKind.PLAIN, None
        same = [i for i, a in tensors.items() if a is o]
        of_base = [i for i, a in tensors.items() if o._base is not None and o._base is a]
        sharing = [i for i, st in in_storages.items() if st & out_storages[j]]
        aliased_outs = [k for k, st in enumerate(out_storages) if st & out_storages[j]]
        # Differentiable pieces of one unbind/split are hidden from autograd as a group.
        not_multi = len([k for k in aliased_outs if not _multi_output_view(outs[k])])
        if same:
            kind, base = AliasKind.IS_INPUT, same[0]
        elif of_base or sharing:
            if not (o.grad_fn is not None and not_multi == 0):
                kind, base = AliasKind.ALIAS_OF_INPUT, (of_base or sharing)[0]
        elif o._base is not None and o.requires_grad and o._base.requires_grad:
            if len(aliased_outs) > 1 and not_multi > 1:
                kind = AliasKind.ALIAS_OF_INTERMEDIATE
                owner = [k for k, other in enumerate(outs) if other is o._base]
                if owner:
                    base = owner[0]
                else:
                    found = [k for k, b in enumerate(bases) if b is o._base]
                    if not found:
                        bases.append(o._base)
                    base = len(outs) + (found[0] if found else len(bases) - 1)
        elif len(aliased_outs) > 1 and not o.requires_grad:
            twins = [
                k
                for k in aliased_outs
                if k != j
                and isinstance(twin := outs[k], torch.Tensor)
                and twin.requires_grad
                and _same_metadata(o, twin)
            ]
            if twins:
                kind, base = AliasKind.ALIAS_OF_INTERMEDIATE, twins[0]
        view = (
            ViewSpec.of(o)
            if kind in (AliasKind.ALIAS_OF_INPUT, AliasKind.ALIAS_OF_INTERMEDIATE)
            else None
        )
        result.append(OutputObservation(j, kind, base, o.requires_grad, view, subclass_meta_of(o)))
    return tuple(result), len(bases)


def predict_trace_joint(
    inputs: Sequence[InputObservation | None], outputs: Sequence[OutputObservation]
) -> bool:
    """The published rule for a training (joint) graph rather than an inference one.

    Some input requires grad, and either an output requires grad (other than an input or an
    alias of an input that requires grad: those are regenerated outside the graph) or an
    input that requires grad had its values mutated where autograd sees it. So
    ``torch.set_grad_enabled(False)`` inside the region gives an inference graph although
    the inputs require grad.
    """
    if not any(i is not None and i.before.requires_grad for i in inputs):
        return False

    def base_requires_grad(o: OutputObservation) -> bool:
        base = inputs[o.base_index] if o.base_index is not None else None
        return base is not None and base.before.requires_grad

    outputs_need = any(
        o.requires_grad
        and not (
            o.kind in (AliasKind.IS_INPUT, AliasKind.ALIAS_OF_INPUT) and base_requires_grad(o)
        )
        for o in outputs
    )
    mutations_need = any(
        i is not None
        and i.before.requires_grad
        and i.mutates_data
        and not i.under_no_grad
        for i in inputs
    )
    return outputs_need or mutations_need


def _count_saved(program: Callable[..., Any], args: Sequence[object]) -> tuple[Any, int]:
    packed: list[object] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = program(*args)
    leaves = 0
    for t in packed:
        meta = subclass_meta_of(t)
        leaves += meta.arg_count if isinstance(meta, SubclassMeta) else 1
    return out, leaves


def observe(
    program: Callable[..., Any],
    args: Sequence[object],
    *,
    attributes: Mapping[str, torch.Tensor] | None = None,
) -> Observation:
    """Run ``program(*args)`` eagerly (mutating ``args``, as a call would) and classify.

    ``attributes``: tensors the program reaches through its arguments (``"m.w"`` for a
    module's parameter), observed like inputs so that :func:`region` can place them.
    """
    attributes = dict(attributes or {})
    grad_before = torch.is_grad_enabled()
    befores = {i: snapshot(a) for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
    attr_befores = {n: snapshot(t) for n, t in attributes.items()}
    input_subclasses = tuple(subclass_meta_of(a) for a in args)
    attr_subclasses = {n: subclass_meta_of(t) for n, t in attributes.items()}
    # The bases of inputs that are views: a compiler may pass such a base instead of its
    # aliased views (see synthetic_bases), so it is observed like an input too.
    known = [*args, *attributes.values()]
    view_bases: dict[str, torch.Tensor] = {}
    for i, a in enumerate(known):
        base = a._base if isinstance(a, torch.Tensor) and not is_wrapper_subclass(a) else None
        if base is not None and not any(base is k for k in (*known, *view_bases.values())):
            view_bases[f"_base of input {i}"] = base
    base_befores = {n: snapshot(t) for n, t in view_bases.items()}
    differentiable = [*args, *attributes.values()]
    may_be_joint = grad_before and any(
        isinstance(a, torch.Tensor) and a.requires_grad for a in differentiable
    )
    log = _InPlaceLog()
    with log:
        if may_be_joint:
            out, saved = _count_saved(program, args)
            saved_count: int | None = saved
        else:
            out, saved_count = program(*args), None
    grad_after = torch.is_grad_enabled()
    always_off = not grad_before and not grad_after
    outs = _flatten_outputs(out)
    inputs = tuple(
        _classify_input(i, a, befores[i], log, always_off) if isinstance(a, torch.Tensor) else None
        for i, a in enumerate(args)
    )
    attrs = tuple(
        AttributeObservation(
            n, _classify_input(-1, t, attr_befores[n], log, always_off), attr_subclasses[n], t
        )
        for n, t in attributes.items()
    )
    bases = tuple(
        AttributeObservation(n, _classify_input(-1, t, base_befores[n], log, always_off), PlainMeta(), t)
        for n, t in view_bases.items()
    )
    outputs, n_bases = _relate_outputs(args, outs)
    return Observation(
        inputs,
        outputs,
        n_bases,
        grad_before,
        grad_after,
        predict_trace_joint(inputs, outputs),
        input_subclasses,
        saved_count,
        outs,
        tuple(args),
        attrs,
        bases,
    )


def region(
    obs: Observation,
    inputs: Sequence[int | str | None],
    outputs: Sequence[int | None] | None = None,
) -> Observation:
    """The observation in the terms of one compiled region (Note [Program terms and region
    terms]).

    ``inputs``: per region input, the argument index, the attribute name, or ``None`` for a
    value the program does not see (a symbolic size, a lifted constant, a tensorified
    float). ``outputs``: per region output, the program output index or ``None``; ``None``
    for the whole means the region returns exactly the program's outputs.
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
        slot_inputs.append(None if inp is None else replace(inp, index=slot))
        slot_values.append(value)
        slot_subclasses.append(meta)
    if outputs is None:
        outs = obs.raw_outputs
    else:
        for ref in outputs:
            if ref is not None and not 0 <= ref < len(obs.raw_outputs):
                raise IndexError(f"region output: the program has no output {ref}")
        outs = tuple(None if ref is None else obs.raw_outputs[ref] for ref in outputs)
    rel, n_bases = _relate_outputs(slot_values, outs)
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
    for members in groups:
        found = _synthetic_base(obs, members)
        if found is None:
            others.extend(members)
        else:
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
    rel, n_bases = _relate_outputs(values, obs.raw_outputs)
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


def predict_in_graph(inp: InputObservation, *, keep_input_mutations: bool) -> bool:
    """The published placement rule: may the graph keep this mutation to itself?

    Only a value mutation, and only if autograd has nothing to record: the input does not
    require grad and keeps its geometry, or every write happened with grad mode off. A
    write through ``x.detach()`` with grad mode on does not count: the epilogue applies it.
    """
    if inp.mutates_storage:
        return True  # storage swaps stay in the graph or are rejected at compile time
    if not keep_input_mutations or not inp.mutates_data:
        return False
    return (not inp.mutates_metadata and not inp.before.requires_grad) or inp.under_no_grad


def mutation_meta(
    obs: Observation,
    *,
    keep_input_mutations: bool = True,
    runtime_indices: Sequence[int] | None = None,
    trace_joint: bool | None = None,
) -> MutationEpilogueMeta:
    """Mutation-epilogue metadata. ``runtime_indices`` (inputs the build's epilogue applies)
    overrides the placement prediction; see Note [Observed, not asked]."""
    records = []
    for inp in obs.mutated_inputs:
        in_graph = (
            inp.index not in runtime_indices
            if runtime_indices is not None
            else predict_in_graph(inp, keep_input_mutations=keep_input_mutations)
        )
        records.append(
            InputMutation(
                index=inp.index,
                mutates_data=inp.mutates_data,
                mutates_metadata=inp.mutates_metadata,
                mutates_storage=inp.mutates_storage,
                is_leaf=inp.before.is_leaf,
                requires_grad=inp.before.requires_grad,
                hidden_from_autograd=inp.hidden_from_autograd,
                in_graph=in_graph,
            )
        )
    joint = obs.trace_joint if trace_joint is None else trace_joint
    return MutationEpilogueMeta(tuple(records), trace_joint=joint)


def runtime_wrapper_meta(
    obs: Observation,
    *,
    keep_input_mutations: bool = True,
    runtime_indices: Sequence[int] | None = None,
    trace_joint: bool | None = None,
) -> RuntimeWrapperMeta:
    """Runtime-wrapper metadata from the observation (placement as in :func:`mutation_meta`)."""
    mm = mutation_meta(
        obs,
        keep_input_mutations=keep_input_mutations,
        runtime_indices=runtime_indices,
        trace_joint=trace_joint,
    )
    runtime = tuple(m.index for m in mm.runtime_mutations)
    in_graph = tuple(m.index for m in mm.inputs if m.in_graph and m.mutated)
    grad_change = (
        None if obs.grad_enabled_after == obs.grad_enabled_before else (obs.grad_enabled_after)
    )
    outputs = tuple(OutputSpec(o.kind, o.base_index, o.requires_grad, o.view) for o in obs.outputs)
    return RuntimeWrapperMeta(
        num_inputs=len(obs.inputs),
        mutated_runtime=runtime,
        mutated_in_graph=in_graph,
        outputs=outputs,
        num_intermediate_bases=obs.num_intermediate_bases,
        trace_joint=mm.trace_joint,
        grad_enabled_after=grad_change,
        keep_input_mutations=keep_input_mutations,
    )


def subclass_wrapper_meta(
    obs: Observation,
    *,
    frozen_inputs: frozenset[int] = frozenset(),
    keep_input_mutations: bool = True,
    runtime_indices: Sequence[int] | None = None,
) -> SubclassWrapperMeta | None:
    """Subclass-wrapper metadata, or ``None`` when no input or output is a subclass.

    The graph's outputs are, in order, the updated values of the inputs the epilogue
    applies (placement as in :func:`mutation_meta`), the user outputs and the intermediate
    bases; a training graph appends its saved activations.
    """
    mm = mutation_meta(
        obs, keep_input_mutations=keep_input_mutations, runtime_indices=runtime_indices
    )
    updated = tuple(
        subclass_meta_of(obs.raw_args[m.index])
        if m.index < len(obs.raw_args)
        else obs.input_subclasses[m.index]
        for m in mm.runtime_mutations
    )
    user = tuple(o.subclass for o in obs.outputs)
    outputs = (*updated, *user, *(PlainMeta(),) * obs.num_intermediate_bases)
    if not any(isinstance(m, SubclassMeta) for m in (*obs.input_subclasses, *outputs)):
        return None
    saved = obs.saved_plain_tensors if obs.trace_joint else None
    return SubclassWrapperMeta(obs.input_subclasses, outputs, frozen_inputs, saved)


def backward_unwrap_meta(obs: Observation) -> BackwardUnwrapMeta | None:
    """Saved arguments of the backward, after subclass desugaring: all plain tensors."""
    if obs.saved_plain_tensors is None:
        return None
    return BackwardUnwrapMeta((SavedKind.TENSOR,) * obs.saved_plain_tensors)


def scalar_meta(program: Callable[..., Any], args: Sequence[object]) -> ScalarProgramMeta:
    """Float uses of ``program`` for the parameters that receive Python floats in ``args``."""
    return analyze_float_uses(program, float_params_of(program, args))


def verify_mutation_meta(
    program: Callable[..., Any],
    make_args: Callable[[], Sequence[object]],
    meta: MutationEpilogueMeta,
) -> list[str]:
    """Replay ``meta`` through the reference epilogue and list where it differs from eager.

    One copy of the inputs runs eagerly. A second copy is left untouched and receives, as a
    functional graph would return them, the eager after-states of the inputs the metadata
    says the epilogue applies; the epilogue must then reproduce eager exactly. Inputs the
    metadata keeps in the graph are assumed handled there and are not checked.
    """
    eager_args, replay_args = list(make_args()), list(make_args())
    program(*eager_args)
    updated: list[object] = []
    for m in meta.runtime_mutations:
        final = eager_args[m.index]
        assert isinstance(final, torch.Tensor)
        if m.mutates_storage or (m.mutates_metadata and not m.mutates_data):
            value: object = final.detach()
            updated.append(OutputAlias(value) if meta.trace_joint else value)  # type: ignore[arg-type]  # detach() is a Tensor
        else:
            updated.append(final.detach().clone())
    try:
        apply_mutations_interpreted(meta, dict(enumerate(replay_args)), updated)
    except Exception as exc:  # a wrong classification may make the epilogue itself fail
        return [f"the epilogue raised {type(exc).__name__}: {exc}"]
    problems = []
    for m in meta.runtime_mutations:
        want = snapshot(eager_args[m.index])  # type: ignore[arg-type]  # tensors by construction
        got = snapshot(replay_args[m.index])  # type: ignore[arg-type]  # tensors by construction
        if got.geometry != want.geometry:
            problems.append(f"input {m.index}: geometry {got.geometry}, eager {want.geometry}")
        elif not _same_values(got.values, want.values):
            problems.append(f"input {m.index}: values differ from eager")
        if m.mutates_storage != (got.storage_ptr == want.storage_ptr):
            problems.append(f"input {m.index}: storage identity differs from eager")
    for inp in range(len(eager_args)):
        if inp in {m.index for m in meta.inputs}:
            continue
        a, b = eager_args[inp], replay_args[inp]
        if (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and (
                snapshot(a).geometry != snapshot(b).geometry
                or not _same_values(_leaves(a), _leaves(b))
            )
        ):
            problems.append(f"input {inp}: mutated in eager, but the metadata says it is not")
    return problems


def _fresh(value: object) -> object:
    """What a functional graph returns for ``value``: a new tensor with its values."""
    if not isinstance(value, torch.Tensor):
        return value
    with torch.no_grad():
        copy = value.detach().clone()
    if value.requires_grad:
        copy.requires_grad_(True)
    return copy


def verify_output_meta(
    program: Callable[..., Any],
    make_args: Callable[[], Sequence[object]],
    meta: RuntimeWrapperMeta,
) -> list[str]:
    """Replay ``meta``'s outputs through the reference alias regeneration and list where
    they relate to the inputs and to each other differently from eager.

    One copy of the inputs runs eagerly. A second copy runs too (so its inputs end in the
    same state), but its outputs are replaced by what a functional graph returns: fresh
    tensors with the eager outputs' values, then the intermediate bases. Regenerating the
    aliases as ``meta`` says must give outputs that are, as in eager, the same input, an
    alias of the same input, an alias of the same output, or nothing shared.
    """
    eager_args, graph_args = list(make_args()), list(make_args())
    outs = _flatten_outputs(program(*eager_args))
    program(*graph_args)
    if len(meta.outputs) != len(outs):
        return [f"metadata has {len(meta.outputs)} outputs, eager returns {len(outs)}"]
    bases: list[torch.Tensor] = []
    for o in outs:
        base = o._base if isinstance(o, torch.Tensor) else None
        if base is not None and not any(base is x for x in (*outs, *eager_args, *bases)):
            bases.append(base)
    fw_outs: list[object] = [_fresh(v) for v in (*outs, *bases)]
    if meta.trace_joint:
        for i, spec in enumerate(meta.outputs):
            if spec.kind in (AliasKind.ALIAS_OF_INPUT, AliasKind.ALIAS_OF_INTERMEDIATE):
                fw_outs[i] = OutputAlias(fw_outs[i])  # type: ignore[arg-type]  # a tensor here
    try:
        ret = replay_aliases_interpreted(
            meta, {i: graph_args[i] for i in meta.captured_inputs}, fw_outs
        )
    except Exception as exc:  # e.g. a base index the graph does not return
        return [f"regenerating the aliases raised {type(exc).__name__}: {exc}"]
    want, _ = _relate_outputs(eager_args, outs)
    got, _ = _relate_outputs(graph_args, ret)
    problems = []
    for w, g in zip(want, got, strict=True):
        if (w.kind, w.base_index) != (g.kind, g.base_index):
            problems.append(
                f"output {w.index}: {g.kind.value} of {g.base_index}, "
                f"eager {w.kind.value} of {w.base_index}"
            )
        o, r = outs[w.index], ret[w.index]
        if isinstance(o, torch.Tensor) and (
            not isinstance(r, torch.Tensor) or not _same_values(_leaves(o), _leaves(r))
        ):
            problems.append(f"output {w.index}: values differ from eager")
    return problems
