"""The `torch-conformance` command line: exit codes, messages, and which commands need torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
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
