"""False greens and lost results (issue: nothing lost, round 3): two runs into one results file, a
CI runner's SIGTERM, a program that ends the serial process, an explorer that explored nothing,
and a report written over its inputs' folder. Each run is the real CLI in a child process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.selftest.test_fault_run import CASE  # one template for the programs that misbehave


def _cases(root: Path, **bodies: str) -> Path:
    for name, body in bodies.items():
        path = root / "cases" / "runtime_wrapper" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = "\n".join(f"      {line}" for line in body.splitlines())
        path.write_text(CASE.format(name=name, body=lines, extra="modes: [inference]\n"))
    return root / "cases"


def _run(root: Path, *args: str, wait: bool = True, results: str = "out/r.jsonl") -> Any:
    cmd = [sys.executable, "-m", "conformance", "run", "-q", "--cases", "cases", "--results", results, *args]
    if not wait:
        return subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600, check=False)


def _records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "out" / "r.jsonl").read_text().splitlines() if line.strip()]


def test_a_second_run_into_a_results_file_another_run_writes_is_refused(tmp_path: Path) -> None:
    _cases(tmp_path, slow="time.sleep(30)", fine="pass")
    first = _run(tmp_path, wait=False)
    deadline = time.monotonic() + 120
    while not (tmp_path / "out" / "r.manifest.json").is_file() and time.monotonic() < deadline:
        time.sleep(0.5)
    second = _run(tmp_path)
    out, _ = first.communicate(timeout=600)
    assert second.returncode == 2, second.stdout + second.stderr
    assert "another run (pid " in second.stderr and "is writing this file" in second.stderr, second.stderr
    assert first.returncode == 0, out
    assert sorted(r["case_id"] for r in _records(tmp_path)) == ["runtime_wrapper/fine", "runtime_wrapper/slow"]
    assert _run(tmp_path, "-k", "fine").returncode == 0  # once the first run has ended, the file is free


@pytest.mark.parametrize("alias", ["symlink", "hard link", "dotted path"])
def test_a_second_run_into_the_same_file_under_another_name_is_refused(tmp_path: Path, alias: str) -> None:
    _cases(tmp_path, slow="time.sleep(20)", fine="pass")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "r.jsonl").write_text("")
    names = {"symlink": "out/alias.jsonl", "hard link": "out/linked.jsonl", "dotted path": "out/../out/./r.jsonl"}
    other = names[alias]
    if alias == "symlink":
        (tmp_path / other).symlink_to("r.jsonl")
    elif alias == "hard link":
        (tmp_path / other).hardlink_to(tmp_path / "out" / "r.jsonl")
    first = _run(tmp_path, wait=False)
    deadline = time.monotonic() + 120
    while not (tmp_path / "out" / "r.manifest.json").is_file() and time.monotonic() < deadline:
        time.sleep(0.5)
    second = _run(tmp_path, "-k", "fine", results=other)
    out, _ = first.communicate(timeout=600)
    assert second.returncode == 2, second.stdout + second.stderr
    assert "another run (pid " in second.stderr, second.stderr
    assert first.returncode == 0, out
    assert sorted(r["case_id"] for r in _records(tmp_path)) == ["runtime_wrapper/fine", "runtime_wrapper/slow"]


@pytest.mark.parametrize("workers", ["1", "0"])
def test_sigterm_to_the_run_stops_it_as_ctrl_c_does_and_every_item_has_a_record(tmp_path: Path,
                                                                                workers: str) -> None:
    _cases(tmp_path, a_first="pass", b_long="time.sleep(120)", c_never="pass", d_never="pass")
    proc = _run(tmp_path, "-n", workers, wait=False)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        recs = _records(tmp_path) if (tmp_path / "out" / "r.jsonl").is_file() else []
        if any(r["case_id"] == "runtime_wrapper/a_first" for r in recs):
            break
        time.sleep(0.5)
    time.sleep(3)  # b_long is running now
    os.killpg(proc.pid, signal.SIGTERM)  # as a CI runner's cancel does: the whole process group
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130, out  # an interrupt's own status
    by = {r["case_id"].split("/")[1]: r for r in _records(tmp_path)}
    assert sorted(by) == ["a_first", "b_long", "c_never", "d_never"], out
    assert by["a_first"]["status"] == "pass"
    assert all(by[n]["status"] == "error" for n in ("b_long", "c_never", "d_never")), out
    assert by["d_never"]["reason"].startswith("not run: the run was stopped"), by["d_never"]["reason"]


@pytest.mark.parametrize(("ending", "said"), [
    ("os._exit(0)", "with exit status 0"), ("os._exit(5)", "with exit status 5"), ("os._exit(2)", "with exit status 2"),
    ("os._exit(3)", "with exit status 3"), ("os.kill(os.getpid(), 11)", "killed by SIGSEGV")])
def test_a_program_that_ends_the_serial_process_is_the_runs_failure_and_every_item_has_a_record(
        tmp_path: Path, ending: str, said: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """-n 0: whatever status the program ends the process with, the CLI's is 1, and the items have records."""
    _cases(tmp_path, a_exits=ending, b_fine="pass", c_fine="pass")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # where the run's journal folder goes
    result = _run(tmp_path, "-n", "0")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"the run's process ended mid-run ({said})" in result.stderr, result.stderr
    by = {r["case_id"].split("/")[1]: r for r in _records(tmp_path)}
    assert sorted(by) == ["a_exits", "b_fine", "c_fine"], result.stderr
    assert by["a_exits"]["status"] == "error" and said in by["a_exits"]["reason"], by["a_exits"]["reason"]
    assert (tmp_path / by["a_exits"]["reproducer"]).is_file(), by["a_exits"]  # the dead item's script too
    assert all(by[n]["reason"].startswith("not run: the run was stopped") for n in ("b_fine", "c_fine"))
    manifest = json.loads((tmp_path / "out" / "r.manifest.json").read_text())
    assert manifest["finished"] and manifest["exit_status"] == 1
    assert not list((tmp_path / "tmp").glob("torch-conformance-journal-*"))  # no journal folder left behind


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_serial_runs_cli_reaches_its_items_process_and_every_item_has_a_record(
        tmp_path: Path, sig: signal.Signals) -> None:
    """-n 0: a signal to the CLI alone (not its group) is passed on; the run ends 130 with whole accounts."""
    _cases(tmp_path, a_first="pass", b_long="time.sleep(120)", c_never="pass")
    proc = _run(tmp_path, "-n", "0", wait=False)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        recs = _records(tmp_path) if (tmp_path / "out" / "r.jsonl").is_file() else []
        if any(r["case_id"] == "runtime_wrapper/a_first" for r in recs):
            break
        time.sleep(0.5)
    time.sleep(3)  # b_long is running now
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130, out
    by = {r["case_id"].split("/")[1]: r for r in _records(tmp_path)}
    assert sorted(by) == ["a_first", "b_long", "c_never"], out
    assert by["c_never"]["status"] == "error", by["c_never"]
    assert json.loads((tmp_path / "out" / "r.manifest.json").read_text())["finished"]


def _explore(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", "explore", "-q", "-o", str(tmp_path / "x"), *args],
                          capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)


@pytest.mark.parametrize("args", [["--seed", "-5"], ["--time-budget", "nan"], ["--time-budget", "inf"],
                                  ["--modes", ","], ["--backends", ","]])
def test_the_explorer_refuses_a_search_that_could_not_look(tmp_path: Path, args: list[str]) -> None:
    result = _explore(tmp_path, "--backends", "none", "--time-budget", "5", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "explore:" in result.stderr


def test_an_exploration_that_explored_nothing_is_not_green(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main
    from conformance.explore import supervise

    def nothing(config: Any, progress: Any, **_kw: Any) -> Any:
        totals = supervise.Totals()
        totals.worker_errors.append("worker 0 ended with status 1 (its traceback is above); went on")
        return totals, 1.0

    monkeypatch.setattr(supervise, "supervise", nothing)
    monkeypatch.chdir(tmp_path)
    code = main(["explore", "-q", "--backends", "none", "--time-budget", "5", "-o", str(tmp_path / "x")])
    assert code == 3, capsys.readouterr()
    assert "0 program(s) explored" in capsys.readouterr().err


def test_a_report_is_never_written_into_the_folder_of_its_inputs(tmp_path: Path) -> None:
    from tests.helpers.records import record, write_results

    results = write_results(tmp_path / "run" / "results.json", [record()])
    (tmp_path / "run" / "reproducers").mkdir()
    (tmp_path / "run" / "reproducers" / "keep.py").write_text("print(1)\n")
    result = subprocess.run([sys.executable, "-m", "conformance", "report", str(results), "-o",
                             str(tmp_path / "run")], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "that folder holds the inputs" in result.stderr
    assert (tmp_path / "run" / "reproducers" / "keep.py").is_file()


def test_a_record_the_disk_cannot_take_is_undone_to_the_last_whole_line(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from conformance.results import ResultsWriteError, ResultsWriter

    writer = ResultsWriter(tmp_path / "r.jsonl")
    real = os.write
    calls = {"n": 0}

    def short_then_full(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:  # a short write: the rest follows
            return real(fd, data[:5])
        if calls["n"] >= 4:  # the disk is full halfway through the third line
            real(fd, data[:7])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(os, "write", short_then_full)
    writer.write_line('{"a": 1}\n')
    writer.write_line('{"b": 2}\n')
    with pytest.raises(ResultsWriteError, match="No space left on device"):
        writer.write_line('{"c": 3}\n')
    assert (tmp_path / "r.jsonl").read_text() == '{"a": 1}\n{"b": 2}\n'


def test_a_run_whose_results_file_fills_up_stops_saying_so_with_whole_records(tmp_path: Path) -> None:
    import resource

    _cases(tmp_path, **{f"c{n}": "pass" for n in range(8)})

    def small_files() -> None:  # every file this run writes stops growing at 6 kB, as a full disk does
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (6_000, 6_000))

    cmd = [sys.executable, "-m", "conformance", "run", "-q", "-n", "0", "--cases", "cases", "--results", "out/r.jsonl"]
    result = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
                            preexec_fn=small_files, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "results not written" in out and "INTERNALERROR" not in out, out[-3000:]
    text = (tmp_path / "out" / "r.jsonl").read_text()
    assert text.endswith("\n") and 0 < len(text.splitlines()) < 8
    # whole records only: the items that ran, and perhaps a short "not run" one that still fitted
    assert {json.loads(line)["status"] for line in text.splitlines()} <= {"pass", "error"}


def test_an_expectations_file_that_does_not_load_is_a_usage_error_like_the_others(tmp_path: Path) -> None:
    _cases(tmp_path, fine="pass")
    (tmp_path / "bad.yaml").write_text("known_failures: [\n")
    done = _run(tmp_path, "--expectations", "bad.yaml")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--conformance-expectations: the file does not load" in done.stdout + done.stderr


def test_a_serial_run_finds_the_corpus_as_a_parallel_one_does(tmp_path: Path) -> None:
    """-n 0 without --cases crashed (a TypeError: the corpus root was the option's None)."""
    _cases(tmp_path, fine="pass")
    env = {k: v for k, v in os.environ.items() if k != "TORCH_CONFORMANCE_CASES"}
    cmd = [sys.executable, "-m", "conformance", "run", "-q", "-n", "0", "--results", "out/r.jsonl"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r["case_id"] for r in _records(tmp_path)] == ["runtime_wrapper/fine"]
