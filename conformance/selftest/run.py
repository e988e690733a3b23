"""Run the cases clean, then once per seeded fault, and report which items killed each.

A verdict is only worth something if a broken build would have failed. For every seeded fault
(conformance/selftest/faults.py) the self-check runs the chosen cases with the fault applied and
records the items that *killed* it: a contract check that failed where the clean build passed,
or (for internals faults) the probe reporting `diverges` for the fault's behaviour. A fault
nothing kills is a coverage gap, named with its behaviour and contract. The clean build runs
first; any item that does not pass there is a false alarm (or a known failure) and is left out
of scoring.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from conformance.data.loader import LoadedCase
from conformance.data.variants import Variant
from conformance.results import FAILING, ResultRecord
from conformance.run.runner import RunOptions, run_variant
from conformance.selftest.codegen import codegen_exec_targets
from conformance.selftest.faults import FAULTS, Fault


@dataclass
class Kill:
    case_id: str
    variant: str
    how: str  # "contract: <check> at <where>" or "probe: diverges"


@dataclass
class FaultOutcome:
    name: str
    level: str
    behavior: str
    contract: str
    kills: list[Kill] = field(default_factory=list)
    items_run: int = 0
    applied: int = 0  # internals: items where the build generated the function the fault rewrites
    note: str = ""

    @property
    def killed(self) -> bool:
        return bool(self.kills)

    @property
    def status(self) -> str:
        if self.killed:
            return "killed"
        if self.level == "internals" and not self.applied:
            return "not reached"
        return "survived"


@dataclass
class SelftestReport:
    torch_version: str
    items: int
    clean_pass: int
    false_alarms: list[dict[str, str]]
    faults: list[FaultOutcome]
    wall_seconds: float

    @property
    def gaps(self) -> list[FaultOutcome]:
        """Faults a case reached but no check caught: add or sharpen cases."""
        return [f for f in self.faults if f.status == "survived"]

    @property
    def unreached(self) -> list[FaultOutcome]:
        """Internals faults with nothing to alter: the build never generated that code path."""
        return [f for f in self.faults if f.status == "not reached"]

    @property
    def ok(self) -> bool:
        return not self.false_alarms and not self.gaps

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "torch-conformance.selftest/1",
            "torch_version": self.torch_version,
            "items": self.items,
            "clean_pass": self.clean_pass,
            "false_alarms": self.false_alarms,
            "faults": [{**asdict(f), "status": f.status} for f in self.faults],
            "wall_seconds": round(self.wall_seconds, 1),
        }

    def to_markdown(self) -> str:
        killed = sum(f.status == "killed" for f in self.faults)
        lines = [
            f"# Self-check on torch {self.torch_version}",
            "",
            f"{len(self.faults)} faults, {killed} killed; {self.items} items, {self.clean_pass} pass on the clean "
            f"build, {len(self.false_alarms)} false alarm(s); {self.wall_seconds:.0f} s",
            "",
            "| fault | level | behaviour | contract | status | killed by |",
            "|---|---|---|---|---|---|",
        ]
        for f in self.faults:
            by = ", ".join(f"`{k.case_id}[{k.variant}]` ({k.how})" for k in f.kills[:3])
            more = f" +{len(f.kills) - 3} more" if len(f.kills) > 3 else ""
            note = f" — {f.note}" if f.note else ""
            lines.append(
                f"| {f.name} | {f.level} | {f.behavior} | {f.contract} | {f.status} | {by}{more}{note} |"
            )
        if self.false_alarms:
            lines += ["", "## False alarms (the clean build did not pass)", ""]
            lines += [f"- `{a['case_id']}[{a['variant']}]`: {a['status']}: {a['reason']}" for a in self.false_alarms]
        if self.gaps:
            lines += ["", "## Coverage gaps (reached, not caught)", ""]
            lines += [f"- {g.name} ({g.behavior}: {g.contract})" for g in self.gaps]
        if self.unreached:
            lines += ["", "## Not reached on this build", ""]
            lines += [f"- {g.name} ({g.behavior}): {g.note}" for g in self.unreached]
        return "\n".join(lines) + "\n"


def _kill(record: ResultRecord, fault: Fault) -> str | None:
    if record.status == "fail":
        first = record.mismatches[0] if record.mismatches else None
        return f"contract: {first.check} at {first.where}" if first else "contract: ?"
    if fault.level == "internals" and record.probes.statuses().get(fault.behavior.id) == "diverges":
        return "probe: diverges"
    return None


def _order(items: Sequence[tuple[LoadedCase, Variant]], fault: Fault) -> list[tuple[LoadedCase, Variant]]:
    """The fault's own behaviour first, so an early stop finds the natural killers."""
    return sorted(items, key=lambda it: it[0].case.behavior != fault.behavior.id)


def run_selftest(
    items: Sequence[tuple[LoadedCase, Variant]],
    faults: Sequence[Fault] | None = None,
    *,
    stop_after: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> SelftestReport:
    """Run `items` clean, then once per fault (stopping a fault after `stop_after` kills)."""
    start = time.perf_counter()
    say = progress or (lambda _msg: None)
    faults = list(faults if faults is not None else FAULTS.values())
    clean: list[tuple[LoadedCase, Variant]] = []
    false_alarms: list[dict[str, str]] = []
    for lc, variant in items:
        record = run_variant(lc, variant, RunOptions())
        if record.status == "pass":
            clean.append((lc, variant))
        elif record.status in FAILING:
            false_alarms.append({"case_id": lc.id, "variant": variant.label, "status": record.status,
                                 "reason": record.reason.splitlines()[0] if record.reason else ""})
    say(f"clean build: {len(clean)} of {len(items)} items pass, {len(false_alarms)} false alarm(s)")
    outcomes = []
    exec_helper = bool(codegen_exec_targets())
    for fault in faults:
        outcome = FaultOutcome(fault.name, fault.level, fault.behavior.id, fault.contract)
        if fault.level == "internals" and not exec_helper:
            outcome.note = "this build has no codegen exec helper: it generates nothing to alter"
            outcomes.append(outcome)
            continue
        for lc, variant in _order(clean, fault):
            extension = fault.extension()
            record = run_variant(lc, variant, RunOptions(extensions=(extension,)))
            outcome.items_run += 1
            if fault.level == "internals":
                if not extension.hits:
                    continue
                outcome.applied += 1
            how = _kill(record, fault)
            if how is not None:
                outcome.kills.append(Kill(lc.id, variant.label, how))
                if stop_after is not None and len(outcome.kills) >= stop_after:
                    break
        if fault.level == "internals" and not outcome.applied:
            outcome.note = f"no case made the build generate the function this fault rewrites ({fault.contract})"
        say(f"{fault.name}: {outcome.status} ({len(outcome.kills)} kill(s) in {outcome.items_run} item(s))")
        outcomes.append(outcome)
    return SelftestReport(
        torch_version=torch.__version__,
        items=len(items),
        clean_pass=len(clean),
        false_alarms=false_alarms,
        faults=outcomes,
        wall_seconds=time.perf_counter() - start,
    )


def dumps(report: SelftestReport) -> str:
    return json.dumps(report.to_json(), indent=1, sort_keys=True) + "\n"
