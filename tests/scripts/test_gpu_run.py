"""scripts/gpu_run.py: the corpus on one device type, in phases, under a deadline, resumable."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main as cli_main
from conformance.pytest_plugin.accounting import NOT_RUN, ItemRef, is_placeholder
from scripts import gpu_run

ROOT = Path(__file__).resolve().parents[2]


def test_the_plan_runs_the_device_cases_first_then_the_other_backends_then_inductor(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    planned = gpu_run.plan(Path("cases"), ("cuda",))
    phases = [gpu_run.PHASES.index(i.phase) for i in planned]
    assert phases == sorted(phases)
    assert {i.phase for i in planned} == set(gpu_run.PHASES)
    for item in planned:
        if item.phase == "device-specific":
            assert "devices: [cuda]" in Path(item.nodeid.split("::")[0]).read_text()
        else:
            assert (item.phase == "inductor") == ("-inductor-" in item.variant), item
    # one naming of items: the plan's node ids are the ones `list --json` gives (and pytest collects)
    assert cli_main(["list", "--devices", "cuda", "--json"]) == 0
    listed = {(r["case"], r["variant"]): r["nodeid"] for r in json.loads(capsys.readouterr().out)}
    assert listed == {i.key: i.nodeid for i in planned}


def _line(case: str, variant: str, status: str, reason: str = "", date: str = "2026-11-26T00:00:00+00:00") -> str:
    rec = ItemRef(f"cases/{case}.yaml::{case}[{variant}]", case, variant, f"cases/{case}.yaml").record(status, reason)
    if status != "error":
        rec = rec.model_copy(update={"fingerprint": rec.fingerprint.model_copy(
            update={"torch_version": "2.13.0+cpu", "torch_git": "abc", "date": date})})
    return rec.to_json_line().strip()


def _planned(*keys: tuple[str, str]) -> list[gpu_run.Planned]:
    return [gpu_run.Planned(f"cases/{c}.yaml::{c}[{v}]", c, v, "aot") for c, v in keys]


def test_a_result_supersedes_a_not_run_placeholder_and_items_without_one_are_listed(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    stopped = f"{NOT_RUN} (interrupted) before this item finished"
    (results / "run1-aot.jsonl").write_text("\n".join([
        _line("a", "cpu-aot_eager-inference", "pass"),
        _line("b", "cpu-aot_eager-inference", "error", stopped),
        _line("c", "cpu-aot_eager-inference", "error", stopped),
    ]) + "\n")
    (results / "run2-aot.jsonl").write_text("\n".join([
        _line("b", "cpu-aot_eager-inference", "fail"),
        _line("c", "cpu-aot_eager-inference", "error", stopped),
    ]) + "\n")
    for run in ("run1-aot", "run2-aot"):
        (results / f"{run}.manifest.json").write_text(json.dumps({"started": "2026-11-26T00:00:00+00:00"}))
    planned = _planned(("a", "cpu-aot_eager-inference"), ("b", "cpu-aot_eager-inference"),
                       ("c", "cpu-aot_eager-inference"), ("d", "cpu-aot_eager-inference"))
    unfinished = gpu_run.consolidate(tmp_path, planned, ("cpu",))
    assert [i.case_id for i in unfinished] == ["c", "d"]
    assert (tmp_path / "unfinished.txt").read_text().split() == [i.nodeid for i in unfinished]
    kept = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    assert [(r["case_id"], r["status"]) for r in kept] == [("a", "pass"), ("b", "fail"), ("c", "error")]
    assert is_placeholder(kept[2]["status"], kept[2]["reason"])
    manifest = json.loads((results / "results.manifest.json").read_text())
    assert len(manifest["items"]) == 4 and manifest["finished"]
    # the report takes the consolidated file as it is: d, never recorded, becomes an error record there
    out = subprocess.run([sys.executable, "-m", "conformance", "report", str(results / "results.jsonl"), "-o",
                          str(tmp_path / "report")], capture_output=True, text=True, check=False, cwd=ROOT)
    assert out.returncode == 1, out.stderr
    compat = json.loads((tmp_path / "report" / "compat.json").read_text())
    assert sorted((r["case_id"], r["status"]) for r in compat["records"]) == [
        ("a", "pass"), ("b", "fail"), ("c", "error"), ("d", "error")]


def test_a_torn_last_line_is_left_out_not_fatal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run1-aot.jsonl").write_text(_line("a", "cpu-aot_eager-inference", "pass") + '\n{"case_id": "b", "va')
    assert list(gpu_run.latest(tmp_path)) == [("a", "cpu-aot_eager-inference")]
    assert "torn line" in capsys.readouterr().err


SLEEPER = textwrap.dedent("""\
    import signal, sys, time
    if sys.argv[1] == "ignore":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        sys.exit(2)
    """)


def test_the_deadline_stops_a_phase_as_ctrl_c_does_and_kills_one_that_ignores_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # started as a script's `gpu_run.sh &` is: SIGINT ignored, which children inherit unless undone
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # a sleeper the deadline did not stop would exit 0 after its 60 s: 2 and -SIGKILL say it did
        assert gpu_run.run_phase([sys.executable, "-c", SLEEPER, "obey"], 1.0, {}) == 2
        monkeypatch.setattr(gpu_run, "GRACE_S", 1.0)
        assert gpu_run.run_phase([sys.executable, "-c", SLEEPER, "ignore"], 1.0, {}) == -signal.SIGKILL
    finally:
        signal.signal(signal.SIGINT, previous)


CASE = """\
behavior: runtime_wrapper
summary: a view of the input.
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [aot_eager]
modes: [inference]
inputs:
  x: {tensor: {shape: [3]}}
program: |
  def f(x):
      return x.view(-1) * NUMBER
"""


def test_a_second_invocation_runs_only_the_items_without_a_result(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cases = tmp_path / "cases"
    for n in (1, 2, 3):
        (cases / "runtime_wrapper").mkdir(parents=True, exist_ok=True)
        (cases / "runtime_wrapper" / f"c{n}.yaml").write_text(CASE.replace("NUMBER", str(n)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(gpu_run, "preflight", lambda *a, **k: [])
    commands: list[list[str]] = []
    real = gpu_run.run_phase

    def spy(cmd: list[str], seconds: float, env: dict[str, str]) -> int:
        commands.append(cmd)
        env = {**env, "PYTHONPATH": str(ROOT)}
        return real(cmd, seconds, env)

    monkeypatch.setattr(gpu_run, "run_phase", spy)
    argv = ["out", "--devices", "cpu", "--cases", "cases", "-n", "1", "--deadline", "600"]
    assert gpu_run.main(argv) == 0
    first = Path("out/results/run1-aot.jsonl")
    lines = first.read_text().splitlines()
    assert len(lines) == 3
    # the deadline came while c2 ran: its record is the controller's placeholder
    victim: dict[str, Any] = json.loads(lines[1])
    stopped = ItemRef(victim["nodeid"], victim["case_id"], victim["variant"], victim["case_file"]).record(
        "error", f"{NOT_RUN} (interrupted) before this item finished")
    lines[1] = stopped.to_json_line().strip()
    first.write_text("\n".join(lines) + "\n")
    assert gpu_run.main(argv) == 0
    assert [c for c in commands[1] if "::" in c] == [victim["nodeid"]]
    assert Path("out/unfinished.txt").read_text() == ""
    final = [json.loads(line) for line in Path("out/results/results.jsonl").read_text().splitlines()]
    assert [(r["case_id"], r["status"]) for r in final] == [(f"runtime_wrapper/c{n}", "pass") for n in (1, 2, 3)]


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    for argv in (["--deadline", "nan"], ["--deadline", "-5"], ["-n", "0"]):
        with pytest.raises(SystemExit) as exc:
            gpu_run.main([str(tmp_path / "out"), *argv])
        assert exc.value.code == 2, argv


def _script(*args: str, python: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu_run.sh"), *args], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": python}, check=False, timeout=120)


def test_the_shell_entry_refuses_a_python_without_torch_and_a_missing_wheel_folder(tmp_path: Path) -> None:
    no_torch = tmp_path / "python"
    no_torch.write_text("#!/bin/sh\nexit 1\n")  # a Python whose `import torch` fails
    no_torch.chmod(0o755)
    out = _script(str(tmp_path / "out"), python=str(no_torch))
    assert out.returncode == 2 and "cannot import torch" in out.stderr, out
    out = _script(str(tmp_path / "out"), "--wheels", str(tmp_path / "nowhere"), python=sys.executable)
    assert out.returncode == 2 and "no such folder" in out.stderr, out
    out = _script(python=sys.executable)
    assert out.returncode == 2 and "usage:" in out.stderr, out
