"""Each behaviour's metadata, built from an observation of the eager run (Note [Observed, not
asked] in reference_impl/observe.py), and the replays that check a metadata against eager."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from reference_impl.backward_unwrap import BackwardUnwrapMeta, SavedKind
from reference_impl.mutation_epilogue import (
    InputMutation,
    MutationEpilogueMeta,
    OutputAlias,
    apply_mutations_interpreted,
)
from reference_impl.observe import (
    InputObservation,
    Observation,
    flatten_outputs,
    leaves,
    relate_outputs,
    same_values,
    snapshot,
)
from reference_impl.runtime_wrapper import (
    AliasKind,
    OutputSpec,
    RuntimeWrapperMeta,
    replay_aliases_interpreted,
)
from reference_impl.scalar_recompile import (
    ScalarProgramMeta,
    analyze_float_uses,
    float_params_of,
)
from reference_impl.subclass_wrapper import (
    PlainMeta,
    SubclassMeta,
    SubclassWrapperMeta,
    subclass_meta_of,
)

__all__ = [
    "backward_unwrap_meta",
    "mutation_meta",
    "predict_in_graph",
    "runtime_wrapper_meta",
    "scalar_meta",
    "subclass_wrapper_meta",
    "verify_mutation_meta",
    "verify_output_meta",
]


def predict_in_graph(inp: InputObservation, *, keep_input_mutations: bool) -> bool:
    """The published placement rule: may the graph keep this mutation to itself?

    Only a value mutation, and only if autograd has nothing to record: the input does not
    require grad *after* the call (a write of a value that requires grad makes it require
    grad) and keeps its geometry, or every write happened with grad mode off. A write
    through ``x.detach()`` with grad mode on does not count: the epilogue applies it.
    """
    if inp.mutates_storage:
        return True  # storage swaps stay in the graph or are rejected at compile time
    if not keep_input_mutations or not inp.mutates_data:
        return False
    return (not inp.mutates_metadata and not inp.after.requires_grad) or inp.under_no_grad


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
    # The wrapper bumps what the graph wrote in place so that the counter moves as in eager,
    # where a write through another tensor sharing the storage moves none; a storage swap with
    # no write through the tensor is no data mutation to functionalization, so none is bumped.
    other = {i.index for i in obs.mutated_inputs if i.through_other or i.swapped_only}
    in_graph = tuple(m.index for m in mm.inputs if m.in_graph and m.mutated and m.index not in other)
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
    program_outputs: bool = False,
) -> SubclassWrapperMeta | None:
    """Subclass-wrapper metadata, or ``None`` when no input or output is a subclass.

    The graph's outputs are, in order, the updated values of the inputs the epilogue
    applies (placement as in :func:`mutation_meta`), the user outputs and the intermediate
    bases; a training graph appends its saved activations. ``program_outputs``: the outputs
    observed are the program's own (not a region's), where a ``None`` is no graph output (the
    outputs' pytree has no leaf for it).
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
    user = tuple(o.subclass for o, raw in zip(obs.outputs, obs.raw_outputs, strict=False)
                 if not program_outputs or raw is not None)
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
        elif not same_values(got.values, want.values):
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
                or not same_values(leaves(a), leaves(b))
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
    outs = flatten_outputs(program(*eager_args))
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
    want, _ = relate_outputs(eager_args, outs)
    got, _ = relate_outputs(graph_args, ret)
    problems = []
    for w, g in zip(want, got, strict=True):
        if (w.kind, w.base_index) != (g.kind, g.base_index):
            problems.append(
                f"output {w.index}: {g.kind.value} of {g.base_index}, "
                f"eager {w.kind.value} of {w.base_index}"
            )
        o, r = outs[w.index], ret[w.index]
        if isinstance(o, torch.Tensor) and (
            not isinstance(r, torch.Tensor) or not same_values(leaves(o), leaves(r))
        ):
            problems.append(f"output {w.index}: values differ from eager")
    return problems
