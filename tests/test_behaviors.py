"""The behaviour registry: every name a declaration points at exists, and every behavioural
thing in the harness (case folder, probe, fault, bench table) belongs to a declared behaviour."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from conformance.behaviors import BEHAVIORS, IDS, Behavior
from conformance.schema import Case
from conformance.selftest.faults import FAULTS

REPO = Path(__file__).parents[2]
CORE_SOURCE = "\n".join(p.read_text() for p in (REPO / "conformance" / "core").glob("*.py"))


@pytest.mark.parametrize("behavior", BEHAVIORS, ids=IDS)
def test_each_declaration_points_at_things_that_exist(behavior: Behavior) -> None:
    importlib.import_module(f"reference_impl.{behavior.reference}")
    assert (REPO / behavior.home("cases")).is_dir() and list((REPO / behavior.home("cases")).glob("*.yaml"))
    if behavior.artifacts:
        assert callable(importlib.import_module(behavior.home("probe")).probe)
    for fault in behavior.faults:
        assert FAULTS[fault].behavior == behavior.id, fault
    for check in behavior.checks:
        assert f'"{check}"' in CORE_SOURCE, f"no core check is called {check!r}"
    from conformance.bench.suites import TABLES

    assert set(behavior.bench) <= set(TABLES)


def test_every_fault_and_case_folder_belongs_to_a_declared_behavior() -> None:
    for name, fault in FAULTS.items():
        assert name in next(b for b in BEHAVIORS if b.id == fault.behavior).faults, name
    folders = {p.name for p in (REPO / "cases").iterdir() if p.is_dir()}
    assert folders == set(IDS)


def test_the_schema_takes_its_behaviour_choices_from_the_registry() -> None:
    schema = Case.model_json_schema()
    assert tuple(schema["properties"]["behavior"]["enum"]) == IDS
