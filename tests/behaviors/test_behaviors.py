"""The behaviour registry: each declared behaviour has its reference, cases, probe, checks, faults and bench
table as objects (conformance/behaviors/parts.py gathers them from the parts' own declarations), and each part names a
declared behaviour (one declaration per fact)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.behaviors import BEHAVIORS, IDS, SCALAR_RECOMPILE
from conformance.behaviors.parts import PARTS, REFERENCES, Parts
from conformance.bench.suites import TABLES
from conformance.cli import main
from conformance.core.checks import CHECKS
from conformance.probe import COMPILED, PROBE_MODULES, PROBES
from conformance.schema import Case
from conformance.selftest.faults import FAULTS

REPO = Path(__file__).parents[2]


@pytest.mark.parametrize("parts", PARTS, ids=IDS)
def test_each_behaviour_has_its_reference_cases_checks_faults_and_probe(parts: Parts) -> None:
    b = parts.behavior
    assert parts.reference.__name__ == f"reference_impl.{b.id}"
    assert list((REPO / "cases" / b.id).glob("*.yaml")), f"no case in cases/{b.id}/"
    assert parts.checks, f"no oracle check speaks to {b.id}"
    assert parts.faults, f"no seeded fault breaks {b.id}"
    assert parts.probe.BEHAVIOR is b
    assert (b.id in PROBES) == bool(b.artifacts)
    assert (parts.bench is None) == (b is SCALAR_RECOMPILE)  # a value sweep: no generated step to time


def test_every_part_names_a_declared_behaviour() -> None:
    assert [p.behavior for p in PARTS] == list(BEHAVIORS) and set(REFERENCES) == set(BEHAVIORS)
    assert {b for c in CHECKS.values() for b in c.behaviors} <= set(IDS)
    assert {f.behavior for f in FAULTS.values()} <= set(BEHAVIORS)
    assert [m.BEHAVIOR for m in PROBE_MODULES] == list(BEHAVIORS)
    assert set(PROBES) == {b.id for b in COMPILED}
    assert len({t.behavior for t in TABLES}) == len(TABLES) and {t.behavior for t in TABLES} <= set(BEHAVIORS)
    assert {p.name for p in (REPO / "cases").iterdir() if p.is_dir()} == set(IDS)


def test_the_schema_takes_its_behaviour_choices_from_the_registry() -> None:
    schema = Case.model_json_schema()
    assert tuple(schema["properties"]["behavior"]["enum"]) == IDS


def test_behaviors_lists_each_behaviour_with_its_parts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["behaviors"]) == 0
    text = capsys.readouterr().out
    for p in PARTS:
        assert f"{p.behavior.id}: {p.behavior.title}" in text
        assert all(f.name in text for f in p.faults)
    assert main(["behaviors", "--json"]) == 0
    assert '"reference": "reference_impl.scalar_recompile"' in capsys.readouterr().out
