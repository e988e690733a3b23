"""Internals probe: compare what a build generated with what ``reference_impl`` generates.

Note [Probe: what is compared with what]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Input: the sources captured during the case's compile (:mod:`conformance.probe.capture`) and the
:class:`~reference_impl.observe.Observation` of the same program's eager run. For each
behaviour the probe reduces the build's source and the reference's source (generated from
metadata) to the behaviour's structural form (Note [Structural form]) and compares.

* Presence comes only from what was captured: no artifact, ``absent``; never a version test.
* Generated code indexes the compiled *region*, not the program: dynamo orders graph inputs
  by first use, inserts symbolic sizes and tensorified floats, AOTAutograd lifts module
  parameters in front, and the graph returns only the values it computed. The caller
  describes each compile's region with a :class:`GraphSignature` (the runner records it
  by identity from the backend's example inputs and the graph's first outputs), and the
  observation is re-expressed in region terms (:func:`reference_impl.region.region`)
  before any reference source is generated; AOTAutograd's synthetic bases (overlapping
  inputs, one mutated, passed as their common base) are applied to it too
  (:func:`reference_impl.region.synthetic_bases`). Without a signature the program's
  terms are used (``aot_function``, recorded fixtures).
* Region values the program does not see are described from dynamo's trace (eager
  semantics on fake values, before AOTAutograd): an unseen input's subclass structure (an
  inner level of a subclass argument, a parameter lifted by path), an unseen output that is
  an input or a view of one (a reassigned buffer), an unseen output's subclass structure,
  and, for a ``partial`` region, which inputs the region itself writes to (a fake value's
  version counter), which decides a training graph in place of the whole call's mutations.
* The metadata is the oracle's (how each input was mutated, how outputs alias, subclass
  trees, float uses). *Placement* facts are compiler choices, not contracts: which
  values form the region, which sizes are symbolic and which parameters inductor froze
  come with the signature; which mutated inputs the epilogue applies (the graph may keep
  the others), which inputs the training call detaches and whether autocast is disabled
  are read from the build's own runtime wrapper when it was captured (the oracle's
  prediction otherwise); the graph's output arity and alias replay too, but only when the
  signature does not say which program outputs the graph returns; and the version bumps
  when the signature is ``partial`` (the program also ran outside the region during the
  call: a graph break, a ``set_`` or ``out=`` resize dynamo runs before the graph) and the
  trace does not say which inputs the region itself writes (when it does, those writes
  are the region's mutations and the bumps are the reference's). Whether each input's
  *operation* is right (``copy_``, ``as_strided_``, ``set_``, the ``requires_grad``
  branch), which slot it reads, the type checks, the unwrapped arguments and the alias
  regeneration are always the reference's call.
* Every captured instance must match. A case that recompiles yields one set of sources
  per compile; each is compared with the reference for its own region and its own call
  (:func:`probe_compiles`).
* ``scalar_recompile`` has no source: the runner passes the observed compile count of a
  value sweep, compared with :func:`~reference_impl.scalar_recompile.predict_compile_count`
  with the fix (``conforms``) and without it (``absent``: the build lacks the mechanism).

A probe result never fails a case by itself; the runner decides what ``diverges`` means
(``--strict-internals``). Each behaviour's probe is ``conformance/probe/<behaviour>.py``, run
for every behaviour that declares generated artifacts (conformance/behaviors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from conformance.behaviors import BEHAVIORS
from conformance.probe import backward_unwrap, mutation_epilogue, runtime_wrapper, scalar_recompile, subclass_wrapper
from conformance.probe.capture import CaptureResult
from conformance.probe.judge import sources
from conformance.probe.region import (
    CompileToProbe,
    GraphSignature,
    OutputSample,
    match_outputs,
    to_region,
)
from conformance.probe.runtime_wrapper import runtime_forms
from conformance.probe.scalar_recompile import ScalarSweep
from conformance.results import ProbeRecord, ProbeResult, ProbeStatus
from reference_impl.features import MODELS, features_of, not_modelled
from reference_impl.observe import Observation

__all__ = [
    "GraphSignature",
    "OutputSample",
    "ProbeRecord",
    "ProbeResult",
    "ProbeStatus",
    "ScalarSweep",
    "match_outputs",
    "probe",
    "probe_compiles",
]

# the behaviours probed per compile, from the build's generated code (the scalar fix has none)
COMPILED = tuple(b for b in BEHAVIORS if b.artifacts)
# one probe module per behaviour, each saying which it implements (BEHAVIOR); every one but the scalar fix's
# probes a compile (the scalar fix's, a value sweep: probe_compiles below)
PROBE_MODULES = (mutation_epilogue, runtime_wrapper, subclass_wrapper, backward_unwrap, scalar_recompile)
PROBES: dict[str, Callable[[CompileToProbe], ProbeResult]] = {
    m.BEHAVIOR.id: m.probe for m in (mutation_epilogue, runtime_wrapper, subclass_wrapper, backward_unwrap)}


def _probe_one(
    capture: CaptureResult,
    observation: Observation,
    graph: GraphSignature | None,
    keep_input_mutations: bool,
) -> tuple[ProbeResult, ...]:
    one = CompileToProbe(capture, to_region(observation, graph),
                         runtime_forms(sources(capture, runtime_wrapper.ORCHESTRATION)), keep_input_mutations)
    found = features_of(observation.raw_args, observation.raw_outputs)
    return tuple(_modelled(PROBES[b.id](one), not_modelled(found, MODELS[b.id])) for b in COMPILED)


def _modelled(result: ProbeResult, outside: str) -> ProbeResult:
    """A comparison on a program the behaviour's reference does not model says nothing either way: not-modelled,
    naming the features (what the comparison said is kept in the note, the diff and the sources)."""
    if not outside or result.status == "absent":
        return result
    said = f"; compared anyway, the build's code {result.status}"
    return replace(result, status="not-modelled", note=f"the reference does not model {outside}{said}"
                   + (f" ({result.note})" if result.note else ""))


def _merge(results: Sequence[ProbeResult], many: bool) -> ProbeResult:
    """One status from several compiles: the first divergence, else the first of an unknown form, of
    a program not modelled, of a conformance, else absent. With several compiles the note says which one."""

    def tagged(k: int) -> ProbeResult:
        r = results[k]
        return replace(r, note=f"compile {k}: {r.note}" if r.note else f"compile {k}") if many else r

    for status in ("diverges", "unknown-form", "not-modelled", "conforms"):
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
) -> ProbeRecord:
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
            unrecognised=[u for c, _, _ in compiles for u in c.unrecognised],
        )
    return ProbeRecord(results=(*merged, scalar_recompile.probe(scalar)), seen=seen.names(), forms=seen.forms(),
                       unrecognised=tuple(seen.unrecognised))


def probe(
    capture: CaptureResult,
    observation: Observation,
    *,
    graph: GraphSignature | None = None,
    scalar: ScalarSweep | None = None,
    keep_input_mutations: bool = True,
) -> ProbeRecord:
    """Compare every behaviour for one compile (see Note [Probe: what is compared with what]).

    ``capture``: what :func:`conformance.probe.capture.capture_generated_sources` saw during the
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
