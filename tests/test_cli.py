"""The `torch-conformance` command line: exit codes, messages, and which commands need torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ROOT / "tests" / "resources" / "cases"

# Runs the CLI in a Python where `import torch` fails, as on a machine that has no build yet.
WITHOUT_TORCH = (
    "import sys; sys.modules['torch'] = None; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _without_torch(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_TORCH, *argv], capture_output=True, text=True, cwd=ROOT,
                          check=False, timeout=120)


def test_validate_accepts_the_committed_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "cases")]) == 0
    assert "case file(s) valid" in capsys.readouterr().out


def test_validate_says_when_it_did_not_check_the_parity_mapping(capsys: pytest.CaptureFixture[str]) -> None:
    one = next((ROOT / "cases" / "mutation_epilogue").glob("*.yaml"))
    assert main(["validate", "--cases", str(ROOT / "cases"), str(one)]) == 0
    out = capsys.readouterr().out
    assert "the upstream parity mapping was not checked" in out and "is valid" not in out
    assert main(["validate", str(ROOT / "cases")]) == 0
    out = capsys.readouterr().out
    assert "the upstream parity mapping is valid" in out and "not checked" not in out


def test_validate_names_file_line_and_field_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--cases", str(RESOURCES), str(RESOURCES / "broken" / "unknown_key.yaml")])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "unknown_key.yaml:6: inputs.x.tensor.colour: unknown key 'colour'" in out, out
    assert "1 error(s) in 1 of 1 case file(s)" in err, err


def test_validate_of_a_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_validate_and_schema_work_without_torch() -> None:
    validate = _without_torch("validate", "cases")
    assert validate.returncode == 0, validate.stderr
    schema = _without_torch("schema", "--check", "cases/schema.json")
    assert schema.returncode == 0, schema.stderr


def test_run_without_torch_says_how_to_install_it() -> None:
    result = _without_torch("run", "--dry-run", "cases")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "torch is not importable" in result.stderr and "pip install torch==" in result.stderr, result.stderr


def test_list_json_has_one_row_per_item_with_skip_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    case = ROOT / "cases" / "mutation_epilogue" / "aliased_inputs_overlapping.yaml"
    assert main(["list", "--json", "--devices=cpu,cuda", str(case)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["behavior"] for r in rows} == {"mutation_epilogue"}, rows
    devices = {r["variant"].split("-")[0] for r in rows}
    assert "cpu" in devices, rows
    import torch

    cuda_rows = [r for r in rows if r["variant"].startswith("cuda")]
    if not torch.cuda.is_available():
        assert cuda_rows and all(r["will"].startswith("skip: ") for r in cuda_rows), cuda_rows


def test_run_dry_run_prints_the_pytest_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--dry-run", "-k", "mutation", "-n", "2", "--devices=cpu", "cases", "--", "-x"])
    assert code == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("pytest --conformance "), line
    for part in ("--conformance-devices=cpu", "-k mutation", "-n 2", " cases", " -x"):
        assert part in line, (part, line)


def test_run_takes_an_items_node_id_as_list_json_gives_it(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["list", "--devices", "cpu", "--json", "cases/runtime_wrapper/dynamic_dims_marked.yaml"]) == 0
    rows = json.loads(capsys.readouterr().out)
    nodeid = rows[0]["nodeid"]
    assert nodeid == "cases/runtime_wrapper/dynamic_dims_marked.yaml::dynamic_dims_marked[cpu-aot_eager-inference]"
    assert main(["run", "--dry-run", nodeid]) == 0
    assert capsys.readouterr().out.strip().endswith(" " + nodeid)
    assert main(["run", "--dry-run", "cases/nowhere.yaml::x[cpu-aot_eager-inference]"]) == 2
    assert "no such file or folder: cases/nowhere.yaml::x" in capsys.readouterr().err


def test_extra_arguments_are_refused_outside_run(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", "cases", "--", "-x"])
    assert exc.value.code == 2
    assert "validate takes no arguments after --" in capsys.readouterr().err


def test_python_dash_m_and_help_texts() -> None:
    result = subprocess.run([sys.executable, "-m", "conformance", "--help"], capture_output=True, text=True,
                            cwd=ROOT, check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    for command in ("validate", "list", "run", "selftest", "schema", "report", "bench"):
        assert command in result.stdout, (command, result.stdout)


def test_python_dash_m_run_executes_cases(tmp_path: Path) -> None:
    case = RESOURCES / "valid" / "mutation.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "-q", f"--cases={RESOURCES / 'valid'}", "--devices=cpu",
         "--backends=aot_eager", "--modes=inference", f"--results={tmp_path / 'r.jsonl'}", str(case)],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(r["case_id"], r["status"]) for r in records] == [("mutation", "pass")], records


@pytest.mark.parametrize(("argv", "message"), [
    (["--backends", "indcutor"], "--backends indcutor: not a torch.compile backend registered on this build, nor "
                                 "aot_function or aot_function-kiim or aot_module_simplified or "
                                 "aot_module_simplified-kiim or aot_module or aot_module-kiim or make_fx or "
                                 "aot_export_module or aot_export_joint_simple or none (did you mean inductor?)"),
    (["--devices", "gpu"], "--devices gpu: 'gpu' is not a device this torch build knows"),
    (["--modes", "train"], "--modes train: not a mode; choose from inference, training (did you mean training?)"),
])
def test_a_filter_value_that_selects_nothing_is_a_usage_error(argv: list[str], message: str, tmp_path: Path) -> None:
    for command in (["list", *argv, "cases"], ["run", *argv, "--results", str(tmp_path / "r.jsonl"), "cases"]):
        result = subprocess.run([sys.executable, "-m", "conformance", *command],
                                capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
        assert result.returncode == 2, (command, result.stdout[-2000:], result.stderr[-2000:])
        assert message in result.stdout + result.stderr, (command, result.stdout[-2000:], result.stderr[-2000:])
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--timeout", "-5", "--timeout '-5': give a number of SECONDS greater than 0"),
    ("--timeout", "0", "--timeout '0': give a number of SECONDS greater than 0"),
    ("--timeout", "soon", "--timeout 'soon': not a number"),
    ("--memory-limit", "-1", "--memory-limit '-1': give 0 (no limit) or a positive number"),
    ("--timeout", "nan", "--timeout 'nan': give a finite number"),
])
def test_a_bad_number_is_a_usage_error_naming_the_flag(flag: str, value: str, message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", flag, value, "--dry-run", "cases"]) == 2
    assert message in capsys.readouterr().err


def test_list_takes_k_as_run_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json", "-k", "aliased_inputs_overlapping and training", "--devices", "cpu",
                 str(ROOT / "cases")]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["case"] for r in rows} == {"mutation_epilogue/aliased_inputs_overlapping"}, rows
    assert all(r["variant"].endswith("-training") for r in rows), rows


@pytest.mark.parametrize("command", [["selftest", "--fast"], ["bench", "--quick"], ["bench", "harness"],
                                     ["list", "cases"]])
def test_commands_that_need_torch_say_how_to_install_it(command: list[str]) -> None:
    result = _without_torch(*command)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "torch is not importable" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_a_run_that_selects_nothing_leaves_the_results_as_they_were(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text('{"previous": "run"}\n')
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "-q", f"--results={results}", "-k", "nomatch", "cases"],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
    assert result.returncode == 5, result.stdout[-2000:] + result.stderr[-2000:]
    assert "no item was selected" in result.stdout, result.stdout[-2000:]
    assert results.read_text() == '{"previous": "run"}\n'
    assert not results.with_name("results.manifest.json").exists()
