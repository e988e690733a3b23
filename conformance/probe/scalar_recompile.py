"""Probe of the scalar-tensorify fix: the compile count of a value sweep against the reference's
prediction with and without the fix (see conformance/behaviors, SCALAR_RECOMPILE)."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.behaviors import SCALAR_RECOMPILE
from conformance.results import ProbeResult
from reference_impl.scalar_recompile import FloatUseKind, ScalarProgramMeta, predict_compile_count

BEHAVIOR = SCALAR_RECOMPILE  # the behaviour this probe implements: conformance.probe.PROBES is built from it


@dataclass(frozen=True)
class ScalarSweep:
    """A value sweep the runner performed: the program's float uses and what it observed."""

    uses: ScalarProgramMeta
    n_values: int
    compile_count: int
    recompile_limit: int = 8
    dynamic: bool | None = None
    values: tuple[dict[str, float], ...] | None = None  # per call, the swept floats


# float uses whose effect on compiles lies outside the program's graphs
NOT_MODELLED = frozenset({FloatUseKind.ESCAPES, FloatUseKind.RETURNED})


def predicted(sweep: ScalarSweep, *, has_fix: bool = True) -> int:
    """The reference's compile count for the sweep (one compiled region), with or without the fix."""
    return predict_compile_count(sweep.uses, sweep.n_values, has_fix=has_fix, recompile_limit=sweep.recompile_limit,
                                 dynamic=sweep.dynamic, values=sweep.values)


def probe(sweep: ScalarSweep | None) -> ProbeResult:
    name = BEHAVIOR.id
    if sweep is None:
        return ProbeResult(name, "absent", note="no value sweep in this case")
    outside = [u for u in sweep.uses.uses if u.kind in NOT_MODELLED]
    if outside:
        uses = "; ".join(u.describe() for u in outside)
        return ProbeResult(name, "not-modelled", note=f"the reference does not follow a float the program stores or "
                           f"returns without a tensor op ({uses})")
    with_fix, without = predicted(sweep), predicted(sweep, has_fix=False)
    seen = sweep.compile_count
    uses = "; ".join(u.describe() for u in sweep.uses.uses) or "no float uses"
    detail = (
        f"{sweep.n_values} values, {seen} compiles; predicted {with_fix} with the fix, "
        f"{without} without ({uses})"
    )
    if seen == with_fix:
        return ProbeResult(name, "conforms", note=detail)
    if seen == without:
        return ProbeResult(name, "absent", note=f"build recompiles as before the fix: {detail}")
    return ProbeResult(
        name, "diverges", diff=f"compiles: expected {with_fix}, saw {seen}", note=detail
    )


