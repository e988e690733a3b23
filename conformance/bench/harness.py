"""The harness's own cost over the case corpus (``torch-conformance bench harness``).

Note [Harness overhead]
~~~~~~~~~~~~~~~~~~~~~~~
Each run is a real ``torch-conformance run`` in a child process, timed from outside (wall
clock from spawn to exit: interpreter start, imports, collection and reporting included).
Every result record carries its time split (``durations``); torch's own time is
``eager + compile + compiled_calls`` summed over the records. Then:

* overhead (serial)     = wall / torch - 1                     target <= 0.10
* overhead (``-n N``)   = N x wall / torch - 1: the worker-seconds the run held per second
                          torch worked (idle workers at the end count against us too)
* speed-up of ``-n N``  = wall(-n N) / wall(serial)            target <= 0.6
* warm rerun            = wall(rerun, same compile caches) / wall(cold)   target <= 0.4

The cold runs get a fresh, empty ``TORCHINDUCTOR_CACHE_DIR`` each (torch's on-disk compile
caches live there); the warm rerun reuses the serial run's. Where the harness's share goes
is split into: inputs (``build_inputs``), oracles (snapshots and comparisons), probe (capture
and reference comparison), the rest of each record's ``total`` (isolation, reset, fingerprint)
and, outside any record, process start, imports, collection and the results writer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.results import HARNESS_BUCKETS, TORCH_BUCKETS, ResultRecord

__all__ = ["TARGETS", "CorpusRun", "harness_markdown", "run_corpus", "summarize"]

TARGETS = {"overhead": 0.10, "parallel": 0.6, "warm": 0.4}


@dataclass
class CorpusRun:
    name: str
    workers: int
    wall_s: float
    returncode: int
    records: list[ResultRecord] = field(default_factory=list)
    command: list[str] = field(default_factory=list)

    def sums(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for r in self.records:
            for k, v in r.durations.items():
                out[k] = out.get(k, 0.0) + v
        return out

    def summary(self) -> dict[str, Any]:
        s = self.sums()
        torch_s = sum(s.get(k, 0.0) for k in TORCH_BUCKETS)
        total = s.get("total", 0.0)
        in_record = total - torch_s - sum(s.get(k, 0.0) for k in HARNESS_BUCKETS)
        capacity = self.wall_s * self.workers
        statuses: dict[str, int] = {}
        for r in self.records:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        return {
            "name": self.name,
            "workers": self.workers,
            "wall_s": self.wall_s,
            "returncode": self.returncode,
            "records": len(self.records),
            "statuses": statuses,
            "torch_s": torch_s,
            "buckets_s": {**{k: s.get(k, 0.0) for k in (*TORCH_BUCKETS, *HARNESS_BUCKETS)},
                          "other_in_records": in_record,
                          "outside_records": capacity - total},
            "overhead": capacity / torch_s - 1.0 if torch_s > 0 else None,
            "command": self.command,
        }


_STARTUP = ("import torch, torch._dynamo; from torch._dynamo.backends.registry import lookup_backend; "
            "lookup_backend('aot_eager')")


def torch_startup_s(repeat: int = 3) -> float:
    """Median wall seconds for a fresh interpreter to import torch and dynamo: a cost every
    process of a run pays before any case, shown beside the overhead (never subtracted)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _STARTUP], check=False,  # noqa: S603  # fixed script, our interpreter
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def _read_records(path: Path) -> list[ResultRecord]:
    if not path.exists():
        return []
    return [ResultRecord.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def run_corpus(
    name: str,
    cases: Path,
    *,
    workers: int = 0,
    cache_dir: Path,
    results: Path,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> CorpusRun:
    """One ``torch-conformance run`` over ``cases`` in a child process, timed from outside."""
    cmd = [sys.executable, "-m", "conformance", "run", "--cases", str(cases), "--results", str(results), "-q",
           "-n", str(workers if workers > 1 else 1), *extra, str(cases)]
    child_env = {**os.environ, **(env or {}), "TORCHINDUCTOR_CACHE_DIR": str(cache_dir)}
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,  # noqa: S603  # our own CLI
                          check=False)
    wall = time.perf_counter() - start
    return CorpusRun(name, max(workers, 1), wall, proc.returncode, _read_records(results), cmd)


def summarize(runs: Sequence[CorpusRun], startup_s: float | None = None) -> dict[str, Any]:
    by = {r.name: r for r in runs}
    out: dict[str, Any] = {"runs": [r.summary() for r in runs], "targets": dict(TARGETS)}
    if startup_s is not None:
        out["torch_startup_s"] = startup_s
        for r in out["runs"]:
            # every worker process imports torch and dynamo once before its first case
            net = r["wall_s"] * r["workers"] - startup_s * r["workers"]
            r["overhead_net_of_startup"] = net / r["torch_s"] - 1.0 if r["torch_s"] > 0 else None
    serial = by.get("serial")
    if serial is not None and serial.wall_s > 0:
        if "parallel" in by:
            out["parallel_over_serial"] = by["parallel"].wall_s / serial.wall_s
        if "warm" in by:
            out["warm_over_cold"] = by["warm"].wall_s / serial.wall_s
    return out


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1%}"


def harness_markdown(summary: dict[str, Any]) -> str:
    t = summary["targets"]
    lines = [
        "# harness overhead",
        "",
        "overhead = workers x wall / torch - 1, torch = Σ(eager + compile + compiled calls) over the records "
        f"(target ≤ {t['overhead']:.0%}).",
        "",
        "| run | workers | items | wall s | torch s | overhead | inputs s | oracles s | probe s | other in records s "
        "| outside records s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["runs"]:
        b = r["buckets_s"]
        lines.append(
            f"| {r['name']} | {r['workers']} | {r['records']} | {r['wall_s']:.1f} | {r['torch_s']:.1f} | "
            f"{_pct(r['overhead'])} | {b['build_inputs']:.1f} | {b['oracles']:.1f} | {b['probe']:.1f} | "
            f"{b['other_in_records']:.1f} | {b['outside_records']:.1f} |"
        )
    lines.append("")
    if "torch_startup_s" in summary:
        lines.append(f"- a fresh interpreter importing torch and dynamo takes {summary['torch_startup_s']:.1f} s "
                     "(every worker pays it once); overhead net of it: "
                     + ", ".join(f"{r['name']} {_pct(r.get('overhead_net_of_startup'))}" for r in summary["runs"]))
    if "parallel_over_serial" in summary:
        v = summary["parallel_over_serial"]
        lines.append(f"- `-n 2` wall / serial wall = {v:.2f} (target ≤ {t['parallel']}: "
                     f"{'met' if v <= t['parallel'] else 'missed'})")
    if "warm_over_cold" in summary:
        v = summary["warm_over_cold"]
        lines.append(f"- warm-cache rerun / cold run = {v:.2f} (target ≤ {t['warm']}: "
                     f"{'met' if v <= t['warm'] else 'missed'})")
    for r in summary["runs"]:
        if r["overhead"] is not None:
            ok = r["overhead"] <= t["overhead"]
            lines.append(f"- {r['name']}: overhead {_pct(r['overhead'])} ({'met' if ok else 'missed'}); "
                         f"statuses {r['statuses']}; exit {r['returncode']}")
    lines += ["", "commands:", *(f"    {' '.join(r['command'])}" for r in summary["runs"])]
    return "\n".join(lines) + "\n"


def measure_harness(
    cases: Path,
    out_dir: Path,
    *,
    runs: Sequence[str] = ("serial", "parallel", "warm"),
    workers: int = 2,
    extra: Sequence[str] = (),
    say: Any = print,
) -> dict[str, Any]:
    """The three corpus runs (or those named in ``runs``); writes harness.json/.md to out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    done: list[CorpusRun] = []
    with tempfile.TemporaryDirectory(prefix="tc-bench-cache-") as tmp:
        serial_cache = Path(tmp, "serial")
        for name in runs:
            if name == "serial":
                cache, n = serial_cache, 0
            elif name == "parallel":
                cache, n = Path(tmp, "parallel"), workers
            elif name == "warm":
                if not serial_cache.exists():
                    say("warm: no serial run before it in this call; the caches are cold")
                cache, n = serial_cache, 0
            else:
                raise ValueError(f"unknown run {name!r}: serial, parallel, warm")
            say(f"harness: {name} run (workers {max(n, 1)}) over {cases} ...")
            run = run_corpus(name, cases, workers=n, cache_dir=cache, results=out_dir / f"harness-{name}.jsonl",
                             extra=extra)
            say(f"harness: {name}: {run.wall_s:.1f} s wall, {len(run.records)} records, exit {run.returncode}")
            done.append(run)
    say("harness: timing a bare torch start-up ...")
    summary = summarize(done, torch_startup_s())
    (out_dir / "harness.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    (out_dir / "harness.md").write_text(harness_markdown(summary), encoding="utf-8")
    return summary
