"""The metadata oracle: derive every behaviour's metadata by watching an eager run.

Note [Observed, not asked]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The reference never asks torch's compiler what it decided. It snapshots each input before
and after an eager call (values, size/stride/offset, storage pointer, ``_version``, grad
requirements, ``grad_fn``), relates each output to the inputs and intermediates (identity,
storage sharing, ``_base``), watches grad mode, flattens tensor subclasses through the
public ``__tensor_flatten__`` protocol and counts saved tensors through the public
``saved_tensors_hooks``. From that it classifies (:func:`observe`); reference_impl/meta.py
builds each behaviour's metadata. Two facts are compiler *placement* choices
rather than contracts (whether a mutation stays inside the graph; whether the graph is a
training graph): they are predicted with the published rule and can be overridden by the
caller, e.g. the probe reads them from the build's own runtime wrapper.

reference_impl/meta.py's `verify_mutation_meta` closes the loop: it replays a metadata through the reference
epilogue on fresh inputs and reports where the result differs from eager, so a wrong
classification is caught rather than trusted.

The observation describes the *program*; reference_impl/region.py re-expresses it in the terms
of one compiled region (Note [Program terms and region terms]), and reference_impl/meta.py builds
each behaviour's metadata from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from reference_impl.runtime_wrapper import AliasKind, ViewSpec
from reference_impl.snapshot import (
    TensorState,
    aliasing_storages,
    extents,
    leaves,
    same_values,
    snapshot,
    storages,
)
from reference_impl.subclass_wrapper import Meta, PlainMeta, SubclassMeta, is_wrapper_subclass, subclass_meta_of

__all__ = [
    "AttributeObservation",
    "InputObservation",
    "Observation",
    "OutputObservation",
    "TensorState",
    "flatten_outputs",
    "leaves",
    "observe",
    "predict_trace_joint",
    "relate_outputs",
    "same_values",
    "snapshot",
]


@dataclass(frozen=True)
class InputObservation:
    """One tensor input, before and after, and how the call mutated it."""

    @property
    def mutated(self) -> bool:
        return self.mutates_data or self.mutates_metadata or self.mutates_storage

    index: int
    before: TensorState
    after: TensorState
    mutates_data: bool
    mutates_metadata: bool
    mutates_storage: bool
    hidden_from_autograd: bool
    under_no_grad: bool = False
    #: the values changed only through another tensor sharing the storage (``x.set_(y)`` then
    #: ``x.mul_``): in-place ops wrote it, yet its own version counter did not move
    through_other: bool = False
    #: its storage was swapped (``set_``, a storage resize) and no in-place op wrote into the
    #: storage it ends on: functionalization counts no data mutation of it
    swapped_only: bool = False


_STORAGE_SWAPS = frozenset({"set_", "resize_", "resize_storage_bytes_"})


class _InPlaceLog(TorchFunctionMode):
    """Records, for every in-place call (``x.mul_``, ``out=``), which storages it wrote and
    whether grad mode was on: a mutation made with grad mode off is one autograd never saw."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[frozenset[int], bool]] = []
        self.spans: set[tuple[int, int, int]] = set()
        # the storages data writes (not storage swaps) went into
        self.data_written: set[int] = set()

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
            written = storages(target)
            self.writes.append((written, torch.is_grad_enabled()))
            self.spans |= extents(target)
            if name not in _STORAGE_SWAPS:
                self.data_written |= written
        return func(*args, **kwargs)

    def under_no_grad(self, storages: frozenset[int]) -> bool | None:
        """Were all writes into ``storages`` made with grad mode off? ``None``: none seen."""
        modes = [grad for written, grad in self.writes if written & storages]
        return None if not modes else not any(modes)

    def wrote_over(self, t: torch.Tensor) -> bool:
        """Did an in-place call write bytes ``t`` spans? (A write beside it in the same storage
        moves ``t``'s counter where the two share one, as ``detach()`` does, yet writes nothing
        of ``t``.) True when the log saw no write into ``t``'s storage at all."""
        mine = extents(t)
        near = [w for w in self.spans if any(w[0] == m[0] for m in mine)]
        return not near or any(
            w[0] == m[0] and w[1] < m[2] and m[1] < w[2] for w in near for m in mine
        )


def _classify_input(
    index: int, t: torch.Tensor, before: TensorState, log: _InPlaceLog, grad_always_off: bool
) -> InputObservation:
    after = snapshot(t)
    storage = not after.same_storage(before)
    metadata = after.geometry != before.geometry
    data = False
    if not storage:
        if metadata:
            # Read the storage at the old geometry: did the bytes under it change?
            old_view = t.detach().as_strided(*before.geometry)
            data = not same_values(leaves(old_view), before.values)
        else:
            data = not same_values(after.values, before.values) or (
                after.version != before.version and log.wrote_over(t)
            )
    hidden = data and before.requires_grad and (before.is_leaf or after.grad_fn is before.grad_fn)
    seen = log.under_no_grad(before.storages)
    no_grad = data and (grad_always_off if seen is None else seen)
    through_other = data and seen is not None and after.version == before.version
    swapped_only = storage and not (after.storages & log.data_written)
    return InputObservation(
        index,
        before,
        after,
        data,
        metadata and not storage,
        storage,
        hidden,
        no_grad,
        through_other,
        swapped_only,
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
    # per output, the inputs it derives from when inputs that share a storage are told apart
    # (see _origins); None where no output shares a storage with two inputs
    output_origins: tuple[frozenset[int], ...] | None = field(default=None, compare=False, repr=False)

    @property
    def mutated_inputs(self) -> tuple[InputObservation, ...]:
        return tuple(i for i in self.inputs if i is not None and i.mutated)


def flatten_outputs(out: object) -> tuple[Any, ...]:
    """The leaves of a returned structure (tuples, lists, dict values, in order): what a
    compiled region returns, one value per leaf."""
    if isinstance(out, tuple | list):
        return tuple(leaf for item in out for leaf in flatten_outputs(item))
    if isinstance(out, dict):
        return tuple(leaf for item in out.values() for leaf in flatten_outputs(item))
    return (out,)


# Autograd's node for each output of a multi-output view op (unbind, split, chunk).
_MULTI_OUTPUT_VIEWS = frozenset({"UnbindBackward0", "SplitBackward0", "SplitWithSizesBackward0"})


def _multi_output_view(t: object) -> bool:
    """A piece of a multi-output view, or a view of one: the chain of view nodes from ``t``
    down to its base's passes through one."""
    if not isinstance(t, torch.Tensor) or t.grad_fn is None:
        return False
    base = t._base
    stop = base.grad_fn if base is not None else None
    node: Any = t.grad_fn
    for _ in range(64):
        if node is None or (stop is not None and node is stop) or type(node).__name__ == "AccumulateGrad":
            return False
        if type(node).__name__ in _MULTI_OUTPUT_VIEWS:
            return True
        if base is None or not node.next_functions:
            return False
        node = node.next_functions[0][0]
    return False


def _same_metadata(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (
        type(a) is type(b)
        and a.dtype == b.dtype
        and a.size() == b.size()
        and a.stride() == b.stride()
        and a.storage_offset() == b.storage_offset()
    )


def _alias_without_grad(
    o: torch.Tensor, j: int, outs: Sequence[object], aliased_outs: Sequence[int]
) -> tuple[AliasKind, int | None]:
    """An output that requires no grad, sharing its storage with other outputs: regenerated from an
    identical twin that requires grad (``(y, y.detach())``) or, a no-op view, from the output it was
    taken of; else plain."""
    twins = [
        k
        for k in aliased_outs
        if k != j
        and isinstance(twin := outs[k], torch.Tensor)
        and twin.requires_grad
        and _same_metadata(o, twin)
    ]
    if twins:
        return AliasKind.ALIAS_OF_INTERMEDIATE, max(k for k, other in enumerate(outs) if other is outs[twins[0]])
    owner = _noop_view_of_output(o, outs)
    return (AliasKind.PLAIN, None) if owner is None else (AliasKind.ALIAS_OF_INTERMEDIATE, owner)


def _noop_view_of_output(o: torch.Tensor, outs: Sequence[object]) -> int | None:
    """The output a no-op view ``o`` (same geometry as its base) was taken of, which is
    regenerated from it rather than left for the backend to merge with it (upstream #191449:
    an eager ``resize_`` of one then corrupts the other). A wrapper subclass is left alone."""
    base = o._base
    if base is None or is_wrapper_subclass(o) or not _same_metadata(o, base):
        return None
    owners = [k for k, other in enumerate(outs) if other is base]
    return owners[-1] if owners else None


def _own_first(sharing: list[int], origins: Sequence[frozenset[int] | None] | None, j: int) -> list[int]:
    """Of the inputs sharing output ``j``'s storage, the ones it derives from (all if unknown)."""
    mine = origins[j] if origins is not None and j < len(origins) else None
    if len(sharing) < 2 or mine is None:
        return sharing
    return [i for i in sharing if i in mine] or sharing


def relate_outputs(
    inputs: Sequence[object],
    outs: Sequence[object],
    origins: Sequence[frozenset[int] | None] | None = None,
) -> tuple[tuple[OutputObservation, ...], int]:
    """Classify each output against ``inputs`` and the other outputs (see the Note).

    ``origins``: per output, the inputs it derives from (:func:`_origins`): of several inputs
    sharing its storage, an output is an alias of the one it derives from."""
    tensors = {i: a for i, a in enumerate(inputs) if isinstance(a, torch.Tensor)}
    held: list[object] = []
    in_storages = {i: aliasing_storages(a, held) for i, a in tensors.items()}
    out_storages = [aliasing_storages(o, held) if isinstance(o, torch.Tensor) else frozenset() for o in outs]
    result: list[OutputObservation] = []
    bases: list[torch.Tensor] = []
    for j, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            result.append(OutputObservation(j, AliasKind.PLAIN, None, False, None, PlainMeta()))
            continue
        kind, base = AliasKind.PLAIN, None
        same = [i for i, a in tensors.items() if a is o]
        # (a wrapper subclass's autograd base is not its storage: aliasing is by storage alone)
        of_base = [i for i, a in tensors.items()
                   if o._base is not None and o._base is a and not is_wrapper_subclass(o)]
        sharing = _own_first([i for i, st in in_storages.items() if st & out_storages[j]], origins, j)
        aliased_outs = [k for k, st in enumerate(out_storages) if st & out_storages[j]]
        # Differentiable pieces of one unbind/split are hidden from autograd as a group.
        not_multi = len([k for k in aliased_outs if not _multi_output_view(outs[k])])
        if same:
            kind, base = AliasKind.IS_INPUT, same[0]
        elif of_base or sharing:
            # a custom Function's output, even a view, is not regenerated: that would lose its backward
            custom = isinstance(o.grad_fn, torch.autograd.function.BackwardCFunction)
            if not (o.grad_fn is not None and not_multi == 0) and not custom:
                kind, base = AliasKind.ALIAS_OF_INPUT, (of_base or sharing)[0]
        elif o._base is not None and o.requires_grad and o._base.requires_grad:
            if len(aliased_outs) > 1 and not_multi > 1:
                kind = AliasKind.ALIAS_OF_INTERMEDIATE
                # an output returned twice is known by its last position (AOTAutograd maps
                # each output object to an index, the later one overwriting the earlier)
                owner = [k for k, other in enumerate(outs) if other is o._base]
                if owner:
                    base = owner[-1]
                else:
                    found = [k for k, b in enumerate(bases) if b is o._base]
                    if not found:
                        bases.append(o._base)
                    base = len(outs) + (found[0] if found else len(bases) - 1)
        elif len(aliased_outs) > 1 and not o.requires_grad:
            kind, base = _alias_without_grad(o, j, outs, aliased_outs)
        view = (
            ViewSpec.of(o)
            if kind in (AliasKind.ALIAS_OF_INPUT, AliasKind.ALIAS_OF_INTERMEDIATE)
            else None
        )
        result.append(OutputObservation(j, kind, base, o.requires_grad, view, subclass_meta_of(o)))
    return tuple(result), len(bases)


def predict_trace_joint(
    inputs: Sequence[InputObservation | None],
    outputs: Sequence[OutputObservation],
    *,
    unseen_requires_grad: bool = False,
) -> bool:
    """The published rule for a training (joint) graph rather than an inference one.

    Some input requires grad, and either an output requires grad (other than an input or an
    alias of an input that requires grad: those are regenerated outside the graph) or an
    input that requires grad had its values mutated where autograd sees it. So
    ``torch.set_grad_enabled(False)`` inside the region gives an inference graph although
    the inputs require grad. ``unseen_requires_grad``: an input the program does not see (an
    intermediate a region after a graph break receives) requires grad.
    """
    if not unseen_requires_grad and not any(i is not None and i.before.requires_grad for i in inputs):
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


def _separated(args: Sequence[object], grad_enabled: bool) -> list[object] | None:
    """Copies of the arguments, each tensor in a storage of its own, when two tensor
    arguments share one (else ``None``). A compiler that does not merge such inputs (no
    synthetic base: the region does not write them) treats each as its own storage, so an
    output aliases the input it was computed from, which sharing alone cannot tell."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if not all(isinstance(a, torch.Tensor | int | float | bool | str | None) for a in args):
        return None
    held = [storages(t) for t in tensors]
    if not any(a & b for k, a in enumerate(held) for b in held[k + 1 :]):
        return None
    with torch.set_grad_enabled(grad_enabled):
        out: list[object] = []
        for a in args:
            if isinstance(a, torch.Tensor):
                c = a.detach().clone()
                if a.requires_grad and (c.is_floating_point() or c.is_complex()):
                    c = c.requires_grad_() if a.is_leaf else c.requires_grad_().clone()  # a non-leaf stays one
                out.append(c)
            else:
                out.append(a)
    return out


def _origins(program: Callable[..., Any], clones: Sequence[object]) -> tuple[frozenset[int], ...] | None:
    """Per output, the arguments it shares a storage with when each argument has its own
    (see :func:`_separated`); ``None`` when the program does not run so."""
    try:
        outs = flatten_outputs(program(*clones))
    except Exception:  # the program may need its arguments' aliasing; then nothing is told apart
        return None
    held = {i: storages(a) for i, a in enumerate(clones) if isinstance(a, torch.Tensor)}
    return tuple(
        frozenset(i for i, st in held.items() if isinstance(o, torch.Tensor) and st & storages(o))
        for o in outs
    )


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
    clones = _separated(args, grad_before)
    log = _InPlaceLog()
    with log:
        if may_be_joint:
            out, saved = _count_saved(program, args)
            saved_count: int | None = saved
        else:
            out, saved_count = program(*args), None
    grad_after = torch.is_grad_enabled()
    always_off = not grad_before and not grad_after
    outs = flatten_outputs(out)
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
    # also with a mutation: a region that does not write the aliased inputs does not merge them
    origins = _origins(program, clones) if clones is not None else None
    outputs, n_bases = relate_outputs(args, outs, origins)
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
        origins,
    )
