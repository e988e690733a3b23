"""Probe of the mutation epilogue: the build's generated `_apply_mutations` against the reference's
(see conformance/behaviors.py, MUTATION_EPILOGUE)."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.capture import CaptureResult
from conformance.probe.region import Region
from conformance.probe.runtime_wrapper import runtime_indices
from conformance.probe.verdict import ProbeResult, compare, sources
from reference_impl import mutation_epilogue
from reference_impl.meta import mutation_meta
from reference_impl.runtime_wrapper_form import RuntimeWrapperForm


def probe(
    capture: CaptureResult,
    reg: Region,
    rw_forms: Sequence[RuntimeWrapperForm],
    keep_input_mutations: bool,
) -> ProbeResult:
    name = "mutation_epilogue"
    found = sources(capture, name)
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
        name, ("mutation_epilogue",), source, found, mutation_epilogue.structural_form, note=note
    )


