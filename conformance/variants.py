"""A case's variants: one per device x backend x mode (x keep_inference_input_mutations for
aot_function), in a fixed order, narrowed by the run's filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.core.entry import AOT_FUNCTION, KIIM_LABEL
from conformance.devices import default_devices, device_type
from conformance.schema import Case


@dataclass(frozen=True)
class Variant:
    device: str
    backend: str
    mode: str
    kiim: bool = False

    @property
    def backend_label(self) -> str:
        return KIIM_LABEL if self.kiim else self.backend

    @property
    def label(self) -> str:
        return f"{self.device}-{self.backend_label}-{self.mode}"


def variants_of(
    case: Case,
    *,
    devices: Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
) -> list[Variant]:
    """The case's variants in a fixed order, narrowed by the run's filters (device types match)."""
    out = []
    wanted_types = {device_type(d) for d in devices} if devices else None
    for dev in case.devices or default_devices():
        if wanted_types is not None and device_type(dev) not in wanted_types and dev not in (devices or ()):
            continue
        for backend in case.backends:
            kiims = case.compile.keep_inference_input_mutations if backend == AOT_FUNCTION else (False,)
            for kiim in kiims:
                label = Variant(dev, backend, "inference", kiim).backend_label
                if backends and label not in backends:
                    continue
                out += [Variant(dev, backend, mode, kiim) for mode in case.modes if not modes or mode in modes]
    return out
