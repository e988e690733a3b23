"""Internals probe: compare what a build generated with what ``reference_impl`` generates.

Note [Probe: what is compared with what]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Input: the sources captured during the case's compile (:mod:`conformance.capture`) and the
:class:`~reference_impl.observe.Observation` of the same program's eager run. For each
behaviour the probe reduces the build's source and the reference's source (generated from
metadata) to the behaviour's structural form (Note [Structural form]) and compares.

* Presence comes only from what was captured: no artifact, ``absent``; never a version test.
* Generated code indexes the compiled *region*, not the program: dynamo orders graph inputs
  by first use, inserts symbolic sizes and tensorified floats, AOTAutograd lifts module
  parameters in front, and the graph returns only the values it computed. The caller
  describes each compile's region with a :class:`GraphSignature` (the runner records it
  by identity from the backend's example inputs and the graph's first outputs), and the
  observation is re-expressed in region terms (:func:`reference_impl.observe.region`)
  before any reference source is generated; AOTAutograd's synthetic bases (overlapping
  inputs, one mutated, passed as their common base) are applied to it too
  (:func:`reference_impl.observe.synthetic_bases`). Without a signature the program's
  terms are used (``aot_function``, recorded fixtures).
* The metadata is the oracle's (how each input was mutated, how outputs alias, subclass
  trees, float uses). *Placement* facts are compiler choices, not contracts: which
  values form the region, which sizes are symbolic and which parameters inductor froze
  come with the signature; which mutated inputs the epilogue applies (the graph may keep
  the others), which inputs the training call detaches and whether autocast is disabled
  are read from the build's own runtime wrapper when it was captured (the oracle's
  prediction otherwise); the graph's output arity and alias replay too, but only when the
  signature does not say which program outputs the graph returns; and the version bumps
  when the signature is ``partial`` (the program also ran outside the region during the
  call, so the observation of the whole call cannot say which inputs the region mutates:
  a graph break, a ``set_`` or ``out=`` resize dynamo runs before the graph). Whether each input's
  *operation* is right (``copy_``, ``as_strided_``, ``set_``, the ``requires_grad``
  branch), which slot it reads, the type checks, the unwrapped arguments and the alias
  regeneration are always the reference's call.
* Every captured instance must match. A case that recompiles yields one set of sources
  per compile; each is compared with the reference for its own region and its own call
  (:func:`probe_compiles`).
* ``scalar_recompile`` has no source: the runner passes the observed compile count of a
  value sweep, compared with :func:`~reference_impl.scalar_tensorify.predict_compile_count`
  with the fix (``conforms``) and without it (``absent``: the build lacks the mechanism).

A probe result never fails a case by itself; the runner decides what ``diverges`` means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import torch

from conformance.capture import CaptureResult
from reference_impl import backward_unwrap, mutation_epilogue, runtime_wrapper, subclass_wrapper
from reference_impl.observe import (
    Observation,
    backward_unwrap_meta,
    mutation_meta,
    region,
    runtime_wrapper_meta,
    subclass_wrapper_meta,
    synthetic_bases,
)
from reference_impl.runtime_wrapper import OutputSpec, RuntimeWrapperForm, RuntimeWrapperMeta
from reference_impl.scalar_tensorify import ScalarProgramMeta, predict_compile_count
from reference_impl.structural import StructuralError, diff_lines, find_function
from reference_impl.subclass_wrapper import is_wrapper_subclass, mark_symbolic

__all__ = [
    "ARTIFACTS",
    "BEHAVIOURS",
    "GraphSignature",
    "GraphValue",
    "OutputSample",
    "ProbeReport",
    "ProbeResult",
    "ScalarSweep",
    "Symbolic",
    "match_outputs",
    "probe",
    "probe_compiles",
]

Status = Literal["conforms", "diverges", "absent"]
BEHAVIOURS = (
    "mutation_epilogue",
    "runtime_wrapper",
    "subclass_wrapper",
    "backward_unwrap",
    "scalar_recompile",
)
# Artifact names, and the function names that identify the same code under another name.
ARTIFACTS: dict[str, tuple[str, str]] = {
    "mutation_epilogue": ("mutation_epilogue", "_apply_mutations"),
    "runtime_wrapper_orchestration": ("runtime_wrapper_orchestration", "_runtime_wrapper"),
    "output_alias_wrapper": ("output_alias_wrapper", "_alias_fn"),
    "subclass_wrapper": ("subclass_wrapper", "inner_fn"),
    "backward_subclass_unwrap": ("backward_subclass_unwrap", "unwrap_fn"),
}


@dataclass(frozen=True)
class ProbeResult:
    """One behaviour's verdict, with both sources and a structural diff when it diverges."""

    behaviour: str
    status: Status
    artifacts: tuple[str, ...] = ()
    diff: str = ""
    reference_source: str = ""
    build_source: str = ""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "behaviour": self.behaviour,
            "status": self.status,
            "artifacts": list(self.artifacts),
            "diff": self.diff,
            "reference_source": self.reference_source,
            "build_source": self.build_source,
            "note": self.note,
        }


@dataclass(frozen=True)
class ProbeReport:
    """All five verdicts plus what the build was seen to generate."""

    results: tuple[ProbeResult, ...]
    seen: tuple[str, ...]
    forms: tuple[str, ...]
    unrecognised: tuple[str, ...] = ()

    def __getitem__(self, behaviour: str) -> ProbeResult:
        for r in self.results:
            if r.behaviour == behaviour:
                return r
        raise KeyError(behaviour)

    def statuses(self) -> dict[str, Status]:
        return {r.behaviour: r.status for r in self.results}

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [r.to_json() for r in self.results],
            "seen": list(self.seen),
            "forms": list(self.forms),
            "unrecognised": list(self.unrecognised),
        }


@dataclass(frozen=True)
class ScalarSweep:
    """A value sweep the runner performed: the program's float uses and what it observed."""

    uses: ScalarProgramMeta
    n_values: int
    compile_count: int
    recompile_limit: int = 8
    dynamic: bool | None = None
    values: tuple[dict[str, float], ...] | None = None  # per call, the swept floats


# Per value: (attribute path, symbolic size dims, symbolic stride dims); "" is the value itself.
Symbolic = tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]


class GraphValue(Protocol):
    """One input or output of a compiled region as the runner recorded it
    (:class:`conformance.runner.GraphInput` has this shape)."""

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def index(self) -> int | None: ...
    @property
    def symbolic(self) -> Symbolic: ...


@dataclass(frozen=True)
class GraphSignature:
    """One compile's region in the program's terms (see Note [Probe: what is compared with
    what] and :func:`reference_impl.observe.region`).

    ``inputs``: per region input, the program argument index, the attribute name
    (``"m.w"``) or ``None`` (a symbolic size, a lifted constant, a tensorified float).
    ``outputs``: per region output, the program output index or ``None`` (a value the
    program does not return); ``None`` for the whole when not known. ``*_symbolic``: per
    value, which sizes/strides were symbolic at compile time. ``frozen``: region inputs
    inductor freezing baked into the graph. ``unseen_tensors``: region inputs that are
    tensors the program does not see (tensorified floats, lifted constants). ``partial``:
    the program also ran outside this region during the call (a graph break, an in-place
    op dynamo ran before the graph), so the observation of the whole call does not say
    which inputs the region itself mutates.
    """

    inputs: tuple[int | str | None, ...]
    outputs: tuple[int | None, ...] | None = None
    input_symbolic: tuple[Symbolic, ...] = ()
    output_symbolic: tuple[Symbolic, ...] | None = None
    frozen: frozenset[int] = field(default_factory=frozenset)
    unseen_tensors: frozenset[int] = field(default_factory=frozenset)
    partial: bool = False

    @staticmethod
    def of(
        graph_inputs: Sequence[GraphValue],
        graph_outputs: Sequence[GraphValue] | None = None,
        *,
        frozen: frozenset[int] = frozenset(),
        partial: bool = False,
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
        unseen = frozenset(
            k for k, g in enumerate(graph_inputs) if refs[k] is None and g.kind in ("tensor", "param")
        )
        return GraphSignature(
            refs, outputs, tuple(g.symbolic for g in graph_inputs), output_symbolic, frozen, unseen, partial
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
    samples: Sequence[OutputSample], program_outputs: Sequence[object]
) -> tuple[int | None, ...]:
    """Which program output each graph output is (``None``: one the program does not return).

    The compiled call and the observed eager call ran on identical inputs, so a graph output
    is the program output of the same type, dtype and shape, preferring (in this order) the
    next one in program order with close values, any with close values, the next one in
    program order. Which outputs the graph returns is the compiler's choice (dynamo hands
    back returned inputs and constants itself); this only finds out what it chose.
    """
    used: set[int] = set()
    out: list[int | None] = []
    after = 0
    for sample in samples:
        fitting = [i for i, v in enumerate(program_outputs) if i not in used and sample.fits(v)]
        ordered = [i for i in fitting if i >= after] + [i for i in fitting if i < after]
        close = [i for i in ordered if sample.close_to(program_outputs[i])]
        best = close or ordered
        pick = best[0] if best else None
        out.append(pick)
        if pick is not None:
            used.add(pick)
            after = pick + 1
    return tuple(out)


def _sources(capture: CaptureResult, key: str) -> list[str]:
    artifact, fn_name = ARTIFACTS[key]
    found = capture.sources(artifact)
    if found:
        return found
    out = []
    for art in capture.artifacts:
        try:
            if find_function(art.source).name == fn_name:
                out.append(art.source)
        except StructuralError:
            continue
    return out


def _compare(
    behaviour: str,
    artifacts: tuple[str, ...],
    reference_source: str,
    build_sources: Sequence[str],
    reduce: Callable[[str], Any],
    *,
    note: str = "",
) -> ProbeResult:
    expected = reduce(reference_source)
    for source in dict.fromkeys(build_sources):
        try:
            actual = reduce(source)
        except StructuralError as exc:
            return ProbeResult(
                behaviour,
                "diverges",
                artifacts,
                f"unreadable source: {exc}",
                reference_source,
                source,
                note,
            )
        if actual != expected:
            diff = diff_lines(expected.describe(), actual.describe())
            return ProbeResult(
                behaviour, "diverges", artifacts, diff, reference_source, source, note
            )
    return ProbeResult(
        behaviour, "conforms", artifacts, "", reference_source, build_sources[0], note
    )


def _runtime_forms(sources: Sequence[str]) -> list[RuntimeWrapperForm]:
    forms = []
    for s in sources:
        try:
            forms.append(runtime_wrapper.structural_form(s))
        except StructuralError:
            continue
    return forms


def _runtime_indices(forms: Sequence[RuntimeWrapperForm]) -> list[int] | None:
    """Inputs the build's epilogue applies: the first ``split`` captured inputs."""
    if not forms:
        return None
    form = forms[0]
    split = form.mutation_split or 0
    return [slot for _, slot in form.captured_inputs[:split]]


@dataclass(frozen=True)
class _Region:
    """One compile, ready to compare: the observation in region terms and what the
    signature says about the compiler's placement choices."""

    obs: Observation
    outputs_known: bool
    dynamic_outputs: tuple[frozenset[int] | None, ...] | None
    frozen: frozenset[int]
    partial: bool = False


def _symbolic_map(symbolic: Symbolic) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    return {path: (sizes, strides) for path, sizes, strides in symbolic}


def _to_region(obs: Observation, graph: GraphSignature | None) -> _Region:
    if graph is None:
        return _Region(obs, False, None, frozenset())
    robs, order = synthetic_bases(region(obs, graph.inputs, graph.outputs), graph.unseen_tensors)
    symbolic = [graph.input_symbolic[i] if i is not None and i < len(graph.input_symbolic) else () for i in order]
    frozen = frozenset(k for k, i in enumerate(order) if i is not None and i in graph.frozen)
    ins = tuple(mark_symbolic(m, _symbolic_map(symbolic[i])) for i, m in enumerate(robs.input_subclasses))
    outs = robs.outputs
    dynamic: tuple[frozenset[int] | None, ...] | None = None
    if graph.outputs is not None and graph.output_symbolic is not None:
        maps = [_symbolic_map(sym) for sym in graph.output_symbolic]
        outs = tuple(
            replace(o, subclass=mark_symbolic(o.subclass, maps[j])) if j < len(maps) else o
            for j, o in enumerate(outs)
        )
        # The wrapper marks every tensor output once any output has a symbolic size.
        sizes = [frozenset(m.get("", ((), ()))[0]) for m in maps]
        if any(sizes):
            dynamic = tuple(
                sizes[j] if isinstance(robs.raw_outputs[j], torch.Tensor) else None
                for j in range(len(outs))
            )
        else:
            dynamic = tuple(None for _ in outs)
    robs = replace(robs, input_subclasses=ins, outputs=outs)
    return _Region(robs, graph.outputs is not None, dynamic, frozen, graph.partial)


def _probe_mutation_epilogue(
    capture: CaptureResult,
    reg: _Region,
    rw_forms: Sequence[RuntimeWrapperForm],
    keep_input_mutations: bool,
) -> ProbeResult:
    name = "mutation_epilogue"
    sources = _sources(capture, name)
    placement = _runtime_indices(rw_forms)
    meta = mutation_meta(
        reg.obs, keep_input_mutations=keep_input_mutations, runtime_indices=placement
    )
    if not sources:
        if placement:
            note = (
                f"the runtime wrapper applies mutations to inputs {placement}, but no "
                "mutation epilogue source was captured"
            )
        else:
            note = "no mutation epilogue generated in this case"
        return ProbeResult(name, "absent", note=note)
    note = (
        "placement read from the build's runtime wrapper"
        if placement is not None
        else "placement predicted (no runtime wrapper captured)"
    )
    source, _ = mutation_epilogue.codegen_mutation_epilogue(meta)
    return _compare(
        name, ("mutation_epilogue",), source, sources, mutation_epilogue.structural_form, note=note
    )


def _placed(
    reference: RuntimeWrapperForm,
    build: RuntimeWrapperForm,
    meta: RuntimeWrapperMeta,
    reg: _Region,
) -> RuntimeWrapperForm:
    """The reference form with the build's placement facts (which inputs the training call
    detaches, autocast; arity, alias replay and the alias bases it captures when the
    region's outputs are not known; dynamic dims when not known); see Note [Probe: what
    is compared with what]."""
    changes: dict[str, Any] = {"detach": build.detach, "disable_autocast": build.disable_autocast}
    if reg.partial:
        changes["version_bumps"] = build.version_bumps
    if not reg.outputs_known:
        mutated = set(meta.mutated_runtime)
        changes["captured_inputs"] = tuple(
            (k, v) for k, v in reference.captured_inputs if k in mutated
        ) + tuple((k, v) for k, v in build.captured_inputs if k not in mutated)
        changes["expected_outputs"] = build.expected_outputs
        changes["replays_aliases"] = build.replays_aliases
    if reg.dynamic_outputs is None:
        changes["dynamic_dims"] = build.dynamic_dims
    return replace(reference, **changes)


def _noop(*_: object) -> Any:
    return None


def _runtime_meta(
    reg: _Region, keep_input_mutations: bool, placement: list[int] | None
) -> RuntimeWrapperMeta:
    meta = runtime_wrapper_meta(
        reg.obs, keep_input_mutations=keep_input_mutations, runtime_indices=placement
    )
    if reg.dynamic_outputs is not None:
        outputs: tuple[OutputSpec, ...] = tuple(
            replace(o, dynamic_dims=reg.dynamic_outputs[i]) for i, o in enumerate(meta.outputs)
        )
        meta = replace(meta, outputs=outputs)
    return meta


def _probe_runtime_wrapper(
    capture: CaptureResult,
    reg: _Region,
    rw_forms: Sequence[RuntimeWrapperForm],
    keep_input_mutations: bool,
) -> ProbeResult:
    name = "runtime_wrapper"
    rw_sources = _sources(capture, "runtime_wrapper_orchestration")
    alias_sources = _sources(capture, "output_alias_wrapper")
    if not rw_sources:
        note = "only an alias wrapper was captured" if alias_sources else ""
        return ProbeResult(name, "absent", note=note)
    if not rw_forms:
        return _compare(
            name,
            ("runtime_wrapper_orchestration",),
            "",
            rw_sources,
            runtime_wrapper.structural_form,
        )
    meta = _runtime_meta(reg, keep_input_mutations, _runtime_indices(rw_forms))
    source, _ = runtime_wrapper.codegen_runtime_wrapper(
        meta, apply_mutations=_noop, replay_aliases=_noop
    )
    build_form = rw_forms[0]
    read = ["detached inputs", "autocast"]
    if reg.partial:
        read.append("version bumps (the program also ran outside this region)")
    if not reg.outputs_known:
        read.append("graph arity, alias replay")
    if reg.dynamic_outputs is None:
        read.append("dynamic dims")
    result = _compare(
        name,
        ("runtime_wrapper_orchestration",),
        source,
        rw_sources,
        lambda src: (
            _placed(runtime_wrapper.structural_form(src), build_form, meta, reg)
            if src == source
            else runtime_wrapper.structural_form(src)
        ),
        note=f"{', '.join(read)} read from the build's wrapper",
    )
    if result.status != "conforms" or not alias_sources:
        return result
    alias_source, _ = runtime_wrapper.codegen_alias_fn(meta)
    alias = _compare(
        name,
        ("runtime_wrapper_orchestration", "output_alias_wrapper"),
        alias_source,
        alias_sources,
        runtime_wrapper.alias_structural_form,
    )
    if alias.status != "conforms":
        return alias
    return ProbeResult(
        name,
        "conforms",
        alias.artifacts,
        "",
        f"{result.reference_source}\n\n{alias.reference_source}",
        f"{result.build_source}\n\n{alias.build_source}",
        result.note,
    )


def _probe_subclass_wrapper(
    capture: CaptureResult,
    reg: _Region,
    rw_forms: Sequence[RuntimeWrapperForm],
    keep_input_mutations: bool,
) -> ProbeResult:
    name = "subclass_wrapper"
    sources = _sources(capture, name)
    meta = subclass_wrapper_meta(
        reg.obs,
        frozen_inputs=reg.frozen,
        keep_input_mutations=keep_input_mutations,
        runtime_indices=_runtime_indices(rw_forms),
    )
    if not sources:
        return ProbeResult(name, "absent", note="" if meta else "program has no subclasses")
    if meta is None:
        return ProbeResult(
            name,
            "diverges",
            ("subclass_wrapper",),
            "build wraps subclasses, but the program has none",
            "",
            sources[0],
        )
    source, _ = subclass_wrapper.codegen_subclass_wrapper(meta)
    return _compare(name, ("subclass_wrapper",), source, sources, subclass_wrapper.structural_form)


def _probe_backward_unwrap(capture: CaptureResult, reg: _Region) -> ProbeResult:
    name = "backward_unwrap"
    sources = _sources(capture, "backward_subclass_unwrap")
    if not sources:
        return ProbeResult(name, "absent")
    meta = backward_unwrap_meta(reg.obs) or backward_unwrap.BackwardUnwrapMeta(())
    source, _ = backward_unwrap.codegen_backward_unwrap(meta)
    return _compare(
        name, ("backward_subclass_unwrap",), source, sources, backward_unwrap.structural_form
    )


def _probe_scalar(sweep: ScalarSweep | None) -> ProbeResult:
    name = "scalar_recompile"
    if sweep is None:
        return ProbeResult(name, "absent", note="no value sweep in this case")
    with_fix = predict_compile_count(
        sweep.uses,
        sweep.n_values,
        has_fix=True,
        recompile_limit=sweep.recompile_limit,
        dynamic=sweep.dynamic,
        values=sweep.values,
    )
    without = predict_compile_count(
        sweep.uses,
        sweep.n_values,
        has_fix=False,
        recompile_limit=sweep.recompile_limit,
        dynamic=sweep.dynamic,
        values=sweep.values,
    )
    seen = sweep.compile_count
    uses = "; ".join(u.describe() for u in sweep.uses.uses) or "no float uses"
    detail = (
        f"{sweep.n_values} values, {seen} compiles; predicted {with_fix} with the fix, "
        f"{without} without ({uses})"
    )
    if seen == with_fix:
        return ProbeResult(name, "conforms", note=detail)
    if seen == without:
        return ProbeResult(name, "absent", note=f"build recompiles as before the fix: {detail}")
    return ProbeResult(
        name, "diverges", diff=f"compiles: expected {with_fix}, saw {seen}", note=detail
    )


def _probe_one(
    capture: CaptureResult,
    observation: Observation,
    graph: GraphSignature | None,
    keep_input_mutations: bool,
) -> tuple[ProbeResult, ...]:
    reg = _to_region(observation, graph)
    rw_forms = _runtime_forms(_sources(capture, "runtime_wrapper_orchestration"))
    return (
        _probe_mutation_epilogue(capture, reg, rw_forms, keep_input_mutations),
        _probe_runtime_wrapper(capture, reg, rw_forms, keep_input_mutations),
        _probe_subclass_wrapper(capture, reg, rw_forms, keep_input_mutations),
        _probe_backward_unwrap(capture, reg),
    )


def _merge(results: Sequence[ProbeResult], many: bool) -> ProbeResult:
    """One verdict from several compiles: the first divergence, else a conformance, else
    absent. With several compiles the note says which one."""

    def tagged(k: int) -> ProbeResult:
        r = results[k]
        return replace(r, note=f"compile {k}: {r.note}" if r.note else f"compile {k}") if many else r

    for status in ("diverges", "conforms"):
        hits = [k for k, r in enumerate(results) if r.status == status]
        if hits:
            return tagged(hits[0])
    return tagged(0)


def probe_compiles(
    compiles: Sequence[tuple[CaptureResult, Observation, GraphSignature | None]],
    *,
    scalar: ScalarSweep | None = None,
    keep_input_mutations: bool = True,
    seen: CaptureResult | None = None,
) -> ProbeReport:
    """Compare every behaviour, one compile at a time (see Note [Probe: what is compared
    with what]).

    ``compiles``: per compile, the sources captured while it compiled, the observation of
    the call that triggered it, and its region (``None``: program terms). ``seen``: the
    whole capture, for the report's list of what the build generated (default: the union).
    """
    if not compiles:
        raise ValueError("probe_compiles needs at least one compile")
    per = [_probe_one(c, o, g, keep_input_mutations) for c, o, g in compiles]
    merged = tuple(_merge([p[b] for p in per], len(per) > 1) for b in range(len(per[0])))
    if seen is None:
        seen = CaptureResult(
            [a for c, _, _ in compiles for a in c.artifacts],
            [u for c, _, _ in compiles for u in c.unrecognised],
        )
    return ProbeReport(
        (*merged, _probe_scalar(scalar)), seen.names(), seen.forms(), tuple(seen.unrecognised)
    )


def probe(
    capture: CaptureResult,
    observation: Observation,
    *,
    graph: GraphSignature | None = None,
    scalar: ScalarSweep | None = None,
    keep_input_mutations: bool = True,
) -> ProbeReport:
    """Compare every behaviour for one compile (see Note [Probe: what is compared with what]).

    ``capture``: what :func:`conformance.capture.capture_generated_sources` saw during the
    compile. ``observation``: :func:`reference_impl.observe.observe` of the same program on
    an identical copy of the inputs. ``graph``: the compile's region in program terms
    (``None``: the program's own signature, as for ``aot_function``). ``keep_input_mutations``:
    the compile's setting (True for ``torch.compile``; ``aot_function`` defaults to False),
    used only for predictions.
    """
    return probe_compiles(
        [(capture, observation, graph)],
        scalar=scalar,
        keep_input_mutations=keep_input_mutations,
        seen=capture,
    )
