"""A compile's region in the program's terms, and the observation re-expressed in them.

See Note [Probe: what is compared with what] in conformance/probe/__init__.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from conformance.probe.capture import CaptureResult
from conformance.results import GraphValue, Symbolic
from reference_impl.observe import Observation, predict_trace_joint
from reference_impl.region import UnseenAlias, region, synthetic_bases
from reference_impl.runtime_wrapper import AliasKind
from reference_impl.runtime_wrapper_form import RuntimeWrapperForm
from reference_impl.subclass_wrapper import Meta, is_wrapper_subclass, mark_symbolic


@dataclass(frozen=True)
class TraceFacts:
    """What dynamo's trace (fake values, eager semantics, before AOTAutograd) says about one
    compile's values that the program does not see (see :class:`GraphSignature`): per region
    input slot, the subclass structure of an unseen input; per graph output, the input slot
    it is or views (with the view's geometry) and its subclass structure; the input slots an
    in-place op wrote to (``None``: not known) and those whose size, stride or offset it changed
    (``None``: not known); the input slots that require grad on entering the graph (an input
    whose ``requires_grad_`` the program calls does); the input slots an in-place call of the
    graph itself takes as its target (``written``: a fake value's version also counts ops
    dynamo ran on it outside the graph, before a break), and of those the ones whose every such
    call only restrides them (``restrided_only``: ``as_strided_``, ``t_``... write no data)."""

    unseen_inputs: Mapping[int, Meta] = field(default_factory=dict)
    output_aliases: Mapping[int, UnseenAlias] = field(default_factory=dict)
    output_subclasses: Mapping[int, Meta] = field(default_factory=dict)
    mutated: frozenset[int] | None = None
    requires_grad: frozenset[int] | None = None
    metadata_mutated: frozenset[int] | None = None
    written: frozenset[int] = frozenset()
    restrided_only: frozenset[int] = frozenset()


@dataclass(frozen=True)
class GraphSignature:
    """One compile's region in the program's terms (see Note [Probe: what is compared with
    what] and :func:`reference_impl.region.region`).

    ``inputs``: per region input, the program argument index, the attribute name
    (``"m.w"``) or ``None`` (a symbolic size, a lifted constant, a tensorified float).
    ``outputs``: per region output, the program output index or ``None`` (a value the
    program does not return); ``None`` for the whole when not known. ``*_symbolic``: per
    value, which sizes/strides were symbolic at compile time. ``frozen``: region inputs
    inductor freezing baked into the graph. ``unseen_tensors``: region inputs that are
    tensors the program does not see (tensorified floats, lifted constants). ``partial``:
    the program also ran outside this region during the call (a graph break, an in-place
    op dynamo ran before the graph), so the observation of the whole call does not say
    which inputs the region itself mutates. ``unseen_outputs_need_grad``: some output the
    program does not see requires grad (a loss the program consumes outside the region).
    ``unseen_input_subclasses``: the subclass structure of region inputs the program does not
    see by identity (an inner tensor of a subclass argument, a subclass parameter lifted by
    path), read from the value the graph received. ``unseen_output_aliases``: region outputs
    the program does not see that are a region input or a view of one in dynamo's trace
    (see :func:`reference_impl.region.region`), and those the program sees that are an
    input it does not see or a view of one (a loss returned detached after a graph break);
    ``unseen_output_subclasses``, the subclass
    structure of such outputs in the trace. ``mutated_in_region``: the region inputs an
    in-place op of dynamo's trace wrote to (``None``: not known); for a ``partial`` region
    it replaces the whole call's mutations in predicting a training graph.
    ``metadata_mutated_in_region``: those whose geometry the trace changed (``None``: not
    known); for a ``partial`` region, only these keep the call's metadata mutation.
    ``requires_grad_on_entry``: region inputs that require grad on entering the graph in
    dynamo's trace (``None``: no trace); one the observation saw without it was turned on by
    the program first. ``written_in_region``: the region inputs an in-place call of the
    graph itself takes as its target; ``restrided_only_in_region``: those only restrided by
    them, which a ``partial`` region does not write data into or swap the storage of (the
    call's data or storage mutation happened outside it).
    """

    inputs: tuple[int | str | None, ...]
    outputs: tuple[int | None, ...] | None = None
    input_symbolic: tuple[Symbolic, ...] = ()
    output_symbolic: tuple[Symbolic, ...] | None = None
    frozen: frozenset[int] = field(default_factory=frozenset)
    unseen_tensors: frozenset[int] = field(default_factory=frozenset)
    partial: bool = False
    unseen_outputs_need_grad: bool = False
    unseen_input_subclasses: tuple[tuple[int, Meta], ...] = ()
    unseen_output_aliases: tuple[tuple[int, UnseenAlias], ...] = ()
    unseen_output_subclasses: tuple[tuple[int, Meta], ...] = ()
    mutated_in_region: frozenset[int] | None = None
    requires_grad_on_entry: frozenset[int] | None = None
    metadata_mutated_in_region: frozenset[int] | None = None
    written_in_region: frozenset[int] = frozenset()
    restrided_only_in_region: frozenset[int] = frozenset()

    @staticmethod
    def of(
        graph_inputs: Sequence[GraphValue],
        graph_outputs: Sequence[GraphValue] | None = None,
        *,
        frozen: frozenset[int] = frozenset(),
        partial: bool = False,
        trace: TraceFacts | None = None,
    ) -> GraphSignature:
        """From the runner's records: kind ``"input"``/``"param"`` with an argument ``index``
        or an attribute ``name`` is that program value; kind ``"output"`` with ``index`` is
        that program output; every other kind is a value the program does not see (a
        tensor for kinds ``"tensor"`` and ``"param"``)."""

        def ref(g: GraphValue) -> int | str | None:
            if g.kind in ("input", "param"):
                return g.index if g.index is not None else g.name
            return None

        outputs = None
        output_symbolic = None
        if graph_outputs is not None:
            outputs = tuple(g.index if g.kind == "output" else None for g in graph_outputs)
            output_symbolic = tuple(g.symbolic for g in graph_outputs)
        refs = tuple(ref(g) for g in graph_inputs)
        unseen_slots = frozenset(
            k for k, g in enumerate(graph_inputs) if refs[k] is None and g.kind in ("tensor", "param")
        )
        trace = trace or TraceFacts()
        # an unseen output that is an input or a view of one is regenerated outside the graph
        need_grad = graph_outputs is not None and any(
            g.requires_grad for j, g in enumerate(graph_outputs) if g.kind != "output" and j not in trace.output_aliases
        )

        def unseen(found: Mapping[int, Any], of_unseen_inputs: bool = False) -> tuple[tuple[int, Any], ...]:
            return tuple(
                (j, a) for j, a in sorted(found.items())
                if graph_outputs is not None and j < len(graph_outputs)
                and (graph_outputs[j].kind != "output" or (of_unseen_inputs and refs[a[0]] is None))
            )

        return GraphSignature(
            refs, outputs, tuple(g.symbolic for g in graph_inputs), output_symbolic, frozen, unseen_slots, partial,
            need_grad, tuple(sorted(trace.unseen_inputs.items())), unseen(trace.output_aliases, of_unseen_inputs=True),
            unseen(trace.output_subclasses), trace.mutated, trace.requires_grad, trace.metadata_mutated,
            trace.written, trace.restrided_only,
        )


def _leaf_values(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
    if is_wrapper_subclass(t):
        names, _ = t.__tensor_flatten__()  # type: ignore[attr-defined]  # subclass protocol
        return tuple(v for n in names for v in _leaf_values(getattr(t, n)))
    return (t.detach(),)


@dataclass(frozen=True)
class OutputSample:
    """A graph output as it was returned on its compile's first call: enough to tell which
    program output it is (:func:`match_outputs`). Values are copied, since the caller may
    write through the outputs afterwards."""

    type_name: str
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    values: tuple[torch.Tensor, ...] = field(default=(), compare=False, repr=False)
    scalar: object = field(default=None, compare=False)

    @staticmethod
    def of(value: object) -> OutputSample:
        if isinstance(value, torch.Tensor):
            with torch.no_grad():
                leaves = tuple(v.clone() for v in _leaf_values(value))
            return OutputSample(type(value).__name__, str(value.dtype), tuple(value.shape), leaves)
        return OutputSample(type(value).__name__, scalar=value)

    def fits(self, value: object) -> bool:
        """Same type, dtype and shape (a tensor) or an equal value (anything else)."""
        if isinstance(value, torch.Tensor):
            return (self.type_name, self.dtype, self.shape) == (
                type(value).__name__,
                str(value.dtype),
                tuple(value.shape),
            )
        return self.type_name == type(value).__name__ and bool(self.scalar == value)

    def close_to(self, value: object) -> bool:
        if not isinstance(value, torch.Tensor):
            return self.fits(value)
        theirs = _leaf_values(value)
        return len(theirs) == len(self.values) and all(
            _close(a, b) for a, b in zip(self.values, theirs, strict=True)
        )


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.allclose(a, b, rtol=1e-3, atol=1e-4, equal_nan=True))
    return bool(torch.equal(a, b))


def match_outputs(
    samples: Sequence[OutputSample],
    program_outputs: Sequence[object],
    allowed: Callable[[int, int], bool] | None = None,
) -> tuple[int | None, ...]:
    """Which program output each graph output is (``None``: one the program does not return).

    The compiled call and the observed eager call ran on identical inputs, so a graph output
    is the program output of the same type, dtype and shape, preferring (in this order) the
    next one in program order with close values, any with close values, the next one in
    program order. Which outputs the graph returns is the compiler's choice (dynamo hands
    back returned inputs and constants itself); this only finds out what it chose.
    ``allowed(j, i)``: may graph output ``j`` be program output ``i`` at all (what the trace
    says of it rules some out).
    """
    used: set[int] = set()
    out: list[int | None] = []
    after = 0
    for j, sample in enumerate(samples):
        fitting = [i for i, v in enumerate(program_outputs)
                   if i not in used and sample.fits(v) and (allowed is None or allowed(j, i))]
        ordered = [i for i in fitting if i >= after] + [i for i in fitting if i < after]
        close = [i for i in ordered if sample.close_to(program_outputs[i])]
        best = close or ordered
        pick = best[0] if best else None
        out.append(pick)
        if pick is not None:
            used.add(pick)
            after = pick + 1
    return tuple(out)


@dataclass(frozen=True)
class Region:
    """One compile, ready to compare: the observation in region terms and what the
    signature says about the compiler's placement choices."""

    obs: Observation
    outputs_known: bool
    dynamic_outputs: tuple[frozenset[int] | None, ...] | None
    frozen: frozenset[int]
    partial: bool = False
    writes: frozenset[int] | None = None
    #: region inputs the program does not see (an optimizer's state the call created) whose
    #: data the trace wrote in place, requiring no grad on entry: the graph keeps the write
    unseen_writes: frozenset[int] = frozenset()


def _symbolic_map(symbolic: Symbolic) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    return {path: (sizes, strides) for path, sizes, strides in symbolic}


def _grad_free_input(robs: Observation, k: int, on_entry: set[int]) -> bool:
    """Region input ``k`` requires grad neither on entering the graph nor after the call."""
    inp = robs.inputs[k] if k < len(robs.inputs) else None
    return inp is not None and k not in on_entry and not inp.before.requires_grad and not inp.after.requires_grad


def _symbolic_outputs(graph: GraphSignature, robs: Observation) -> tuple[tuple[Any, ...],
                                                                         tuple[frozenset[int] | None, ...] | None]:
    """The region's outputs with the graph's symbolic sizes marked, and which dims of each the runtime wrapper
    marks dynamic (None: not known here, the build's fact stands)."""
    outs = robs.outputs
    # an output the program never sees (an intermediate passed on across a graph break) is of a kind the
    # observation cannot tell: which outputs the wrapper marks is then the build's fact (None)
    if graph.outputs is None or graph.output_symbolic is None or None in graph.outputs:
        return outs, None
    maps = [_symbolic_map(sym) for sym in graph.output_symbolic]
    outs = tuple(
        replace(o, subclass=mark_symbolic(o.subclass, maps[j])) if j < len(maps) else o
        for j, o in enumerate(outs)
    )
    # The wrapper marks every tensor output once any output has a symbolic size.
    sizes = [frozenset(m.get("", ((), ()))[0]) for m in maps]
    if not any(sizes):
        return outs, tuple(None for _ in outs)
    return outs, tuple(sizes[j] if isinstance(robs.raw_outputs[j], torch.Tensor) else None for j in range(len(outs)))


def to_region(obs: Observation, graph: GraphSignature | None) -> Region:
    if graph is None:
        return Region(obs, False, None, frozenset())
    in_region = region(obs, graph.inputs, graph.outputs, unseen_inputs=dict(graph.unseen_input_subclasses),
                       unseen_outputs=dict(graph.unseen_output_aliases))
    if graph.partial and graph.mutated_in_region is not None:
        # the whole call's mutations may lie outside the region: only its own writes count
        # (for synthetic bases too: inputs only another region writes are not merged)
        own = graph.mutated_in_region
        writes_data = own - graph.restrided_only_in_region
        geometry = graph.metadata_mutated_in_region
        in_region = replace(in_region, inputs=tuple(
            i if i is None else replace(
                i, mutates_data=i.mutates_data and k in writes_data,
                mutates_storage=i.mutates_storage and k in writes_data,
                # restrided only: the geometry change is the region's whole mutation
                mutates_metadata=(i.mutates_metadata or k in graph.restrided_only_in_region)
                and k in (own if geometry is None else geometry))
            for k, i in enumerate(in_region.inputs)))
    robs, order = synthetic_bases(in_region, graph.unseen_tensors)
    symbolic = [graph.input_symbolic[i] if i is not None and i < len(graph.input_symbolic) else () for i in order]
    frozen = frozenset(k for k, i in enumerate(order) if i is not None and i in graph.frozen)
    ins = tuple(mark_symbolic(m, _symbolic_map(symbolic[i])) for i, m in enumerate(robs.input_subclasses))
    outs, dynamic = _symbolic_outputs(graph, robs)
    writes: frozenset[int] | None = None
    if graph.partial and graph.mutated_in_region is not None:
        writes = frozenset(order.index(i) for i in graph.mutated_in_region if i in order)
    inputs = robs.inputs
    on_entry = {order.index(i) for i in graph.requires_grad_on_entry or () if i in order}
    unseen_grad = any(i is None and k in on_entry for k, i in enumerate(inputs))
    turned_on = any(i is not None and k in on_entry and not i.before.requires_grad for k, i in enumerate(inputs))
    if turned_on:
        inputs = tuple(i if i is None or k not in on_entry else replace(i, before=replace(i.before, requires_grad=True))
                       for k, i in enumerate(inputs))
    if unseen_grad or turned_on or writes is not None:
        robs = replace(robs, trace_joint=predict_trace_joint(inputs, robs.outputs, unseen_requires_grad=unseen_grad))
    # A region whose result the program consumes outside it (a loss for a backward, a step, a value
    # torch.autograd.grad reads after a graph break the runner did not see) trains although no program
    # output requires grad: a graph output that requires grad makes the graph joint, seen or not.
    joint = robs.trace_joint or (
        graph.unseen_outputs_need_grad
        and robs.grad_enabled_before
        and (unseen_grad or any(i is not None and i.before.requires_grad for i in robs.inputs))
    )
    if graph.requires_grad_on_entry is not None:
        # dynamo applies a requires_grad_ on a returned view of an input that does not require
        # grad after the graph: the graph's output does not
        outs = tuple(
            replace(o, requires_grad=False)
            if o.kind is AliasKind.ALIAS_OF_INPUT and o.base_index is not None
            and _grad_free_input(robs, o.base_index, on_entry)
            else o
            for o in outs
        )
    subclasses = dict(graph.unseen_output_subclasses)
    outs = tuple(replace(o, subclass=subclasses[j]) if j in subclasses else o for j, o in enumerate(outs))
    robs = replace(robs, input_subclasses=ins, outputs=outs, trace_joint=joint)
    geometry_changed = graph.metadata_mutated_in_region
    unseen_writes = frozenset(
        k for k, i in enumerate(order)
        if i is not None and robs.inputs[k] is None and i in graph.unseen_tensors and i in graph.written_in_region
        and k not in on_entry and geometry_changed is not None and i not in geometry_changed
    )
    return Region(robs, graph.outputs is not None, dynamic, frozen, graph.partial, writes, unseen_writes)


@dataclass(frozen=True)
class CompileToProbe:
    """One compile, as each behaviour's probe sees it: what the build generated, the region in
    the program's terms, the build's runtime-wrapper forms (placement facts), and whether the
    entry point keeps inference input mutations in the graph."""

    capture: CaptureResult
    region: Region
    rw_forms: Sequence[RuntimeWrapperForm]
    keep_input_mutations: bool
