"""The corpus on one device type, in phases, under a deadline, resumable: what scripts/gpu_run.sh runs
on a GPU machine lent for a few minutes (and what anyone can run on a GPU box of their own).

    python scripts/gpu_run.py OUT [--devices cuda] [--deadline SECONDS] [-n N] [-k EXPR] [-- RUN ARGS]

Phases, in order: the cases written for this device (they name it and no other type), then every
other backend (aot_eager, aot_function, ...), then inductor. Each phase is one `torch-conformance
run` of the items still without a result, into `OUT/results/run<K>-<phase>.jsonl` (K counts the
invocations). When the deadline comes, the running phase gets SIGINT, as from Ctrl-C: every finished
item keeps its record and the unfinished ones are written as `not run` error records. Then:

- `OUT/results/results.jsonl` (+ its manifest): one record per planned item, the latest result of
  every invocation so far (a `not run` placeholder only where no invocation finished the item);
- `OUT/unfinished.txt`: the node ids of the items still without a result (run again to resume);
- `OUT/report/`: `torch-conformance report` of results.jsonl.

Exit status: 0 every planned item has a result and none failed; 1 every item has a result and some
failed, errored or xpassed; 3 items remain unfinished (run the same command again); 2 usage.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

PHASES = ("device-specific", "aot", "inductor")
INDUCTOR = "inductor"
GRACE_S = 30.0  # after SIGINT: the workers finish their records and the controller its manifest (seen: 3 s)
REPORT_RESERVE_S = 30.0  # kept back from the deadline for consolidation and the report
MIN_PHASE_S = 20.0  # a phase with less time than this left is not started
EXIT_UNFINISHED = 3


@dataclass(frozen=True)
class Planned:
    nodeid: str
    case_id: str
    variant: str
    phase: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.case_id, self.variant)


def plan(cases: Path, devices: tuple[str, ...], keyword: str = "") -> list[Planned]:
    """Every item of the corpus on `devices` (that `-k keyword` selects), in phase order (the order of
    the cases within one)."""
    from conformance.cli import _keyword_matches
    from conformance.data.devices import device_type
    from conformance.data.loader import load_all
    from conformance.data.variants import variants_of
    from conformance.pytest_plugin.plugin import item_name

    loaded, errors = load_all([cases], cases)
    if errors:
        raise SystemExit("the case files do not load; run torch-conformance validate:\n"
                         + "\n".join(str(e) for e in errors))
    wanted = {device_type(d) for d in devices}
    items: list[Planned] = []
    for lc in loaded:
        own = lc.case.devices is not None and {device_type(d) for d in lc.case.devices} <= wanted
        try:
            shown = lc.path.resolve().relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            shown = lc.path.as_posix()
        for v in variants_of(lc.case, devices=devices):
            if keyword and not _keyword_matches(keyword, lc, v):
                continue
            phase = PHASES[0] if own else INDUCTOR if v.backend == INDUCTOR else PHASES[1]
            items.append(Planned(f"{shown}::{item_name(lc.id, v)}", lc.id, v.label, phase))
    return sorted(items, key=lambda i: PHASES.index(i.phase))


def read_records(results: Path) -> list[tuple[str, dict[str, object]]]:
    """(line, record) of every phase file, oldest invocation first, phases in their order."""

    def order(p: Path) -> tuple[int, int]:
        run, _, phase = p.stem.partition("-")
        return (int(run[3:]) if run[3:].isdigit() else 0, PHASES.index(phase) if phase in PHASES else 99)

    out = []
    for path in sorted(results.glob("run*-*.jsonl"), key=order):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                out.append((line, json.loads(line)))
            except ValueError:
                print(f"{path}: a torn line is left out (the run was killed while writing it)", file=sys.stderr)
    return out


def latest(results: Path) -> dict[tuple[str, str], tuple[str, dict[str, object]]]:
    """Per (case, variant): the latest result; a placeholder only where no result exists."""
    from conformance.pytest_plugin.accounting import is_placeholder

    best: dict[tuple[str, str], tuple[str, dict[str, object]]] = {}
    for line, rec in read_records(results):
        key = (str(rec.get("case_id")), str(rec.get("variant")))
        held = best.get(key)
        placeholder = is_placeholder(str(rec.get("status")), str(rec.get("reason") or ""))
        if held is None or not placeholder or is_placeholder(str(held[1].get("status")),
                                                             str(held[1].get("reason") or "")):
            best[key] = (line, rec)
    return best


def finished(rec: dict[str, object]) -> bool:
    from conformance.pytest_plugin.accounting import is_placeholder

    return not is_placeholder(str(rec.get("status")), str(rec.get("reason") or ""))


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_phase(cmd: list[str], seconds: float, env: dict[str, str]) -> int:
    """Run one phase in its own process group; at the deadline, SIGINT to the group (as Ctrl-C does),
    then SIGKILL after the grace period."""
    # SIGINT as Ctrl-C's: a parent started in the background (`cmd &` in a script) ignores SIGINT, and
    # its children would inherit that and sit out the deadline until the SIGKILL lost their records
    proc = subprocess.Popen(cmd, env=env, start_new_session=True,  # noqa: S603  # our own CLI
                            preexec_fn=_interruptible)  # noqa: PLW1509  # gpu_run is one thread
    try:
        return proc.wait(timeout=max(seconds, 1.0))
    except subprocess.TimeoutExpired:
        print(f"gpu_run: deadline: stopping the phase (SIGINT), {GRACE_S:.0f} s to write its records", flush=True)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            return proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return proc.wait()


def consolidate(out: Path, planned: list[Planned], devices: tuple[str, ...]) -> list[Planned]:
    """Write results/results.jsonl and its manifest from every invocation; return the unfinished items."""
    from conformance.results import ManifestItem, RunManifest, write_manifest

    results = out / "results"
    best = latest(results)
    lines = [best[i.key][0] for i in planned if i.key in best]
    (results / "results.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    behaviors = {i.key: str(best[i.key][1].get("behavior") or "") or None for i in planned if i.key in best}
    started = sorted(json.loads(m.read_text(encoding="utf-8"))["started"]
                     for m in results.glob("run*-*.manifest.json"))
    manifest = RunManifest(
        results="results.jsonl", started=started[0] if started else _now(), finished=_now(), exit_status=None,
        narrowed=True, selection={"--devices": ",".join(devices), "by": "scripts/gpu_run.py"},
        items=tuple(ManifestItem(case_id=i.case_id, variant=i.variant, behavior=behaviors.get(i.key),
                                 device=i.variant.split("-", 1)[0]) for i in planned))
    write_manifest(results / "results.jsonl", manifest)
    unfinished = [i for i in planned if i.key not in best or not finished(best[i.key][1])]
    (out / "unfinished.txt").write_text("".join(i.nodeid + "\n" for i in unfinished), encoding="utf-8")
    return unfinished


PREFLIGHT = """
import json, sys
from conformance.pytest_plugin.guard import set_memory_limit
why = set_memory_limit(float(sys.argv[1]))
if why:
    raise SystemExit(why)
import torch
from conformance.run.fingerprint import build_fingerprint, device_fingerprint
devices = sys.argv[2].split(",")
for dev in devices:
    x = torch.arange(8.0, device=dev)
    y = torch.compile(lambda t: t.sin() + 1, backend="inductor")(x)  # the device's compiler too (triton)
    torch.testing.assert_close(y, x.sin() + 1)
print(json.dumps({**build_fingerprint(), "devices": [device_fingerprint(d) for d in devices]}))
"""


def preflight(devices: tuple[str, ...], workers: int, extra: list[str], env: dict[str, str]) -> list[str] | None:
    """Check that a worker as the run makes it (its memory cap included) can use the devices and their
    compiler; returns run arguments to add, or None where the devices cannot be used at all."""
    from conformance.pytest_plugin.guard import default_memory_limit

    given = next((a.split("=", 1)[1] if "=" in a else extra[k + 1] for k, a in enumerate(extra)
                  if a.startswith("--memory-limit") and ("=" in a or k + 1 < len(extra))), None)
    cap = float(given) if given is not None else default_memory_limit(workers)

    def attempt(gib: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", PREFLIGHT, str(gib), ",".join(devices)],  # noqa: S603
                              capture_output=True, text=True, env=env, check=False, timeout=600)

    first = attempt(cap)
    if first.returncode == 0:
        print(f"gpu_run: preflight ({cap} GiB memory cap per worker): {first.stdout.strip()}", flush=True)
        return []
    print(f"gpu_run: preflight failed with the memory cap of {cap} GiB per worker:\n{first.stderr.strip()[-3000:]}",
          flush=True)
    if cap > 0 and given is None:
        second = attempt(0.0)
        if second.returncode == 0:
            print("gpu_run: without the cap it works: the run goes on with --memory-limit 0 (no cap per worker); "
                  f"{second.stdout.strip()}", flush=True)
            return ["--memory-limit", "0"]
        print(f"gpu_run: without the cap too:\n{second.stderr.strip()[-3000:]}", flush=True)
    return None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def run_phases(planned: list[Planned], results: Path, invocation: int, args: argparse.Namespace, *,
               devices: tuple[str, ...], extra: list[str], env: dict[str, str], start: float) -> None:
    """Each phase's items still without a result, in one `torch-conformance run`, inside the deadline."""
    best = latest(results)
    done = {k for k, (_, rec) in best.items() if finished(rec)}
    print(f"gpu_run: invocation {invocation}: {len(planned)} items on {','.join(devices)}, "
          f"{len(done & {i.key for i in planned})} already have a result; {args.workers} workers, deadline "
          f"{args.deadline:.0f} s", flush=True)
    for phase in PHASES:
        pending = [i for i in planned if i.phase == phase and i.key not in done]
        if not pending:
            continue
        left = args.deadline - (time.monotonic() - start) - REPORT_RESERVE_S - GRACE_S
        if left < MIN_PHASE_S:
            print(f"gpu_run: phase {phase}: {len(pending)} items left for the next invocation (no time)", flush=True)
            continue
        path = results / f"run{invocation}-{phase}.jsonl"
        cmd = [sys.executable, "-m", "conformance", "run", "-q", "-n", str(args.workers), "--devices",
               ",".join(devices), "--cases", str(args.cases), "--results", str(path), *extra,
               *(i.nodeid for i in pending)]
        print(f"gpu_run: phase {phase}: {len(pending)} items, {left:.0f} s", flush=True)
        t0 = time.monotonic()
        code = run_phase(cmd, left, env)
        best = latest(results)
        done = {k for k, (_, rec) in best.items() if finished(rec)}
        left_over = sum(1 for i in pending if i.key not in done)
        print(f"gpu_run: phase {phase}: exit {code} after {time.monotonic() - t0:.0f} s, {left_over} of "
              f"{len(pending)} items without a result", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter,
                                epilog="Arguments after -- go to every `torch-conformance run` unchanged.")
    p.add_argument("out", type=Path, help="output folder (results/, unfinished.txt, report/); reused to resume")
    p.add_argument("--devices", default="cuda", help="device types to run (default cuda)")
    p.add_argument("--deadline", type=float, default=480.0, help="seconds for the whole invocation (default 480)")
    p.add_argument("-n", dest="workers", type=int, default=max(1, (os.cpu_count() or 2) - 2),
                   help="worker processes per phase (default: the cores less two)")
    p.add_argument("--cases", type=Path, default=Path("cases"), help="the cases folder (default cases)")
    p.add_argument("-k", dest="keyword", default="", metavar="EXPR", help="only the items this -k expression "
                   "selects (as `torch-conformance run -k`)")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    start = time.monotonic()
    if not (args.deadline > 0 and args.deadline < float("inf")):
        p.error(f"--deadline {args.deadline}: give a positive number of seconds")
    if args.workers < 1:
        p.error(f"-n {args.workers}: give at least 1 worker")
    extra = argv[cut + 1:]
    devices = tuple(d.strip() for d in args.devices.split(",") if d.strip())
    out: Path = args.out
    results = out / "results"
    results.mkdir(parents=True, exist_ok=True)
    planned = plan(args.cases, devices, args.keyword)
    if not planned:
        print(f"gpu_run: no item of {args.cases} runs on {','.join(devices)}", file=sys.stderr)
        return 2
    invocation = 1 + max((int(m.stem.split("-")[0][3:]) for m in results.glob("run*-*.jsonl")
                          if m.stem.split("-")[0][3:].isdigit()), default=0)
    env = dict(os.environ)
    # every worker compiling with inductor would otherwise start a pool of compile processes per core
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    added = preflight(devices, args.workers, extra, env)
    if added is None:
        print(f"gpu_run: {','.join(devices)} cannot be used here; nothing was run", file=sys.stderr)
        return 2
    extra += added
    run_phases(planned, results, invocation, args, devices=devices, extra=extra, env=env, start=start)
    unfinished = consolidate(out, planned, devices)
    best = latest(results)
    left = {i.key for i in unfinished}
    statuses = Counter(str(best[i.key][1].get("status")) for i in planned if i.key not in left)
    print("gpu_run: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) +
          f"; {len(unfinished)} unfinished (listed in {out / 'unfinished.txt'})", flush=True)
    report = subprocess.run([sys.executable, "-m", "conformance", "report", str(results / "results.jsonl"),  # noqa: S603
                             "-o", str(out / "report"), "--exit-zero"], check=False)
    if report.returncode != 0:
        print(f"gpu_run: the report failed (exit {report.returncode}); the results are in {results}", file=sys.stderr)
    if unfinished:
        return EXIT_UNFINISHED
    return 1 if any(statuses[s] for s in ("fail", "error", "xpass")) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
