"""Probe of the subclass wrapper: the build's `inner_fn` against the reference's (see
conformance/behaviors, SUBCLASS_WRAPPER)."""

from __future__ import annotations

import re
from dataclasses import replace

from conformance.behaviors import SUBCLASS_WRAPPER
from conformance.probe.judge import compare, sources
from conformance.probe.region import CompileToProbe
from conformance.probe.runtime_wrapper import runtime_indices
from conformance.results import ProbeResult
from reference_impl import subclass_wrapper
from reference_impl.meta import subclass_wrapper_meta
from reference_impl.terms import StructuralError

BEHAVIOR = SUBCLASS_WRAPPER  # the behaviour this probe implements: conformance.probe.PROBES is built from it
(WRAPPER,) = (a.name for a in BEHAVIOR.artifacts)


def probe(c: CompileToProbe) -> ProbeResult:
    capture, reg, rw_forms, keep_input_mutations = c.capture, c.region, c.rw_forms, c.keep_input_mutations
    name = BEHAVIOR.id
    found = sources(capture, WRAPPER)
    meta = subclass_wrapper_meta(
        reg.obs,
        frozen_inputs=reg.frozen,
        keep_input_mutations=keep_input_mutations,
        runtime_indices=runtime_indices(rw_forms),
        program_outputs=not reg.outputs_known,
    )
    if not found:
        return ProbeResult(name, "absent", note="" if meta else "program has no subclasses")
    if meta is None:
        return ProbeResult(
            name,
            "diverges",
            (WRAPPER,),
            "build wraps subclasses, but the program has none",
            "",
            found[0],
        )
    note = ""
    saved = _saved_by_build(found[0])
    if meta.num_saved_activations is not None and saved is not None and saved != meta.num_saved_activations:
        # How many activations a training graph saves (symbolic sizes too) is the partitioner's choice.
        meta = replace(meta, num_saved_activations=saved)
        note = "saved activations counted from the build's wrapper"
    conventions: dict[str, str] = {
        layout: subclass_wrapper.codegen_subclass_wrapper(replace(meta, layout=layout))[0]
        for layout in subclass_wrapper.SYMINT_LAYOUTS
    }
    return compare(name, (WRAPPER,), conventions, found, subclass_wrapper.structural_form, note=note)


_SAVED = re.compile(r"\+ tuple\(\$compiled_fn\[\(len\(\$compiled_fn\) - (\d+)\):\]\)\)$")


def _saved_by_build(source: str) -> int | None:
    """The number of saved activations a build's wrapper returns after the user outputs,
    where it counts them from the end."""
    try:
        lines = subclass_wrapper.structural_form(source).describe()
    except StructuralError:
        return None
    found = _SAVED.search(lines[-1]) if lines else None
    return int(found.group(1)) if found else None


