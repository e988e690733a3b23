"""Probe of the backward unwrap: the build's `unwrap_fn` against the reference's identity (see
conformance/behaviors.py, BACKWARD_UNWRAP)."""

from __future__ import annotations

from conformance.probe.region import CompileToProbe
from conformance.probe.verdict import compare, sources
from conformance.results import ProbeResult
from reference_impl import backward_unwrap
from reference_impl.meta import backward_unwrap_meta


def probe(c: CompileToProbe) -> ProbeResult:
    capture, reg = c.capture, c.region
    name = "backward_unwrap"
    found = sources(capture, "backward_subclass_unwrap")
    if not found:
        return ProbeResult(name, "absent")
    meta = backward_unwrap_meta(reg.obs) or backward_unwrap.BackwardUnwrapMeta(())
    source, _ = backward_unwrap.codegen_backward_unwrap(meta)
    return compare(
        name, ("backward_subclass_unwrap",), source, found, backward_unwrap.structural_form
    )


