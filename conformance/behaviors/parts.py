"""Each behaviour with its parts, as objects: what `torch-conformance behaviors` prints.

Every part says which behaviour it serves where the part is declared: a probe module its `BEHAVIOR`
(conformance/probe), an oracle check its `behaviors` (conformance/core/checks.py), a seeded fault its `behavior`
(conformance/selftest/faults.py), a bench table its `behavior` (conformance/bench/suites.py). The reference
implementation cannot say it (reference_impl imports nothing of the harness), so it is named here, once. This
module only gathers; it imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import reference_impl.backward_unwrap
import reference_impl.mutation_epilogue
import reference_impl.runtime_wrapper
import reference_impl.scalar_recompile
import reference_impl.subclass_wrapper
from conformance.behaviors import (
    BACKWARD_UNWRAP,
    BEHAVIORS,
    MUTATION_EPILOGUE,
    RUNTIME_WRAPPER,
    SCALAR_RECOMPILE,
    SUBCLASS_WRAPPER,
    Behavior,
)
from conformance.bench.suites import TABLES, BenchTable
from conformance.core.checks import CHECKS, Check
from conformance.probe import PROBE_MODULES
from conformance.selftest.faults import FAULTS, Fault

REFERENCES: dict[Behavior, ModuleType] = {
    MUTATION_EPILOGUE: reference_impl.mutation_epilogue,
    RUNTIME_WRAPPER: reference_impl.runtime_wrapper,
    SUBCLASS_WRAPPER: reference_impl.subclass_wrapper,
    BACKWARD_UNWRAP: reference_impl.backward_unwrap,
    SCALAR_RECOMPILE: reference_impl.scalar_recompile,
}


@dataclass(frozen=True)
class Parts:
    behavior: Behavior
    reference: ModuleType
    probe: ModuleType  # the probe module (its `probe`, or the scalar fix's sweep)
    checks: tuple[Check, ...]  # the oracle checks that speak to it (those that speak to every contract aside)
    faults: tuple[Fault, ...]
    bench: BenchTable | None

    def to_json(self) -> dict[str, object]:
        b = self.behavior
        return {"id": b.id, "title": b.title, "upstream": b.upstream, "contract": b.contract,
                "reference": self.reference.__name__, "probe": self.probe.__name__,
                "artifacts": [a.name for a in b.artifacts], "checks": [c.id for c in self.checks],
                "faults": [f.name for f in self.faults], "bench": self.bench.title if self.bench else None}


def _parts(b: Behavior) -> Parts:
    (probe,) = [m for m in PROBE_MODULES if m.BEHAVIOR is b]
    return Parts(b, REFERENCES[b], probe, tuple(c for c in CHECKS.values() if b.id in c.behaviors),
                 tuple(f for f in FAULTS.values() if f.behavior is b),
                 next((t for t in TABLES if t.behavior is b), None))


PARTS: tuple[Parts, ...] = tuple(_parts(b) for b in BEHAVIORS)
