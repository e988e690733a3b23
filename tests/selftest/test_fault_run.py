"""A run over good cases mixed with programs that hang, end their process, crash, allocate
without bound or raise: every item still gets exactly one record, the bad ones an `error` or
`fail` with its reason, and the run says it failed (Note [Every item accounted for]).

Each run is the real CLI in a child process, serial (one worker, the default) and with -n 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CASE = """\
behavior: runtime_wrapper
summary: {name}
upstream: [https://github.com/pytorch/pytorch/pull/181271]
devices: [cpu]
backends: [aot_eager]
{extra}inputs:
  x: {{tensor: {{shape: [4]}}}}
program: |
  import ctypes, os, signal, sys, time
  def f(x):
{body}
      return x * 2
"""

# name -> (program body, extra case keys, the status it must end with, a phrase its reason must hold)
PROGRAMS: dict[str, tuple[str, str, str, str]] = {
    "good_one": ("pass", "", "pass", ""),
    "good_two": ("y = x + 1", "", "pass", ""),
    "good_three": ("x.mul_(1)", "", "pass", ""),
    "hang_in_python": ("while True:\n    pass", "", "error", "timeout: Timeout"),
    # a call no signal can interrupt, as native code is: SIGALRM blocked around a long sleep
    "hang_in_native_code": ("signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\ntime.sleep(3600)", "",
                            "error", "the signal could not interrupt it"),
    "os_exit_0": ("os._exit(0)", "", "error", "the worker process ended while running this item"),
    "os_exit_3": ("os._exit(3)", "", "error", "the worker process ended while running this item"),
    "segfault": ("ctypes.string_at(0)", "", "error", "Fatal Python error: Segmentation fault"),
    "sys_exit": ("sys.exit()", "", "error", "eager raised SystemExit"),
    "keyboard_interrupt": ("raise KeyboardInterrupt", "", "error", "eager raised KeyboardInterrupt"),
    "allocates_without_bound": ("keep = []\nwhile True:\n    keep.append(torch.empty(2 ** 28))", "", "error",
                                "can't allocate memory"),
    "raises_in_eager_only": ("if not torch.compiler.is_compiling():\n    raise ValueError('eager only')", "",
                             "error", "eager raised ValueError: eager only"),
    # compiled only: fullgraph refuses the graph break that eager runs through
    "raises_compiled_only": ("torch._dynamo.graph_break()", "compile: {fullgraph: true}\n", "fail",
                             "call: exception is Unsupported"),
}


@pytest.fixture(scope="module")
def fault_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("faults") / "cases"
    for name, (body, extra, _, _) in PROGRAMS.items():
        path = root / "runtime_wrapper" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CASE.format(name=name, extra=extra, body=textwrap.indent(body, " " * 6)))
    return root


@pytest.mark.parametrize("workers", [None, "2"], ids=["serial", "n2"])
def test_every_item_has_exactly_one_record_whatever_its_program_does(fault_cases: Path, tmp_path: Path,
                                                                     workers: str | None) -> None:
    results = tmp_path / "results" / "results.jsonl"
    cmd = [sys.executable, "-m", "conformance", "run", "--cases", str(fault_cases), "--results", str(results),
           "--timeout", "4", "--memory-limit", "3", "-q", *(["-n", workers] if workers else [])]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    manifest = json.loads(results.with_name("results.manifest.json").read_text())
    assert manifest["finished"] and manifest["exit_status"] == 1, manifest
    assert len(records) == len(manifest["items"]) == len(PROGRAMS), out
    by_case = {}
    for rec in records:
        name = rec["case_id"].split("/")[-1]
        assert name not in by_case, f"two records for {name}"
        by_case[name] = rec
    for name, (_, _, status, phrase) in PROGRAMS.items():
        rec = by_case[name]
        assert rec["status"] == status, (name, rec["status"], rec["reason"])
        assert phrase in rec["reason"], (name, rec["reason"])
