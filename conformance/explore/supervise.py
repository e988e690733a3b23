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
import multiprocessing
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conformance.explore.layout import EXAMPLES, RUNNING, STATE
from conformance.files import write_atomic

RESTART_FLOOR = 5.0  # seconds of budget below which a dead worker is not started again
STOP_GRACE = 120.0  # seconds a worker has after Ctrl-C to emit what it found


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
    import logging

    from torch._logging import set_logs  # type: ignore[attr-defined]  # public API, not in the stub's exports

    from conformance.explore.emit import emit, finding_record, with_sightings
    from conformance.explore.engine import Explorer
    from conformance.selftest.faults import FAULTS

    set_logs(all=logging.CRITICAL)
    out = shard_dir(config, worker)
    out.mkdir(parents=True, exist_ok=True)
    hooks = (FAULTS[config.fault].hook(),) if config.fault else ()
    explorer = Explorer(out, backends=config.backends, modes=config.modes, hooks=hooks, time_budget=budget.seconds,
                        max_examples=budget.programs, seed=config.seed, float_sweeps=config.float_sweeps,
                        shard=worker_shard(config, worker), first_round=first_round)
    records: list[dict[str, Any]] = []
    state = {"next_round": first_round, "done": False}

    def save(**changes: Any) -> None:
        state.update(changes)
        s = explorer.stats
        write_atomic(out / STATE, json.dumps({
            **state, "programs": s.programs, "eager_rejected": s.rejected, "flaky": sorted(set(s.flaky)),
            "seconds_in_runs": s.seconds_in_runs, "seconds_compiling": s.seconds_compiling,
            "findings": [with_sightings(r, explorer) for r in records]}) + "\n")

    def found(f: Any) -> None:
        records.append(finding_record(emit(explorer, f), out))
        save()

    explorer.on_finding = found
    explorer.on_round = lambda r: save(next_round=r)
    explorer.progress = lambda _line: save()

    def stop(_signum: int, _frame: object) -> None:  # between programs: the runner turns exceptions into records
        explorer.stopping = True

    signal.signal(signal.SIGINT, stop)
    save()
    explorer.explore()
    (out / RUNNING).unlink(missing_ok=True)  # ran to its end: no program was left running
    save(done=True, interrupted=explorer.interrupted)


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None or exitcode >= 0:
        return f"exit status {exitcode}"
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


def _run_case(case: str, fault: str | None) -> None:
    """In a fresh process: run every variant of one case file (does the process die again?)."""
    from conformance.explore.engine import Explorer
    from conformance.loader import load_case
    from conformance.selftest.faults import FAULTS

    path = Path(case)
    explorer = Explorer(path.parent, hooks=(FAULTS[fault].hook(),) if fault else ())
    explorer.records(load_case(path, path.parent))


@dataclass
class Totals:
    """What the workers saved, summed over their lives."""

    programs: int = 0
    eager_rejected: int = 0
    seconds_in_runs: float = 0.0
    seconds_compiling: float = 0.0
    flaky: set[str] = field(default_factory=set)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    crashes: dict[str, dict[str, Any]] = field(default_factory=dict)
    worker_errors: list[str] = field(default_factory=list)
    interrupted: bool = False

    def absorb(self, state: dict[str, Any], root: Path, offset: float = 0.0) -> None:
        """A worker's saved state or a job's findings.json (paths in it relative to `root`)."""
        self.programs += state.get("programs", 0)
        self.eager_rejected += state.get("eager_rejected", 0)
        self.seconds_in_runs += state.get("seconds_in_runs", 0.0)
        self.seconds_compiling += state.get("seconds_compiling", 0.0)
        self.flaky.update(state.get("flaky", ()))
        self.worker_errors += state.get("worker_errors", [])
        self.interrupted |= bool(state.get("interrupted"))
        for found in state.get("findings", ()):
            f = rooted({**found, "found_after_s": round(found["found_after_s"] + offset, 1)}, root)
            old = self.findings.get(f["signature"])
            if old is not None:  # the same cause in two workers or shards: its sightings add up
                f["seen"] = f.get("seen", 1) + old.get("seen", 1)
                f["examples"] = list(dict.fromkeys([*old.get("examples", []), *f.get("examples", [])]))[:EXAMPLES]
            if old is None or (f["statements"], f["found_after_s"]) < (old["statements"], old["found_after_s"]):
                self.findings[f["signature"]] = f  # of two, the fewer statements, then the first found
            else:
                old.update(seen=f["seen"], examples=f["examples"])
        for crash in state.get("crashes", ()):
            if crash["signature"] in self.crashes:
                self.crashes[crash["signature"]]["count"] += crash.get("count", 1)
            else:
                self.crashes[crash["signature"]] = rooted(crash, root)


def rooted(f: dict[str, Any], root: Path) -> dict[str, Any]:
    """The finding's file paths made absolute (they are relative to the folder that wrote them); a
    path that leads out of that folder (a findings.json from elsewhere is data) is dropped."""
    out = dict(f)
    for key in ("case", "reproducer"):
        if f.get(key):
            path = (root / str(f[key])).resolve()
            out[key] = str(path) if path.is_relative_to(root.resolve()) else ""
    return out


class Interrupts:
    """While entered: SIGINT and SIGTERM counted, never raised. The supervisor stops its workers on
    the first and ends them at once on the second; none interrupts the writing of findings.json,
    where an exception would lose everything found."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: dict[int, Any] = {}

    def _note(self, _signum: int, _frame: object) -> None:
        self.count += 1

    def __enter__(self) -> Interrupts:
        self._previous = {sig: signal.signal(sig, self._note) for sig in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *_exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: not set from Python


class WriteFailed(Exception):
    """A file of the report that could not be written (a full disk, no permission)."""

    def __init__(self, path: Path, exc: OSError) -> None:
        super().__init__(f"cannot write {path}: {exc.strerror or exc}")
        self.path = path


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
        print(f"\nexplore: stopping: each worker saves what it found (up to {STOP_GRACE:.0f} s); Ctrl-C again "
              "ends them now, keeping what they saved", file=sys.stderr)
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


def merge_into(out: Path, parts: Sequence[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """One report from several jobs' findings.json (shards of one exploration): findings by signature,
    counts summed, the wall time the longest job's."""
    totals = Totals()
    for root, report in parts:
        totals.absorb(report, root)
    head = {k: parts[0][1].get(k) for k in ("torch", "backends", "modes", "seed")}
    seconds = max(report.get("seconds", 0.0) for _, report in parts)
    workers = sum(int(report.get("parts", 1)) for _, report in parts)  # each ran this many at once
    return findings_report(out, head, totals, seconds, parts=workers, shard=(0, 1))


def totals_report(config: Config, totals: Totals, seconds: float) -> dict[str, Any]:
    from conformance.explore.emit import torch_version

    head = {"torch": torch_version(), "backends": list(config.backends), "modes": list(config.modes),
            "seed": config.seed}
    return findings_report(Path(config.out), head, totals, seconds, parts=config.workers, shard=config.shard)


def _copied(f: dict[str, Any], out: Path) -> dict[str, Any]:
    """A finding's files copied to out/findings/ (from a shard's folder), paths relative to out."""
    f = dict(f)
    for key in ("case", "reproducer"):
        if not f.get(key):
            continue
        src = Path(f[key])
        dst = out / "findings" / src.name
        if src.exists() and src.resolve() != dst.resolve():
            try:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
            except OSError as exc:
                raise WriteFailed(dst, exc) from exc
        f[key] = dst.relative_to(out).as_posix() if dst.exists() else f[key]
    return f


def findings_report(out: Path, head: dict[str, Any], totals: Totals, seconds: float, *, parts: int,
            shard: tuple[int, int]) -> dict[str, Any]:
    t = totals
    seconds = round(seconds, 1)  # 0, or at least 0.1: the rates below stay finite
    return {
        **head,
        "shard": f"{shard[0] + 1}/{shard[1]}",
        "parts": parts,
        "seconds": seconds,
        "programs": t.programs,
        "eager_rejected": t.eager_rejected,
        "seconds_in_runs": round(t.seconds_in_runs, 1),
        "seconds_compiling": round(t.seconds_compiling, 1),
        "valid_share": round(1 - t.eager_rejected / max(t.programs, 1), 3),
        "programs_per_hour": round(t.programs / seconds * 3600) if seconds else 0,
        "compile_share": round(t.seconds_compiling / (seconds * parts), 3) if seconds else 0.0,  # parts ran at once
        "interrupted": t.interrupted,
        "flaky": sorted(t.flaky),
        "worker_errors": t.worker_errors,
        "findings": sorted((_copied(f, out) for f in t.findings.values()), key=lambda f: f["found_after_s"]),
        "crashes": sorted((_copied(c, out) for c in t.crashes.values()), key=lambda c: c["found_after_s"]),
    }
