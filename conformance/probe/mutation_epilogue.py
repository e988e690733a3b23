"""Probe of the mutation epilogue: the build's generated `_apply_mutations` against the reference's
(see conformance/behaviors, MUTATION_EPILOGUE)."""

from __future__ import annotations

from conformance.behaviors import MUTATION_EPILOGUE
from conformance.probe.judge import compare, sources
from conformance.probe.region import CompileToProbe
from conformance.probe.runtime_wrapper import runtime_indices
from conformance.results import ProbeResult
from reference_impl import mutation_epilogue
from reference_impl.meta import mutation_meta

BEHAVIOR = MUTATION_EPILOGUE  # the behaviour this probe implements: conformance.probe.PROBES is built from it
(EPILOGUE,) = (a.name for a in BEHAVIOR.artifacts)


def probe(c: CompileToProbe) -> ProbeResult:
    capture, reg, rw_forms, keep_input_mutations = c.capture, c.region, c.rw_forms, c.keep_input_mutations
    name = BEHAVIOR.id
    found = sources(capture, EPILOGUE)
    placement = runtime_indices(rw_forms)
    meta = mutation_meta(
        reg.obs, keep_input_mutations=keep_input_mutations, runtime_indices=placement
    )
    if not found:
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
    return compare(
        name, (EPILOGUE,), source, found, mutation_epilogue.structural_form, note=note
    )


