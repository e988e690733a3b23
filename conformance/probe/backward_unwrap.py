"""Probe of the backward unwrap: the build's `unwrap_fn` against the reference's identity (see
conformance/behaviors, BACKWARD_UNWRAP)."""

from __future__ import annotations

from conformance.behaviors import BACKWARD_UNWRAP
from conformance.probe.judge import compare, sources
from conformance.probe.region import CompileToProbe
from conformance.results import ProbeResult
from reference_impl import backward_unwrap
from reference_impl.meta import backward_unwrap_meta

BEHAVIOR = BACKWARD_UNWRAP  # the behaviour this probe implements: conformance.probe.PROBES is built from it
(UNWRAP,) = (a.name for a in BEHAVIOR.artifacts)


def probe(c: CompileToProbe) -> ProbeResult:
    capture, reg = c.capture, c.region
    name = BEHAVIOR.id
    found = sources(capture, UNWRAP)
    if not found:
        return ProbeResult(name, "absent")
    meta = backward_unwrap_meta(reg.obs) or backward_unwrap.BackwardUnwrapMeta(())
    source, _ = backward_unwrap.codegen_backward_unwrap(meta)
    return compare(
        name, (UNWRAP,), source, found, backward_unwrap.structural_form
    )


