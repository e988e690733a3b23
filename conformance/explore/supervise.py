"""The explorer's processes: each shard of rounds runs in a worker process that the supervisor
watches. A worker that dies (a segfault in the build, a memory kill) costs the program it was
running, which becomes a `crash` entry, and nothing else: the supervisor keeps what the worker had
saved (its findings, emitted as soon as shrunk, and its counts) and starts it again on the round
after the one that killed it. Ctrl-C stops the workers, which keep what they found, shrunk or not;
a second Ctrl-C ends them at once, keeping what they saved. Shards of several jobs (`--shard I/N`,
one per CI job) merge with `--merge`."""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from torch._logging import set_logs  # type: ignore[attr-defined]  # public API, not in the stub's exports

from conformance.data.loader import load_case
from conformance.explore.emit import emit, finding_record, torch_version, with_sightings
from conformance.explore.engine import Explorer
from conformance.explore.findings import Totals, findings_report
from conformance.explore.grammar import registry_table
from conformance.explore.layout import RUNNING, STATE
from conformance.files import write_atomic
from conformance.pytest_plugin.serial import end_with_parent

RESTART_FLOOR = 5.0  # seconds of budget below which a dead worker is not started again
STOP_GRACE = 120.0  # seconds a worker has after Ctrl-C to emit what it found
# What stops an exploration, keeping what it found: Ctrl-C, a kill, the terminal closing.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class Config:
    """What every worker of one exploration runs with (picklable: it crosses into the workers)."""

    out: str
    backends: tuple[str, ...]
    modes: tuple[str, ...]
    fault: str | None
    time_budget: float
    max_examples: int
    seed: int
    float_sweeps: bool
    registry: bool = True
    shard: tuple[int, int] = (0, 1)  # of the whole exploration (all jobs): (index, count)
    workers: int = 1


def shard_dir(config: Config, worker: int) -> Path:
    return Path(config.out) / "shards" / str(worker)


def worker_shard(config: Config, worker: int) -> tuple[int, int]:
    """Worker w of n in job shard (i, N) runs the rounds of global shard (i + N*w, N*n)."""
    index, count = config.shard
    return index + count * worker, count * config.workers


@dataclass(frozen=True)
class Budget:
    """What one worker life may spend: seconds, and programs (its share of --max-examples, less what
    its earlier lives ran)."""

    seconds: float
    programs: int


def worker_main(config: Config, worker: int, first_round: int, budget: Budget) -> None:
    """One worker's life: explore its shard, saving state after each program batch, round and finding."""
    from conformance.selftest.faults import FAULTS  # lazy: start-up

    set_logs(all=logging.CRITICAL)
    out = shard_dir(config, worker)
    out.mkdir(parents=True, exist_ok=True)
    extensions = (FAULTS[config.fault].extension(),) if config.fault else ()
    explorer = Explorer(out, backends=config.backends, modes=config.modes, extensions=extensions,
                        time_budget=budget.seconds, max_examples=budget.programs, seed=config.seed,
                        float_sweeps=config.float_sweeps, registry=config.registry,
                        shard=worker_shard(config, worker), first_round=first_round)
    records: list[dict[str, Any]] = []
    state = {"next_round": first_round, "done": False}

    def save(**changes: Any) -> None:
        state.update(changes)
        s = explorer.stats
        write_atomic(out / STATE, json.dumps({
            **state, "programs": s.programs, "eager_rejected": s.rejected, "flaky": sorted(set(s.flaky)),
            "seconds_in_runs": s.seconds_in_runs, "seconds_compiling": s.seconds_compiling,
            "seconds_in_torch": s.seconds_in_torch,
            "findings": [with_sightings(r, explorer) for r in records]}) + "\n")

    def found(f: Any) -> None:
        records.append(finding_record(emit(explorer, f), out))
        save()

    explorer.on_finding = found
    explorer.on_round = lambda r: save(next_round=r)
    explorer.progress = lambda _line: save()

    def stop(_signum: int, _frame: object) -> None:  # between programs: the runner turns exceptions into records
        explorer.stopping = True

    for sig in STOPPING:
        signal.signal(sig, stop)
    end_with_parent(signal.SIGINT)  # a supervisor that dies (SIGKILL too) stops its workers
    save()
    explorer.explore()
    (out / RUNNING).unlink(missing_ok=True)  # ran to its end: no program was left running
    save(done=True, interrupted=explorer.interrupted)


def say(line: str) -> None:
    """A line to stderr; a terminal that is gone (SIGHUP) loses it, and nothing else."""
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr, flush=True)


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None or exitcode >= 0:
        return f"exit status {exitcode}"
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


def _run_case(case: str, fault: str | None) -> None:
    """In a fresh process: run every variant of one case file (does the process die again?)."""
    from conformance.selftest.faults import FAULTS  # lazy: start-up

    path = Path(case)
    explorer = Explorer(path.parent, extensions=(FAULTS[fault].extension(),) if fault else ())
    explorer.records(load_case(path, path.parent))


class Interrupts:
    """While entered: SIGINT, SIGTERM and SIGHUP counted, never raised. The supervisor stops its workers on
    the first and ends them at once on the second; none interrupts the writing of findings.json,
    where an exception would lose everything found."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: dict[int, Any] = {}

    def _note(self, _signum: int, _frame: object) -> None:
        self.count += 1

    def __enter__(self) -> Interrupts:
        self._previous = {sig: signal.signal(sig, self._note) for sig in STOPPING}
        return self

    def __exit__(self, *_exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: not set from Python


def unmerged_states(out: Path) -> dict[Path, dict[str, Any]]:
    """The workers' saved states under `out` that no findings.json took: saved after the last one
    was written there, or with none (a run killed before it wrote, or whose findings.json the disk
    did not take). findings.json is written only after every worker has ended."""
    try:
        written = (out / "findings.json").stat().st_mtime_ns
    except OSError:
        written = -1
    return {p: _read(p) for p in sorted(out.glob(f"shards/*/{STATE}")) if p.stat().st_mtime_ns > written}


@dataclass
class _Life:
    process: Any
    started: float
    first_round: int


Target = Callable[[Config, int, int, Budget], None]


def supervise(config: Config, progress: Callable[[str], None] | None = None, target: Target = worker_main,
              confirm: Callable[[str, str | None], None] = _run_case,
              interrupts: Interrupts | None = None) -> tuple[Totals, float]:
    """Run the workers to the end of the budget, restarting any that dies; the totals and wall time.
    Ctrl-C, and a CI job cancelled (SIGTERM), stop the workers but keep what they found: counted by
    `interrupts` (the caller's, which shields its writing of the findings too), or by our own."""
    if interrupts is None:
        with Interrupts() as own:
            return supervise(config, progress, target, confirm, own)
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no torch state shared with the parent
    if config.registry:
        registry_table()  # validated once here (then cached per build), not by each worker against its budget
    start = time.monotonic()
    totals = Totals()
    lives: dict[int, _Life] = {}
    ran: dict[int, int] = dict.fromkeys(range(config.workers), 0)  # programs per worker, over its lives
    share = -(-config.max_examples // config.workers)
    for d in (shard_dir(config, w) for w in range(config.workers)):
        for stale in (STATE, RUNNING):
            (d / stale).unlink(missing_ok=True)

    def begin(w: int, first_round: int) -> None:
        budget = Budget(config.time_budget - (time.monotonic() - start), share - ran[w])
        p = ctx.Process(target=target, args=(config, w, first_round, budget), daemon=True)
        p.start()
        lives[w] = _Life(p, time.monotonic() - start, first_round)

    def reap(w: int, life: _Life) -> None:
        del lives[w]
        d = shard_dir(config, w)
        state = _read(d / STATE)
        totals.absorb(state, d, life.started)
        ran[w] += state.get("programs", 0)
        if state.get("done"):
            return
        why = _signal_name(life.process.exitcode)
        if life.process.exitcode and life.process.exitcode > 0:
            totals.worker_errors.append(f"worker {w} ended with {why} (its traceback is above); went on")
        elif (d / RUNNING).exists():
            _crash(totals, d, why, fault=config.fault, confirm=confirm, when=time.monotonic() - start,
                   stopping=lambda: interrupts.count > 0)
        left = config.time_budget - (time.monotonic() - start)
        if left > RESTART_FLOOR and ran[w] < share and not interrupts.count:
            begin(w, state.get("next_round", life.first_round) + 1)  # the round that killed it is skipped

    for w in range(config.workers):
        if not interrupts.count:
            begin(w, 0)
    while lives and not interrupts.count:
        time.sleep(0.5)
        for w, life in list(lives.items()):
            if not life.process.is_alive():
                life.process.join()
                reap(w, life)
        if progress is not None and not interrupts.count:
            progress(_progress_line(config, totals, lives, start))
    if interrupts.count:
        totals.interrupted = True
        _stop(config, lives, totals, hurry=lambda: interrupts.count > 1)
    return totals, time.monotonic() - start


def _stop(config: Config, lives: dict[int, _Life], totals: Totals, hurry: Callable[[], bool]) -> None:
    """Ask every worker to stop after its program (and emit what it found), wait a while (until
    `hurry`: a second Ctrl-C), then end it; what each saved is kept either way."""
    if lives:
        say(f"\nexplore: stopping: each worker saves what it found (up to {STOP_GRACE:.0f} s); Ctrl-C again "
            "ends them now, keeping what they saved")
    for life in lives.values():
        if life.process.pid is not None:
            with contextlib.suppress(ProcessLookupError):  # it ended in the meantime
                os.kill(life.process.pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_GRACE
    for w, life in list(lives.items()):
        _wait(life.process, deadline, hurry)
        if life.process.is_alive():
            life.process.kill()
            life.process.join()
        totals.absorb(_read(shard_dir(config, w) / STATE), shard_dir(config, w), life.started)
        del lives[w]


def _wait(process: Any, deadline: float, stop: Callable[[], bool]) -> None:
    """Until the process ends, the deadline passes, or `stop` says so."""
    while process.is_alive() and time.monotonic() < deadline and not stop():
        process.join(0.2)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _progress_line(config: Config, totals: Totals, lives: dict[int, _Life], start: float) -> str:
    programs, findings = totals.programs, set(totals.findings)
    for w in lives:
        state = _read(shard_dir(config, w) / STATE)
        programs += state.get("programs", 0)
        findings.update(f["signature"] for f in state.get("findings", ()))
    spent = time.monotonic() - start
    return (f"{programs} programs, {programs / spent if spent else 0:.2f}/s, {len(findings)} finding(s), "
            f"{len(totals.crashes)} crash(es), {spent:.0f}/{config.time_budget:.0f} s")


def _program_of(text: str) -> str:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return ""
    return str(data.get("program", "")) if isinstance(data, dict) else ""


def _crash(totals: Totals, d: Path, why: str, *, fault: str | None,
           confirm: Callable[[str, str | None], None], when: float, stopping: Callable[[], bool]) -> None:
    """The program a worker died running, kept as a case file and rerun in a fresh process."""
    signature = f"crash {why}"
    text = (d / RUNNING).read_text(encoding="utf-8")
    if signature in totals.crashes:
        totals.crashes[signature]["count"] += 1
        return
    folder = d / "findings"
    folder.mkdir(parents=True, exist_ok=True)
    slug = "crash_" + "".join(c if c.isalnum() else "_" for c in why.lower())
    case = folder / f"{slug}.yaml"
    try:
        write_atomic(case, f"# the explorer's worker died of {why} running this program\n" + text)
    except OSError as exc:  # a full disk: the crash is still counted, its program kept in findings.json
        totals.crashes[signature] = {
            "signature": signature, "program": _program_of(text), "case": "", "found_after_s": round(when, 1),
            "reproduces": False, "rerun": f"not rerun: its case file could not be written ({exc.strerror or exc})",
            "count": 1}
        return
    p = multiprocessing.get_context("spawn").Process(target=confirm, args=(str(case), fault), daemon=True)
    p.start()
    _wait(p, time.monotonic() + 600, stopping)
    if p.is_alive():
        p.kill()
        p.join()
    again = _signal_name(p.exitcode)
    totals.crashes[signature] = {
        "signature": signature, "program": _program_of(text), "case": str(case), "found_after_s": round(when, 1),
        "reproduces": again == why, "rerun": f"a fresh process running the case ended with {again}", "count": 1,
    }


def totals_report(config: Config, totals: Totals, seconds: float) -> dict[str, Any]:
    head = {"torch": torch_version(), "backends": list(config.backends), "modes": list(config.modes),
            "seed": config.seed}
    return findings_report(Path(config.out), head, totals, seconds, parts=config.workers, shard=config.shard)


