"""Internals probe: compare what a build generated with what ``reference_impl`` generates.

Note [Probe: what is compared with what]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Input: the sources captured during the case's compile (:mod:`conformance.capture`) and the
:class:`~reference_impl.observe.Observation` of the same program's eager run. For each
behaviour the probe reduces the build's source and the reference's source (generated from
metadata) to the behaviour's structural form (Note [Structural form]) and compares.

* Presence comes only from what was captured: no artifact, ``absent``; never a version test.
* The metadata is the oracle's (how each input was mutated, how outputs alias, subclass
  trees, float uses). Two *placement* facts are compiler choices, not contracts, and are
  read from the build's own runtime wrapper when it was captured: which mutated inputs
  the epilogue applies (the graph may keep the others), and the graph's output arity and
  alias replay. The oracle's prediction is used only when no runtime wrapper was captured.
  Whether each input's *operation* is right (``copy_``, ``as_strided_``, ``set_``, the
  ``requires_grad`` branch) is always the reference's call.
* Every captured instance must match (a case that recompiles yields several).
* ``scalar_recompile`` has no source: the runner passes the observed compile count of a
  value sweep, compared with :func:`~reference_impl.scalar_tensorify.predict_compile_count`
  with the fix (``conforms``) and without it (``absent``: the build lacks the mechanism).

A probe result never fails a case by itself; the runner decides what ``diverges`` means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from conformance.capture import CaptureResult
from reference_impl import backward_unwrap, mutation_epilogue, runtime_wrapper, subclass_wrapper
from reference_impl.observe import (
    Observation,
    backward_unwrap_meta,
    mutation_meta,
    runtime_wrapper_meta,
    subclass_wrapper_meta,
)
from reference_impl.runtime_wrapper import RuntimeWrapperForm
from reference_impl.scalar_tensorify import ScalarProgramMeta, predict_compile_count
from reference_impl.structural import StructuralError, diff_lines, find_function

__all__ = [
    "ARTIFACTS",
    "BEHAVIOURS",
    "ProbeReport",
    "ProbeResult",
    "ScalarSweep",
    "probe",
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


def _probe_mutation_epilogue(
    capture: CaptureResult,
    obs: Observation,
    rw_forms: Sequence[RuntimeWrapperForm],
    keep_input_mutations: bool,
) -> ProbeResult:
    name = "mutation_epilogue"
    sources = _sources(capture, name)
    placement = _runtime_indices(rw_forms)
    meta = mutation_meta(obs, keep_input_mutations=keep_input_mutations, runtime_indices=placement)
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


def _placed(reference: RuntimeWrapperForm, build: RuntimeWrapperForm) -> RuntimeWrapperForm:
    """The reference form with the build's placement facts (arity, alias replay and the
    alias bases it captures); see Note [Probe: what is compared with what]."""
    n_mut = reference.mutation_split or 0
    return replace(
        reference,
        captured_inputs=reference.captured_inputs[:n_mut] + build.captured_inputs[n_mut:],
        expected_outputs=build.expected_outputs,
        replays_aliases=build.replays_aliases,
        dynamic_dims=build.dynamic_dims,
        detach=build.detach,
        disable_autocast=build.disable_autocast,
    )


def _noop(*_: object) -> Any:
    return None


def _probe_runtime_wrapper(
    capture: CaptureResult,
    obs: Observation,
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
    meta = runtime_wrapper_meta(
        obs, keep_input_mutations=keep_input_mutations, runtime_indices=_runtime_indices(rw_forms)
    )
    source, _ = runtime_wrapper.codegen_runtime_wrapper(
        meta, apply_mutations=_noop, replay_aliases=_noop
    )
    build_form = rw_forms[0]
    result = _compare(
        name,
        ("runtime_wrapper_orchestration",),
        source,
        rw_sources,
        lambda src: (
            _placed(runtime_wrapper.structural_form(src), build_form)
            if src == source
            else runtime_wrapper.structural_form(src)
        ),
        note="graph arity, alias replay, detach and dynamic dims read from the build's wrapper",
    )
    if result.status != "conforms" or not alias_sources:
        return result
    alias_meta = runtime_wrapper_meta(
        obs, keep_input_mutations=keep_input_mutations, runtime_indices=_runtime_indices(rw_forms)
    )
    alias_source, _ = runtime_wrapper.codegen_alias_fn(alias_meta)
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


def _probe_subclass_wrapper(capture: CaptureResult, obs: Observation) -> ProbeResult:
    name = "subclass_wrapper"
    sources = _sources(capture, name)
    meta = subclass_wrapper_meta(obs)
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


def _probe_backward_unwrap(capture: CaptureResult, obs: Observation) -> ProbeResult:
    name = "backward_unwrap"
    sources = _sources(capture, "backward_subclass_unwrap")
    if not sources:
        return ProbeResult(name, "absent")
    meta = backward_unwrap_meta(obs) or backward_unwrap.BackwardUnwrapMeta(())
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
    )
    without = predict_compile_count(
        sweep.uses,
        sweep.n_values,
        has_fix=False,
        recompile_limit=sweep.recompile_limit,
        dynamic=sweep.dynamic,
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


def probe(
    capture: CaptureResult,
    observation: Observation,
    *,
    scalar: ScalarSweep | None = None,
    keep_input_mutations: bool = True,
) -> ProbeReport:
    """Compare every behaviour (see Note [Probe: what is compared with what]).

    ``capture``: what :func:`conformance.capture.capture_generated_sources` saw during the
    compile. ``observation``: :func:`reference_impl.observe.observe` of the same program on
    an identical copy of the inputs. ``keep_input_mutations``: the compile's setting (True
    for ``torch.compile``; ``aot_function`` defaults to False), used only for predictions.
    """
    rw_forms = _runtime_forms(_sources(capture, "runtime_wrapper_orchestration"))
    results = (
        _probe_mutation_epilogue(capture, observation, rw_forms, keep_input_mutations),
        _probe_runtime_wrapper(capture, observation, rw_forms, keep_input_mutations),
        _probe_subclass_wrapper(capture, observation),
        _probe_backward_unwrap(capture, observation),
        _probe_scalar(scalar),
    )
    return ProbeReport(results, capture.names(), capture.forms(), tuple(capture.unrecognised))
