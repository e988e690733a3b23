"""Probe of the backward unwrap: the build's `unwrap_fn` against the reference's identity (see
conformance/behaviors.py, BACKWARD_UNWRAP)."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.capture import CaptureResult
from conformance.probe.region import Region
from conformance.probe.verdict import ProbeResult, compare, sources
from reference_impl import backward_unwrap
from reference_impl.meta import backward_unwrap_meta
from reference_impl.runtime_wrapper_form import RuntimeWrapperForm


def probe(capture: CaptureResult, reg: Region, rw_forms: Sequence[RuntimeWrapperForm] = (),
          keep_input_mutations: bool = True) -> ProbeResult:
    name = "backward_unwrap"
    found = sources(capture, "backward_subclass_unwrap")
    if not found:
        return ProbeResult(name, "absent")
    meta = backward_unwrap_meta(reg.obs) or backward_unwrap.BackwardUnwrapMeta(())
    source, _ = backward_unwrap.codegen_backward_unwrap(meta)
    return compare(
        name, ("backward_subclass_unwrap",), source, found, backward_unwrap.structural_form
    )


