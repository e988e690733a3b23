"""A case's variants: one per device x backend x mode (x keep_inference_input_mutations for
aot_function), in a fixed order, narrowed by the run's filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.core.entry import KIIM_ENTRIES
from conformance.data.devices import default_devices, device_type
from conformance.schema import Case


@dataclass(frozen=True)
class Variant:
    """One item of a case: where it runs, how it is compiled, inference or training."""

    device: str
    backend: str
    mode: str
    kiim: bool = False

    @property
    def backend_label(self) -> str:
        return f"{self.backend}-kiim" if self.kiim else self.backend

    @property
    def label(self) -> str:
        return f"{self.device}-{self.backend_label}-{self.mode}"


def variants_of(
    case: Case,
    *,
    devices: Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
    extra_devices: Sequence[str] = (),
    extra_backends: Sequence[str] = (),
) -> list[Variant]:
    """The case's variants in a fixed order, narrowed by the run's filters (device types match).

    `extra_devices`/`extra_backends` (from plugins, conformance/pytest_plugin/hookspecs.py) join the defaults of a
    case that does not name its own."""
    out = []
    wanted_types = {device_type(d) for d in devices} if devices else None
    all_devices = case.devices or tuple(dict.fromkeys((*default_devices(), *extra_devices)))
    own = "backends" in case.model_fields_set
    all_backends = case.backends if own else tuple(dict.fromkeys((*case.backends, *extra_backends)))
    for dev in all_devices:
        if wanted_types is not None and device_type(dev) not in wanted_types and dev not in (devices or ()):
            continue
        for backend in all_backends:
            kiims = case.compile.keep_inference_input_mutations if backend in KIIM_ENTRIES else (False,)
            for kiim in kiims:
                label = Variant(dev, backend, "inference", kiim).backend_label
                if backends and label not in backends:
                    continue
                out += [Variant(dev, backend, mode, kiim) for mode in case.modes if not modes or mode in modes]
    return out
