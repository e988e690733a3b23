"""`explore` against what a person, a disk or a second Ctrl-C hands it: a findings.json made by
hand, a folder merged twice, `-o /`, a full disk, an interrupted shutdown. Each is a usage error or
a one-line error with its own exit status, never a traceback, and nothing found is lost unasked.
No test here runs a compile: merging and the supervisor's injected workers are enough."""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.explore import supervise as supervise_module
from conformance.explore.cli import EXIT_INTERRUPTED, EXIT_USAGE, EXIT_WRITE
from conformance.explore.findings import Totals
from conformance.explore.findings_file import read_findings
from conformance.explore.supervise import STATE, Budget, Config, shard_dir, unmerged_states
from conformance.files import write_atomic


def _finding(signature: str = "same", statements: int = 2) -> dict[str, Any]:
    return {"signature": signature, "statements": statements, "found_after_s": 1.0, "case": "", "reproducer": "",
            "program": "def f(a): ...", "mismatches": [], "variant": "cpu-aot_eager-inference",
            "programs_before": 1, "reproduces": True, "reason": "", "case_yaml": "# a case\n"}


def _doc(**changes: Any) -> dict[str, Any]:
    doc = {"torch": "x", "backends": ["aot_eager"], "modes": ["inference"], "seed": 0, "shard": "1/1",
           "parts": 1, "seconds": 10.0, "programs": 100, "eager_rejected": 1, "seconds_in_runs": 5.0,
           "seconds_compiling": 2.0, "interrupted": False, "flaky": [], "worker_errors": [],
           "findings": [_finding()], "crashes": []}
    return {**doc, **changes}


def _folder(path: Path, doc: dict[str, Any] | str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "findings.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


@pytest.fixture(autouse=True)
def _no_known_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no results/results.jsonl of the checkout is matched against


def _merge(*args: str) -> int:
    try:
        return main(["explore", "--merge", *args])
    except BaseException as exc:  # a traceback is the failure under test
        pytest.fail(f"explore --merge raised {exc!r}")


DEEP = '{"torch": "x", "flaky": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize(("text", "field", "message"), [
    (DEEP, "document", "Invalid JSON: recursion limit exceeded"),
    (json.dumps(_doc(parts=-1)), "parts", "greater than or equal to 1"),
    (json.dumps(_doc(parts=0)), "parts", "greater than or equal to 1"),
    (json.dumps(_doc(programs=1e308)), "programs", "a valid integer"),
    (json.dumps(_doc(programs=10**30)), "programs", "less than or equal to"),
    (json.dumps(_doc(seconds=float("nan"))), "seconds", "a finite number"),
    (json.dumps(_doc(seconds_in_runs=float("inf"))), "seconds_in_runs", "a finite number"),
    (json.dumps(_doc(seconds_compiling=-1.0)), "seconds_compiling", "greater than or equal to 0"),
    (json.dumps(_doc(backends="aot_eager")), "backends", "a valid array"),
    (json.dumps(_doc(interrupted=1)), "interrupted", "a valid boolean"),
    (json.dumps(_doc(eager_rejected=True)), "eager_rejected", "a valid integer"),
    (json.dumps(_doc(eager_rejected=101)), "eager_rejected", "more than the 100 programs"),
    (json.dumps(_doc(shard="3/2")), "shard", "I must be between 1 and N"),
    (json.dumps(_doc(findings=[{k: v for k, v in _finding().items() if k != "statements"}])),
     "findings[0].statements", "Field required"),
    (json.dumps(_doc(findings=[{**_finding(), "statements": "many"}])), "findings[0].statements", "valid integer"),
    (json.dumps(_doc(findings=["a finding"])), "findings[0]", "an object"),
    (json.dumps(_doc()).replace('"found_after_s": 1.0', '"found_after_s": 1e400'),
     "findings[0].found_after_s", "a finite number"),
    (json.dumps(_doc(crashes=[{"signature": "crash SIGSEGV", "count": 1}])), "crashes[0].program", "Field required"),
    ("[1, 2]", "document", "an object"),
    ("", "document", "Invalid JSON"),
])
def test_a_hand_made_findings_file_is_a_usage_error_naming_the_field(
        text: str, field: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    part = _folder(tmp_path / "part", text)
    assert _merge(str(part), "-o", str(tmp_path / "out")) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"explore: --merge {part}/findings.json: {field}: " in err and message in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "findings.json").exists()


def test_every_usage_error_is_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nan = _folder(tmp_path / "nan", json.dumps(_doc(seconds=float("nan"))))
    zero = _folder(tmp_path / "zero", json.dumps(_doc(parts=0)))
    assert main(["explore", "--merge", str(nan), str(zero), str(tmp_path / "nowhere"), "--seed", "-1",
                 "-o", str(tmp_path / "out")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"--merge {nan}/findings.json: seconds: " in err and f"--merge {zero}/findings.json: parts: " in err
    assert f"--merge {tmp_path}/nowhere/findings.json: cannot be read" in err and "--seed -1" in err


def test_what_explore_writes_is_what_merge_reads(tmp_path: Path) -> None:
    """The writer and the declared shape agree (a crash, a finding not shrunk, marked known included),
    and the merged report is written as strict JSON."""
    from conformance.explore.findings import findings_report, write_report

    crash = {"signature": "crash SIGSEGV", "program": "def f(a): ...", "case": "", "found_after_s": 3.0,
             "reproduces": False, "rerun": "a fresh process running the case ended with exit status 0", "count": 2}
    totals = Totals(programs=9, eager_rejected=2, flaky={"s"}, interrupted=True, worker_errors=["worker 0 ..."],
                    findings={"same": {**_finding(), "shrunk": False, "kinds": ["view"], "where": "same",
                                       "known_by": ["b/c"]}},
                    crashes={"crash SIGSEGV": crash})
    head = {"torch": "x", "backends": ["aot_eager"], "modes": ["inference"], "seed": 3}
    report = findings_report(tmp_path, head, totals, 1e-320, parts=2, shard=(1, 4))  # no inf rate
    report["known_from"] = "results.jsonl"
    write_report(tmp_path, report)
    doc, problems = read_findings(tmp_path / "findings.json")
    assert problems == [] and doc is not None and doc.shard == "2/4" and doc.crashes[0].count == 2


@pytest.mark.parametrize("again", ["same", "spelled otherwise", "a link", "a copy"])
def test_a_folder_merged_twice_is_refused_naming_the_duplicate(
        again: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _folder(tmp_path / "a", json.dumps(_doc(shard="2/4")))
    if again == "same":
        second = str(a)
    elif again == "spelled otherwise":
        second = f"{tmp_path}/./a/../a/"
    elif again == "a link":
        (tmp_path / "link").symlink_to(a)
        second = str(tmp_path / "link")
    else:
        second = str(_folder(tmp_path / "copy", (a / "findings.json").read_text()))
    out = tmp_path / "out"
    assert _merge(str(a), second, "-o", str(out)) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"--merge {a}" in err and "would double" in err and not out.joinpath("findings.json").exists(), err


def test_shards_whose_rounds_overlap_are_refused_and_disjoint_ones_summed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _folder(tmp_path / "one", json.dumps(_doc(shard="1/2", programs=100)))
    two = _folder(tmp_path / "two", json.dumps(_doc(shard="2/2", programs=50)))
    quarter = _folder(tmp_path / "quarter", json.dumps(_doc(shard="3/4", programs=10)))  # rounds 2, 6, ...: one's
    other_seed = _folder(tmp_path / "seed1", json.dumps(_doc(shard="1/2", seed=1, programs=7)))
    assert _merge(str(one), str(two), str(quarter), "-o", str(tmp_path / "bad")) == EXIT_USAGE
    assert f"--merge {quarter}/findings.json: shard: 3/4 explored rounds that shard 1/2 of --merge {one}" in (
        capsys.readouterr().err)
    assert _merge(str(one), str(two), str(other_seed), "-o", str(tmp_path / "out")) == 1
    assert json.loads((tmp_path / "out" / "findings.json").read_text())["programs"] == 157


@pytest.mark.parametrize("where", ["root", "home"])
def test_the_output_folder_may_not_be_a_filesystem_root_or_the_home_folder(
        where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    part = _folder(tmp_path / "part", json.dumps(_doc()))
    out = "/" if where == "root" else f"{home}/."
    # with another usage error as well, so that nothing is written to / even where the check were missing
    assert _merge(str(part), "-o", out, *(["--seed", "-1"] if where == "root" else [])) == EXIT_USAGE
    assert f"explore: -o {out}: a filesystem root or your home folder" in capsys.readouterr().err
    assert list(home.iterdir()) == []
    assert main(["explore", "-o", str(home), "--backends", "none", "--seed", "-1"]) == EXIT_USAGE  # exploring too
    assert "a filesystem root or your home folder" in capsys.readouterr().err


def _saves_a_finding_then_is_interrupted_twice(config: Config, worker: int, first_round: int, budget: Budget) -> None:
    """A worker (in its own process) that has saved a finding when the user presses Ctrl-C, and is
    slow to stop: the user presses Ctrl-C again while the supervisor waits for it."""
    d = shard_dir(config, worker)
    d.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGINT, lambda _s, _f: os.kill(os.getppid(), signal.SIGINT))
    write_atomic(d / STATE, json.dumps({"programs": 7, "eager_rejected": 1, "findings": [_finding("kept")]}))
    os.kill(os.getppid(), signal.SIGINT)
    time.sleep(600)


def test_a_second_ctrl_c_during_the_shutdown_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(supervise_module, "supervise", functools.partial(
        supervise_module.supervise, target=_saves_a_finding_then_is_interrupted_twice))
    monkeypatch.setattr(supervise_module, "STOP_GRACE", 900.0)
    out = tmp_path / "run"
    start = time.monotonic()
    try:
        status = main(["explore", "-o", str(out), "--backends", "none", "--time-budget", "300", "-q"])
    except KeyboardInterrupt:
        pytest.fail("the second Ctrl-C escaped as a KeyboardInterrupt")
    assert status == EXIT_INTERRUPTED
    # not a speed bound: waiting out the grace (900 s) is what the second Ctrl-C must cut short
    assert time.monotonic() - start < 450, "the second Ctrl-C did not end the wait for the workers"
    report = json.loads((out / "findings.json").read_text())
    assert report["interrupted"] and report["programs"] == 7
    assert [f["signature"] for f in report["findings"]] == ["kept"]
    assert "Ctrl-C again" in capsys.readouterr().err
    assert unmerged_states(out) == {}  # the next run into -o goes ahead: findings.json took the state


def _saves_a_finding_then_its_terminal_closes(config: Config, worker: int, first_round: int, budget: Budget) -> None:
    """A worker that has saved a finding when the terminal closes (SIGHUP to the supervisor); it
    stops when the supervisor asks (SIGINT), as the explorer's workers do."""
    d = shard_dir(config, worker)
    d.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGINT, lambda _s, _f: os._exit(0))
    write_atomic(d / STATE, json.dumps({"programs": 3, "eager_rejected": 0, "findings": [_finding("kept")]}))
    os.kill(os.getppid(), signal.SIGHUP)
    time.sleep(600)


def test_a_closed_terminal_stops_the_exploration_and_keeps_what_it_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervise_module, "supervise", functools.partial(
        supervise_module.supervise, target=_saves_a_finding_then_its_terminal_closes))
    out = tmp_path / "run"
    status = main(["explore", "-o", str(out), "--backends", "none", "--time-budget", "300", "-q"])
    assert status == EXIT_INTERRUPTED
    report = json.loads((out / "findings.json").read_text())
    assert report["interrupted"] and report["programs"] == 3
    assert [f["signature"] for f in report["findings"]] == ["kept"]


def test_a_child_that_asks_to_end_with_its_parent_ends_when_the_parent_is_killed(tmp_path: Path) -> None:
    import subprocess
    import sys

    pid_file = tmp_path / "grandchild"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import os, signal, time\n"
        "from conformance.pytest_plugin.serial import end_with_parent\n"
        "if os.fork() == 0:\n"
        "    end_with_parent(signal.SIGTERM)\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(600)\n"
        "time.sleep(600)\n")])
    deadline = time.monotonic() + 60
    while not (pid_file.is_file() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    grandchild = int(pid_file.read_text())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            return  # ended with its parent (it is reaped by init)
        if Path(f"/proc/{grandchild}/stat").read_text().split()[2] == "Z":
            return
        time.sleep(0.1)
    os.kill(grandchild, signal.SIGKILL)
    pytest.fail("the child ran on, orphaned, after its parent was killed")


def test_a_ctrl_c_while_the_findings_are_written_does_not_stop_the_writing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.explore import findings

    markdown = findings.to_markdown

    def interrupted_markdown(report: dict[str, Any]) -> str:
        os.kill(os.getpid(), signal.SIGINT)
        return markdown(report)

    monkeypatch.setattr(findings, "to_markdown", interrupted_markdown)
    part = _folder(tmp_path / "part", json.dumps(_doc()))
    try:
        status = main(["explore", "--merge", str(part), "-o", str(tmp_path / "out")])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C interrupted the writing of findings.json / findings.md")
    assert status == 1
    assert json.loads((tmp_path / "out" / "findings.json").read_text())["findings"]
    assert (tmp_path / "out" / "findings.md").read_text().startswith("# Explorer findings")


def _fail_the_nth_fsync(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    calls = [0]
    fsync = os.fsync

    def full(fd: int) -> None:
        calls[0] += 1
        if calls[0] == n:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", full)


@pytest.mark.parametrize(("failing", "nth"), [("findings.json", 1), ("findings.md", 2)])
def test_a_full_disk_is_one_line_and_its_own_status_and_leaves_no_older_report(
        failing: str, nth: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    part = _folder(tmp_path / "part", json.dumps(_doc()))
    out = tmp_path / "out"
    out.mkdir()
    (out / "findings.json").write_text(json.dumps(_doc(programs=1)))  # an earlier run's
    (out / "findings.md").write_text("# an earlier run's\n")
    _fail_the_nth_fsync(monkeypatch, nth)
    assert _merge(str(part), "-o", str(out)) == EXIT_WRITE
    err = capsys.readouterr().err
    assert err == f"explore: cannot write {out / failing}: No space left on device\n"
    assert list(out.iterdir()) == []  # neither the earlier report nor a temporary file


def test_a_finding_file_the_disk_cannot_take_is_a_write_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    part = _folder(tmp_path / "part", json.dumps(_doc(findings=[{**_finding(), "case": "findings/a.yaml"}])))
    (part / "findings").mkdir()
    (part / "findings" / "a.yaml").write_text("# a case\n")

    def full(src: str, dst: str, **_kw: Any) -> str:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(shutil, "copyfile", full)
    out = tmp_path / "out"
    assert _merge(str(part), "-o", str(out)) == EXIT_WRITE
    assert capsys.readouterr().err == f"explore: cannot write {out}/findings/a.yaml: No space left on device\n"
    assert not (out / "findings.json").exists()


def _saved_one_finding(config: Config, progress: Any = None, **_kw: Any) -> tuple[Totals, float]:
    """The supervisor's part, without workers: what one worker saved, and the totals it makes."""
    d = shard_dir(config, 0)
    d.mkdir(parents=True)
    write_atomic(d / STATE, json.dumps({"programs": 5, "findings": [_finding("kept")]}))
    totals = Totals()
    totals.absorb(json.loads((d / STATE).read_text()), d)
    return totals, 2.0


def test_state_no_findings_json_took_is_never_removed_by_the_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A full disk (or a killed run) leaves the workers' saved state with no findings.json: the next
    run into the same -o is refused, saying what is there, instead of starting over it."""
    out = tmp_path / "run"
    monkeypatch.setattr(supervise_module, "supervise", _saved_one_finding)
    _fail_the_nth_fsync(monkeypatch, 2)  # the worker's state is saved; findings.json is not
    assert main(["explore", "-o", str(out), "--backends", "none", "-q"]) == EXIT_WRITE
    state = out / "shards" / "0" / STATE
    assert state.is_file() and not (out / "findings.json").exists()
    capsys.readouterr()

    def explores(*_a: Any, **_kw: Any) -> Any:
        pytest.fail("explored over the state of the earlier run")

    monkeypatch.setattr(supervise_module, "supervise", explores)
    assert main(["explore", "-o", str(out), "--backends", "none", "-q"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"-o {out}: {state} holds what an earlier run found (1 finding(s) in 5 programs)" in err, err
    assert json.loads(state.read_text())["findings"][0]["signature"] == "kept"


def test_state_that_a_findings_json_took_does_not_stop_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    state = out / "shards" / "0" / STATE
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"programs": 5, "findings": []}))
    (out / "findings.json").write_text("{}")
    os.utime(state, ns=(1, 1))  # saved before findings.json was written: a folder of any earlier version
    assert unmerged_states(out) == {}
    os.utime(state, None)
    os.utime(out / "findings.json", ns=(1, 1))
    assert list(unmerged_states(out)) == [state]


def test_a_crash_whose_case_file_the_disk_cannot_take_is_still_counted(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def full(path: Path, data: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    (tmp_path / supervise_module.RUNNING).write_text("program: |\n  def f(x):\n      return x\n")
    monkeypatch.setattr(supervise_module, "write_atomic", full)
    totals = Totals()
    supervise_module._crash(totals, tmp_path, "SIGSEGV", fault=None, confirm=lambda case, fault: None, when=1.0,
                            stopping=lambda: False)
    (crash,) = totals.crashes.values()
    assert crash["case"] == "" and not crash["reproduces"] and "No space left on device" in crash["rerun"]
    assert crash["program"].startswith("def f(x):")


def test_a_seed_no_case_can_carry_is_refused_up_front(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A case's seed is below 2**63: a larger --seed was a worker's traceback (exit 3), not a usage error."""
    assert main(["explore", "-o", str(tmp_path / "out"), "--seed", str(1 << 63), "--time-budget", "1"]) == 2
    assert f"--seed {1 << 63}: give 0 or a positive number below 2**63" in capsys.readouterr().err
    assert main(["explore", "--coverage", "1", "--seed", str(1 << 63)]) == 2
    assert not (tmp_path / "out").exists()
