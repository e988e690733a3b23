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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from reference_impl.backward_unwrap import BackwardUnwrapMeta, SavedKind
from reference_impl.mutation_epilogue import (
    InputMutation,
    MutationEpilogueMeta,
    OutputAlias,
    apply_mutations_interpreted,
)
from reference_impl.runtime_wrapper import AliasKind, OutputSpec, RuntimeWrapperMeta, ViewSpec
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
    "InputObservation",
    "Observation",
    "OutputObservation",
    "TensorState",
    "backward_unwrap_meta",
    "mutation_meta",
    "observe",
    "runtime_wrapper_meta",
    "scalar_meta",
    "snapshot",
    "subclass_wrapper_meta",
    "verify_mutation_meta",
]


def _storage_ptr(t: torch.Tensor) -> int:
    """Data pointer of the storage; -1 for wrapper subclasses, which have none."""
    if is_wrapper_subclass(t):
        return -1
    return int(t.untyped_storage().data_ptr())


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

    @property
    def mutated(self) -> bool:
        return self.mutates_data or self.mutates_metadata or self.mutates_storage


def _classify_input(index: int, t: torch.Tensor, before: TensorState) -> InputObservation:
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
    return InputObservation(index, before, after, data, metadata and not storage, storage, hidden)


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
class Observation:
    """Everything the reference derives its metadata from (see Note [Observed, not asked])."""

    inputs: tuple[InputObservation | None, ...]
    outputs: tuple[OutputObservation, ...]
    num_intermediate_bases: int
    grad_enabled_before: bool
    grad_enabled_after: bool
    trace_joint: bool
    input_subclasses: tuple[Meta, ...]
    saved_plain_tensors: int | None
    raw_outputs: tuple[Any, ...] = field(compare=False, repr=False)

    @property
    def mutated_inputs(self) -> tuple[InputObservation, ...]:
        return tuple(i for i in self.inputs if i is not None and i.mutated)


def _flatten_outputs(out: object) -> tuple[Any, ...]:
    if isinstance(out, tuple | list):
        return tuple(out)
    return (out,)


def _relate_outputs(
    args: Sequence[object], outs: Sequence[object]
) -> tuple[tuple[OutputObservation, ...], int]:
    tensors = {i: a for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
    ptrs = {i: _storage_ptr(a) for i, a in tensors.items() if a.numel()}
    result: list[OutputObservation] = []
    bases: list[torch.Tensor] = []
    for j, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            result.append(OutputObservation(j, AliasKind.PLAIN, None, False, None, PlainMeta()))
            continue
        meta = subclass_meta_of(o)
        kind, base = AliasKind.PLAIN, None
        same = [i for i, a in tensors.items() if a is o]
        sharing = [i for i, p in ptrs.items() if o.numel() and _storage_ptr(o) == p]
        if same:
            kind, base = AliasKind.IS_INPUT, same[0]
        elif sharing and not is_wrapper_subclass(o):
            kind, base = AliasKind.ALIAS_OF_INPUT, sharing[0]
        elif o._base is not None and not is_wrapper_subclass(o):
            kind = AliasKind.ALIAS_OF_INTERMEDIATE
            owner = [k for k, other in enumerate(outs) if other is o._base]
            if owner:
                base = owner[0]
            else:
                found = [k for k, b in enumerate(bases) if b is o._base]
                if not found:
                    bases.append(o._base)
                base = len(outs) + (found[0] if found else len(bases) - 1)
        view = (
            ViewSpec.of(o)
            if kind in (AliasKind.ALIAS_OF_INPUT, AliasKind.ALIAS_OF_INTERMEDIATE)
            else None
        )
        result.append(OutputObservation(j, kind, base, o.requires_grad, view, meta))
    return tuple(result), len(bases)


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


def observe(program: Callable[..., Any], args: Sequence[object]) -> Observation:
    """Run ``program(*args)`` eagerly (mutating ``args``, as a call would) and classify."""
    grad_before = torch.is_grad_enabled()
    befores = {i: snapshot(a) for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
    input_subclasses = tuple(subclass_meta_of(a) for a in args)
    trace_joint = grad_before and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    if trace_joint:
        out, saved = _count_saved(program, args)
        saved_count: int | None = saved
    else:
        out, saved_count = program(*args), None
    grad_after = torch.is_grad_enabled()
    outs = _flatten_outputs(out)
    inputs = tuple(
        _classify_input(i, a, befores[i]) if isinstance(a, torch.Tensor) else None
        for i, a in enumerate(args)
    )
    outputs, n_bases = _relate_outputs(args, outs)
    return Observation(
        inputs,
        outputs,
        n_bases,
        grad_before,
        grad_after,
        trace_joint,
        input_subclasses,
        saved_count,
        outs,
    )


def predict_in_graph(inp: InputObservation, *, keep_input_mutations: bool) -> bool:
    """The published placement rule: may the graph keep this mutation to itself?"""
    if inp.mutates_storage:
        return True  # storage swaps stay in the graph or are rejected at compile time
    if not keep_input_mutations or not inp.mutates_data:
        return False
    return (not inp.mutates_metadata and not inp.before.requires_grad) or inp.hidden_from_autograd


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
    obs: Observation, *, frozen_inputs: frozenset[int] = frozenset()
) -> SubclassWrapperMeta | None:
    """Subclass-wrapper metadata, or ``None`` when no input or output is a subclass."""
    outputs = tuple(o.subclass for o in obs.outputs)
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
    apply_mutations_interpreted(meta, dict(enumerate(replay_args)), updated)
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
