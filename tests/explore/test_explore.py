"""The explorer: its programs are valid cases, its control finds nothing, a seeded fault is found,
shrunk and handed back as a case file that fails the same way, and its signatures ignore names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.cli import main
from conformance.explore.emit import emit, write_findings
from conformance.explore.engine import Explorer, signature_of
from conformance.explore.grammar import Program, programs
from conformance.loader import load_case
from conformance.results import MismatchRecord, ResultRecord
from conformance.selftest.faults import FAULTS


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=programs())
def test_every_program_is_a_case_the_loader_accepts(program: Program, tmp_path: Path) -> None:
    explorer = Explorer(tmp_path)
    from conformance.explore.engine import case_text

    lc = explorer.load(case_text(program))  # raises CaseLoadError with file:line if the grammar wrote garbage
    assert lc.case.program.startswith("def f(")
    assert len(program.statements) <= 8 and 1 <= len([i for i in program.inputs if not i.hidden]) <= 4


def test_the_control_finds_nothing(tmp_path: Path) -> None:
    """Both sides eager (`none`): whatever the explorer reports is its own bug."""
    explorer = Explorer(tmp_path, backends=("none",), time_budget=8, seed=3)
    assert explorer.explore() == {}
    assert explorer.stats.programs >= 50
    assert explorer.stats.rejected < explorer.stats.programs * 0.6  # most programs are valid


@pytest.mark.parametrize("fault", ["input_mutation_dropped", "alias_returned_as_copy", "grad_mode_left_changed"])
def test_a_seeded_fault_is_found_shrunk_and_reproduced_by_its_case_file(fault: str, tmp_path: Path) -> None:
    explorer = Explorer(tmp_path, backends=("none",), hooks=(FAULTS[fault].hook(),), time_budget=20, seed=1)
    found = explorer.explore()
    assert found, f"{fault}: nothing found in {explorer.stats.programs} programs"
    finding = min(found.values(), key=lambda f: f.found_after)
    emitted = emit(explorer, finding)
    assert emitted.reproduces, emitted
    assert len(emitted.program.statements) <= 6
    load_case(Path(emitted.case_path), Path(emitted.case_path).parent)  # the case file validates
    assert Path(emitted.reproducer_path).read_text().startswith(('"""', "#"))
    report = write_findings(explorer, [emitted])
    assert report["findings"][0]["reproduces"] is True
    assert (tmp_path / "findings.md").read_text().count("## 1.") == 1


def test_without_a_fault_a_finding_of_the_control_would_show(tmp_path: Path) -> None:
    """The control's silence is not blindness: the same explorer and budget, with a fault, finds."""
    explorer = Explorer(tmp_path, backends=("none",), hooks=(FAULTS["version_not_bumped"].hook(),), time_budget=8,
                        seed=3)
    assert explorer.explore()


def _record(*mismatches: tuple[str, str, str, str], status: str = "fail") -> ResultRecord:
    return ResultRecord.model_validate({
        "case_id": "x", "behavior": "mutation_epilogue", "device": "cpu", "backend": "aot_eager",
        "mode": "inference", "variant": "cpu-aot_eager-inference", "status": status,
        "mismatches": [MismatchRecord(check=c, where=w, expected=e, actual=a).model_dump()
                       for c, w, e, a in mismatches],
    })


def test_a_signature_names_the_check_and_the_place_not_the_names() -> None:
    one = _record(("values", "input a", "1", "2"), ("values", "call 2: out[1]", "1", "2"))
    two = _record(("values", "input b", "3", "4"), ("values", "out[0]", "5", "6"))
    other = _record(("stride", "input a", "(1,)", "(2,)"))
    assert signature_of(one) == signature_of(two) == "aot_eager-inference values @ input [input, out[]]"
    assert signature_of(other) != signature_of(one)
    raised = _record(("exception", "call", "no exception", "IndexError: list index out of range"))
    assert "IndexError" in signature_of(raised)


def test_the_cli_refuses_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "-o", str(tmp_path), "--fault", "no_such_fault"]) == 2
    assert "no such fault" in capsys.readouterr().err
    assert main(["explore", "-o", str(tmp_path), "--backends", "no_such_backend"]) == 2
    assert main(["explore", "-o", str(tmp_path), "--time-budget", "0"]) == 2
    in_the_way = tmp_path / "a_file"
    in_the_way.write_text("not a folder")
    capsys.readouterr()
    assert main(["explore", "-o", str(in_the_way), "--backends", "none", "--time-budget", "1"]) == 2
    assert f"-o {in_the_way}: cannot be the output folder" in capsys.readouterr().err
    assert in_the_way.read_text() == "not a folder"


def test_the_cli_writes_findings_and_exits_by_them(tmp_path: Path) -> None:
    out = tmp_path / "control"
    assert main(["explore", "-o", str(out), "--backends", "none", "--time-budget", "3", "-q"]) == 0
    report = json.loads((out / "findings.json").read_text())
    assert report["findings"] == [] and report["programs"] > 0
    faulty = tmp_path / "fault"
    assert main(["explore", "-o", str(faulty), "--backends", "none", "--time-budget", "8", "-q",
                 "--fault", "input_mutation_dropped"]) == 1
    assert json.loads((faulty / "findings.json").read_text())["findings"]


@pytest.mark.slow
def test_a_fixed_seed_smoke_run_under_aot_eager_hands_back_only_findings_that_reproduce(tmp_path: Path) -> None:
    """What CI runs on every build: a short fixed-seed exploration of the real compiler. Whatever it
    finds on this build, each finding's emitted case file must fail the same way again."""
    explorer = Explorer(tmp_path, backends=("aot_eager",), time_budget=30, seed=0)
    found = explorer.explore()
    assert explorer.stats.programs >= 20
    emitted = [emit(explorer, f) for f in found.values()]
    assert all(f.reproduces for f in emitted), [f.signature for f in emitted if not f.reproduces]
    assert all(len(f.program.statements) <= 8 for f in emitted)
