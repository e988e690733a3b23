"""Probe of the runtime wrapper: the build's `_runtime_wrapper` (and `_alias_fn`) against the
reference's (see conformance/behaviors, RUNTIME_WRAPPER)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from conformance.behaviors import RUNTIME_WRAPPER
from conformance.probe.judge import compare, sources
from conformance.probe.region import CompileToProbe, Region
from conformance.results import ProbeResult
from reference_impl import runtime_wrapper
from reference_impl.meta import runtime_wrapper_meta
from reference_impl.runtime_wrapper import OutputSpec, RuntimeWrapperMeta
from reference_impl.runtime_wrapper_form import RuntimeWrapperForm, alias_structural_form, structural_form
from reference_impl.terms import StructuralError

BEHAVIOR = RUNTIME_WRAPPER  # the behaviour this probe implements: conformance.probe.PROBES is built from it
ORCHESTRATION, ALIAS = (a.name for a in BEHAVIOR.artifacts)


def runtime_forms(sources: Sequence[str]) -> list[RuntimeWrapperForm]:
    forms = []
    for s in sources:
        try:
            forms.append(structural_form(s))
        except StructuralError:
            continue
    return forms


def runtime_indices(forms: Sequence[RuntimeWrapperForm]) -> list[int] | None:
    """Inputs the build's epilogue applies: the first ``split`` captured inputs."""
    if not forms:
        return None
    form = forms[0]
    split = form.mutation_split or 0
    return [slot for _, slot in form.captured_inputs[:split]]


def _placed(
    reference: RuntimeWrapperForm,
    build: RuntimeWrapperForm,
    meta: RuntimeWrapperMeta,
    reg: Region,
) -> RuntimeWrapperForm:
    """The reference form with the build's placement facts (which inputs the training call
    detaches, autocast; arity, alias replay and the alias bases it captures when the
    region's outputs are not known; dynamic dims when not known); see Note [Probe: what
    is compared with what]."""
    changes: dict[str, Any] = {"detach": build.detach, "disable_autocast": build.disable_autocast}
    if reg.partial and reg.writes is None:
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


def _view_replay() -> bool:
    """The user's setting in effect (a case's `config:` applies through the probe): replay an
    aliased output's views, or regenerate it with one as_strided. A build without the
    setting replays."""
    import torch._functorch.config as functorch_config  # lazy: start-up

    return bool(getattr(functorch_config, "view_replay_for_aliased_outputs", True))


def _noop(*_: object) -> Any:
    return None


def _runtime_meta(
    reg: Region, keep_input_mutations: bool, placement: list[int] | None
) -> RuntimeWrapperMeta:
    meta = runtime_wrapper_meta(
        reg.obs, keep_input_mutations=keep_input_mutations, runtime_indices=placement
    )
    meta = replace(meta, replay_views=_view_replay())
    if reg.partial and reg.writes is not None:
        # the whole call's mutations include those outside the region: bump only its own writes
        meta = replace(meta, mutated_in_graph=tuple(i for i in meta.mutated_in_graph if i in reg.writes))
    kept = {k for k in reg.unseen_writes if placement is None or k not in placement}
    if kept and meta.keep_input_mutations:
        meta = replace(meta, mutated_in_graph=tuple(sorted({*meta.mutated_in_graph, *kept})))
    if reg.dynamic_outputs is not None:
        outputs: tuple[OutputSpec, ...] = tuple(
            replace(o, dynamic_dims=reg.dynamic_outputs[i]) for i, o in enumerate(meta.outputs)
        )
        meta = replace(meta, outputs=outputs)
    return meta


def probe(c: CompileToProbe) -> ProbeResult:
    capture, reg, rw_forms, keep_input_mutations = c.capture, c.region, c.rw_forms, c.keep_input_mutations
    name = BEHAVIOR.id
    rw_sources = sources(capture, ORCHESTRATION)
    alias_sources = sources(capture, ALIAS)
    if not rw_sources:
        note = "only an alias wrapper was captured" if alias_sources else ""
        return ProbeResult(name, "absent", note=note)
    if not rw_forms:
        return compare(
            name,
            (ORCHESTRATION,),
            "",
            rw_sources,
            structural_form,
        )
    meta = _runtime_meta(reg, keep_input_mutations, runtime_indices(rw_forms))
    source, _ = runtime_wrapper.codegen_runtime_wrapper(
        meta, apply_mutations=_noop, replay_aliases=_noop
    )
    build_form = rw_forms[0]
    read = ["detached inputs", "autocast"]
    if reg.partial and reg.writes is None:
        read.append("version bumps (the program also ran outside this region)")
    if not reg.outputs_known:
        read.append("graph arity, alias replay")
    if reg.dynamic_outputs is None:
        read.append("dynamic dims")
    result = compare(
        name,
        (ORCHESTRATION,),
        source,
        rw_sources,
        lambda src: (
            _placed(structural_form(src), build_form, meta, reg)
            if src == source
            else structural_form(src)
        ),
        note=f"{', '.join(read)} read from the build's wrapper",
    )
    if result.status != "conforms" or not alias_sources:
        return result
    alias_source, _ = runtime_wrapper.codegen_alias_fn(meta)
    alias = compare(
        name,
        (ORCHESTRATION, ALIAS),
        alias_source,
        alias_sources,
        alias_structural_form,
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


