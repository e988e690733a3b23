"""The behaviour registry: each declared behaviour has its reference, cases, probe, checks, faults
and bench table, and each of those names a declared behaviour (one declaration per fact)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from conformance.behaviors import BEHAVIORS, BENCH_TABLES, IDS, Behavior
from conformance.core.checks import CHECKS
from conformance.probe import COMPILED, PROBE_MODULES, PROBES
from conformance.schema import Case
from conformance.selftest.faults import FAULTS

REPO = Path(__file__).parents[1]


@pytest.mark.parametrize("behavior", BEHAVIORS, ids=IDS)
def test_each_behaviour_has_its_reference_cases_checks_faults_and_probe(behavior: Behavior) -> None:
    importlib.import_module(f"reference_impl.{behavior.id}")
    assert list((REPO / "cases" / behavior.id).glob("*.yaml")), f"no case in cases/{behavior.id}/"
    assert [c for c in CHECKS.values() if behavior.id in c.behaviors], f"no oracle check speaks to {behavior.id}"
    assert [f for f in FAULTS.values() if f.behavior == behavior.id], f"no seeded fault breaks {behavior.id}"
    assert (behavior.id in PROBES) == bool(behavior.artifacts)
    assert [m.BEHAVIOR for m in PROBE_MODULES].count(behavior) == 1, f"no one probe module implements {behavior.id}"


def test_every_check_fault_probe_table_and_case_folder_names_a_declared_behaviour() -> None:
    from conformance.bench.suites import TABLES

    assert {b for c in CHECKS.values() for b in c.behaviors} <= set(IDS)
    assert {f.behavior for f in FAULTS.values()} <= set(IDS)
    assert set(PROBES) == {b.id for b in COMPILED}
    assert set(TABLES) == set(BENCH_TABLES) <= set(IDS)
    assert {p.name for p in (REPO / "cases").iterdir() if p.is_dir()} == set(IDS)


def test_the_schema_takes_its_behaviour_choices_from_the_registry() -> None:
    schema = Case.model_json_schema()
    assert tuple(schema["properties"]["behavior"]["enum"]) == IDS
