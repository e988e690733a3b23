"""Probe of the subclass wrapper: the build's `inner_fn` against the reference's (see
conformance/behaviors.py, SUBCLASS_WRAPPER)."""

from __future__ import annotations

from conformance.probe.region import CompileToProbe
from conformance.probe.runtime_wrapper import runtime_indices
from conformance.probe.verdict import compare, sources
from conformance.results import ProbeResult
from reference_impl import subclass_wrapper
from reference_impl.meta import subclass_wrapper_meta


def probe(c: CompileToProbe) -> ProbeResult:
    capture, reg, rw_forms, keep_input_mutations = c.capture, c.region, c.rw_forms, c.keep_input_mutations
    name = "subclass_wrapper"
    found = sources(capture, name)
    meta = subclass_wrapper_meta(
        reg.obs,
        frozen_inputs=reg.frozen,
        keep_input_mutations=keep_input_mutations,
        runtime_indices=runtime_indices(rw_forms),
    )
    if not found:
        return ProbeResult(name, "absent", note="" if meta else "program has no subclasses")
    if meta is None:
        return ProbeResult(
            name,
            "diverges",
            ("subclass_wrapper",),
            "build wraps subclasses, but the program has none",
            "",
            found[0],
        )
    source, _ = subclass_wrapper.codegen_subclass_wrapper(meta)
    return compare(name, ("subclass_wrapper",), source, found, subclass_wrapper.structural_form)


