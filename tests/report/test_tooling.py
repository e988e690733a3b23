"""The build-matrix tooling: nox's torch choice and report step, the CLI's --shard, the CI workflow."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import noxfile

ROOT = Path(__file__).parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "conformance.yml"


@pytest.mark.parametrize(("choice", "index", "expected"), [
    ("installed", None, None),
    ("auto", None, None),
    ("default", None, ["torch"]),
    ("stable", None, ["--upgrade", "torch"]),
    ("2.13.0", None, ["torch==2.13.0"]),
    ("2.16.0.dev20261120", None, ["torch==2.16.0.dev20261120"]),
    (">=2.12,<2.14", None, ["torch>=2.12,<2.14"]),
    ("nightly", "https://nightly.invalid/whl/", ["--pre", "--upgrade", "torch", "--index-url",
                                                 "https://nightly.invalid/whl/cpu"]),
    ("nightly-cu128", "https://nightly.invalid/whl", ["--pre", "--upgrade", "torch", "--index-url",
                                                      "https://nightly.invalid/whl/cu128"]),
])
def test_torch_choice_gives_the_pip_command(choice: str, index: str | None, expected: list[str] | None) -> None:
    assert noxfile.torch_install_args(choice, index) == expected


def test_nightly_needs_its_index_and_names_the_variable() -> None:
    with pytest.raises(noxfile.ChoiceError, match="set TORCH_CONFORMANCE_NIGHTLY_INDEX to its URL"):
        noxfile.torch_install_args("nightly-cu128", None)
    with pytest.raises(noxfile.ChoiceError, match="write auto, installed, default, stable, nightly"):
        noxfile.torch_install_args("tomorrow's", None)


def test_the_noxfile_names_no_package_host() -> None:
    text = (ROOT / "noxfile.py").read_text()
    assert "download.pytorch" not in text and "pypi.org" not in text and "://" not in text


def test_torch_flag_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(noxfile.TORCH_ENV, raising=False)
    assert noxfile.split_torch_arg(["-k", "x"]) == ("auto", ["-k", "x"])
    assert noxfile.split_torch_arg(["--torch", "nightly", "-n", "2"]) == ("nightly", ["-n", "2"])
    monkeypatch.setenv(noxfile.TORCH_ENV, "2.14.1")
    assert noxfile.split_torch_arg(["--devices", "cpu"]) == ("2.14.1", ["--devices", "cpu"])
    assert noxfile.split_torch_arg(["--torch=stable"])[0] == "stable"  # the flag wins over the env


def test_conformance_session_reports_on_the_run_s_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCH_CONFORMANCE_RESULTS", raising=False)
    assert noxfile.report_args(["-n", "auto"]) == ["report", "results/results.jsonl", "-o", "reports", "--exit-zero"]
    assert noxfile.report_args(["--results", "r/a.jsonl", "--expectations=v.yaml"]) == [
        "report", "r/a.jsonl", "-o", "reports", "--exit-zero", "--expectations", "v.yaml"]
    monkeypatch.setenv("TORCH_CONFORMANCE_RESULTS", "env.jsonl")
    assert noxfile.report_args([])[1] == "env.jsonl"


def test_shard_through_the_cli_partitions_stably(tmp_path: Path) -> None:
    cases = tmp_path / "cases" / "runtime_wrapper"
    cases.mkdir(parents=True)
    for i in range(8):
        (cases / f"c{i}.yaml").write_text(
            "behavior: runtime_wrapper\nsummary: s\nupstream: [https://github.com/pytorch/pytorch/pull/1]\n"
            "devices: [cpu]\nbackends: [aot_eager]\ninputs:\n  x: {tensor: {shape: [2]}}\n"
            "program: |\n  def f(x):\n      return x + 1\n")

    def start(shard: str, results: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "conformance", "run", "--cases", "cases", "--shard", shard,
                                 "--results", results, "--", "--collect-only", "-q", "-p", "no:logging"],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    procs = [start("1/2", "a.jsonl"), start("2/2", "b.jsonl"), start("2/2", "c.jsonl")]
    one, two, again = ({line for line in p.communicate(timeout=300)[0].splitlines() if "::" in line} for p in procs)
    assert len(one | two) == 8 and not one & two and one and two
    assert again == two  # a case always lands in the same shard


def test_workflow_passes_the_github_workflow_schema() -> None:
    tool = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    proc = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_runs_the_matrix_and_gates_on_the_merged_report() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    run, merge_job = wf["jobs"]["run"], wf["jobs"]["merge"]
    matrix = run["strategy"]["matrix"]
    assert set(matrix["device"]) == {"cpu", "cuda"} and len(matrix["shard"]) >= 2
    # the builds are derived from the index, not written here
    assert matrix["torch"] == "${{ fromJSON(needs.releases.outputs.torch) }}" and run["needs"] == "releases"
    assert "scripts/torch_releases.py" in "\n".join(str(s.get("run", "")) for s in wf["jobs"]["releases"]["steps"])
    gpu = next(i for i in matrix["include"] if i.get("device") == "cuda" and "runner" in i)
    assert "gpu" in gpu["runner"]
    steps = "\n".join(str(s.get("run", "")) for s in run["steps"])
    assert "nox -s conformance" in steps and "--shard ${{ matrix.shard }}/${{ env.SHARDS }}" in steps
    assert "-n auto" in steps
    assert any(s.get("uses", "").startswith("actions/upload-artifact") and s.get("if") == "always()"
               for s in run["steps"])
    assert merge_job["needs"] == "run" and merge_job["if"] == "always()"
    merged = "\n".join(str(s.get("run", "")) for s in merge_job["steps"])
    assert "python -m conformance.report artifacts/ -o reports" in merged
    assert "python -m conformance.report diff baseline/compat.json reports/compat.json" in merged
    gate = merge_job["steps"][-1]
    assert "steps.report.outcome != 'success'" in gate["if"] and "exit 1" in gate["run"]
    assert "://" not in WORKFLOW.read_text()  # no package host: the nightly index is a repository variable


def test_the_matrix_takes_a_list_of_builds_and_refuses_a_bad_one_before_installing() -> None:
    assert noxfile.matrix_choices("2.10.0,2.15.0") == ["2.10.0", "2.15.0"]
    with pytest.raises(noxfile.ChoiceError, match="tomorrow"):
        noxfile.matrix_choices("2.13.0,tomorrow's")
