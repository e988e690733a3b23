"""What keeps one item from taking the run down with it.

Note [Every item accounted for]
A case's program is arbitrary Python: it may raise SystemExit or KeyboardInterrupt, end its
process (`os._exit`, a segfault, the kernel's OOM killer), allocate without bound, or hang
inside native code where no signal reaches it. The run must still give every collected item
exactly one record. Four layers do that:

* The runner treats SystemExit and a KeyboardInterrupt that no signal delivered as the
  program's own exceptions (`program_exception`); a real Ctrl-C still stops the run.
* Items run in worker processes (`torch-conformance run` uses one worker when `-n` is not
  given): a process that dies costs only its current item, and xdist starts another worker.
* Each worker keeps a journal (`Journal`): the item in flight, the fault handler's dump of a
  fatal signal, and the reason a watchdog ended it. The controller turns a dead worker's
  journal into that item's `error` record.
* `--timeout` first interrupts Python code with a signal (pytest-timeout); an item still
  running `grace(timeout)` seconds later (native code, or signals blocked) is ended by the
  watchdog (`Watchdog`), which writes its reason to the journal before the process exits.
  `--memory-limit` caps each worker's data segment (RLIMIT_DATA), so an allocation without
  bound fails inside the program with torch's or Python's own out-of-memory error.

At the end, the controller writes an `error` record for every collected item that still has
none (an interrupted run), so the number of records always equals the number of items.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

EXIT_WATCHDOG = 70  # the status a worker ended by the watchdog exits with
_GIB = 1 << 30


def grace(timeout: float) -> float:
    """Seconds past `timeout` before the watchdog ends an item the signal did not stop."""
    return min(60.0, max(5.0, timeout / 4))


# ----------------------------------------------------------------------------- interrupts


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class _InterruptTracker:
    """Remembers whether a stop was really delivered, so that a KeyboardInterrupt the program
    raised itself can be told apart from a user's Ctrl-C. SIGTERM and SIGHUP (a CI runner's
    cancel, a closed terminal) stop the run as Ctrl-C does: every item gets its record."""

    def __init__(self) -> None:
        self.delivered = 0
        self.installed = False

    def install(self) -> None:
        if self.installed or threading.current_thread() is not threading.main_thread():
            return
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)

            def handler(signum: int, frame: FrameType | None, previous: Any = previous) -> Any:
                self.delivered += 1
                if signum == signal.SIGINT and callable(previous):
                    return previous(signum, frame)
                raise KeyboardInterrupt

            try:
                signal.signal(signum, handler)
            except ValueError:  # not the main thread of the main interpreter
                return
        self.installed = True


INTERRUPTS = _InterruptTracker()


def program_exception(exc: BaseException) -> bool:
    """Whether `exc`, raised while a program ran, is the program's own doing (to be recorded
    like any exception) rather than the harness being stopped (to be re-raised)."""
    if isinstance(exc, Exception | SystemExit):
        return True
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTS.delivered == 0
    return False


# ----------------------------------------------------------------------------- memory


def total_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_memory_limit(workers: int) -> float:
    """GiB per worker: 80 % of the machine's memory shared among the workers (0 = no limit)."""
    total = total_memory()
    return 0.0 if total is None else round(total * 0.8 / max(workers, 1) / _GIB, 1)


def set_memory_limit(gib: float) -> str | None:
    """Cap this process's data segment; returns why it could not, or None."""
    if gib <= 0:
        return None
    limit = int(gib * _GIB)
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY and limit > hard:
            limit = hard
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ValueError, OSError) as exc:
        return f"--memory-limit {gib}: cannot set RLIMIT_DATA ({exc})"
    return None


# ----------------------------------------------------------------------------- journal

# Set by `run -n 0` for the serial session it starts: the folder of that session's journal, where the
# session also lists the items it selected (ITEMS_FILE), so that the CLI can account for them if the
# session's process ends mid-run (conformance/pytest_plugin/serial.py).
SERIAL_JOURNAL_ENV = "TORCH_CONFORMANCE_SERIAL_JOURNAL"
ITEMS_FILE = "items.json"


@dataclass(frozen=True)
class JournalEntry:
    """What a dead worker left: the item it was running and why it ended, if known."""

    nodeid: str
    reason: str
    dump: str
    record: str = ""  # the item's whole record, when the worker could write it before ending

    def message(self) -> str:
        text = self.reason or (
            "the worker process ended while running this item without a Python exception: os._exit(), a "
            "native exit or abort, or a fatal signal (segfault, the OOM killer); xdist started another worker"
        )
        if self.dump.strip():
            lines = self.dump.strip().splitlines()
            text += "\n" + "\n".join(lines[:40]) + (f"\n… {len(lines) - 40} more lines" if len(lines) > 40 else "")
        return text


class Journal:
    """One worker's journal: `<dir>/<worker>.item.json` names the item in flight and, once a
    watchdog ended it, why; `<dir>/<worker>.dump` holds the fault handler's traceback dump."""

    def __init__(self, folder: Path, worker: str) -> None:
        self.folder = folder
        self.worker = worker
        self._dump: TextIO | None = None

    @property
    def item_path(self) -> Path:
        return self.folder / f"{self.worker}.item.json"

    @property
    def dump_path(self) -> Path:
        return self.folder / f"{self.worker}.dump"

    def open(self) -> None:
        """Route fatal-signal tracebacks (faulthandler) into this worker's dump file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._dump = self.dump_path.open("w", encoding="utf-8")  # held for the process's life
        faulthandler.enable(file=self._dump, all_threads=False)

    def close(self) -> None:
        if self._dump is not None:
            faulthandler.disable()
            self._dump.close()
            self._dump = None

    def start(self, nodeid: str) -> None:
        if self._dump is not None:
            self._dump.seek(0)
            self._dump.truncate()
            self._dump.flush()
        self._write({"nodeid": nodeid, "started": time.time(), "reason": ""})

    def end_with(self, nodeid: str, reason: str, record: str = "") -> None:
        self._write({"nodeid": nodeid, "started": time.time(), "reason": reason, "record": record})

    def finish(self) -> None:
        self.item_path.unlink(missing_ok=True)

    def _write(self, data: dict[str, Any]) -> None:
        tmp = self.item_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.item_path)

    @staticmethod
    def read(folder: Path, worker: str, nodeid: str) -> JournalEntry | None:
        """What worker `worker` left about `nodeid`, or None if its journal names another item."""
        journal = Journal(folder, worker)
        try:
            data = json.loads(journal.item_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("nodeid") != nodeid:
            return None
        try:
            dump = journal.dump_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            dump = ""
        return JournalEntry(nodeid, str(data.get("reason") or ""), dump, str(data.get("record") or ""))


# ----------------------------------------------------------------------------- watchdog


class Watchdog:
    """Ends the process when an item outlives its deadline (see Note [Every item accounted for]).

    `on_expiry` runs on the watchdog thread just before `os._exit`; it records the reason."""

    def __init__(self, on_expiry: Callable[[str], None]) -> None:
        self.on_expiry = on_expiry
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._deadline: float | None = None
        self._reason = ""
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, reason: str) -> None:
        with self._cond:
            self._deadline = time.monotonic() + seconds
            self._reason = reason
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="torch-conformance-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                reason = self._reason
                break
        try:
            self.on_expiry(reason)
        finally:
            os._exit(EXIT_WATCHDOG)
