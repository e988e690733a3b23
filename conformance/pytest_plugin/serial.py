"""`run -n 0`: the items run in one child process, and the CLI owns the run's outcome, whatever that
process does. A program may end it (`os._exit(5)`, a segfault) or a signal may; its exit status then
says nothing about the run. Where the child's session did not finish, the CLI writes the records it
could not: the item in flight gets an `error` record saying how the process ended (with the fault
handler's dump from the session's journal), every other selected item without a record a `not run`
one, and the manifest is marked finished with exit status 1. Where the session finished, its own
status (the manifest's) stands.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import signal
from pathlib import Path

from conformance.pytest_plugin.accounting import NOT_RUN, ItemRef, _now, with_corpus, with_reproducer
from conformance.pytest_plugin.guard import ITEMS_FILE, Journal
from conformance.results import (
    ResultRecord,
    ResultsWriteError,
    ResultsWriter,
    RunManifest,
    manifest_path,
    write_manifest,
)


def end_with_parent(sig: int) -> None:
    """In a child process: have the kernel send it `sig` when its parent dies, also by SIGKILL (Linux;
    elsewhere nothing), so that no child runs on, orphaned, after the command that started it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, sig)  # PR_SET_PDEATHSIG


SERIAL_WORKER = "main"  # the serial session's journal name (conformance/pytest_plugin/plugin.py)


def how_it_ended(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"with exit status {code}"


def settle(results: Path, journal_dir: Path, code: int, root: Path) -> int | None:
    """After the serial child ended with `code`: None where its session finished (or never selected
    anything); else the run's status, 1, once every selected item has a record."""
    try:
        manifest = RunManifest.model_validate_json(manifest_path(results).read_text(encoding="utf-8"))
        items = [ItemRef(**d) for d in json.loads((journal_dir / ITEMS_FILE).read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError):
        return None  # the session selected nothing, or never began: `_accounted` says which
    if manifest.finished is not None:
        return None
    try:
        flight = json.loads(Journal(journal_dir, SERIAL_WORKER).item_path.read_text(encoding="utf-8"))["nodeid"]
    except (OSError, ValueError, KeyError, TypeError):
        flight = None
    ended = how_it_ended(code)
    recorded = {(r.case_id, r.variant) for r in _records(results)}
    current = next((r for r in items if r.nodeid == flight), None)
    writer = ResultsWriter(results)
    try:
        for ref in items:
            if (ref.case_id, ref.variant) in recorded:
                continue
            if ref is current:
                entry = Journal.read(journal_dir, SERIAL_WORKER, ref.nodeid)
                dump = entry.dump.strip() if entry is not None else ""
                reason = (f"the run's process ended {ended} while running this item: os._exit(), a native exit or "
                          "abort, or a fatal signal" + (f"\n{dump}" if dump else ""))
            else:
                during = f" during {current.case_id} [{current.variant}]" if current is not None else ""
                reason = f"{NOT_RUN} (its process ended {ended}{during}) before this item finished"
            record = ref.record("error", reason)
            if ref is current:
                record = with_reproducer(record, ref, root, results, cwd=Path.cwd(), rootpath=Path.cwd())
            writer.write_line(with_corpus(record.to_json_line(), root))
    except ResultsWriteError:
        pass  # a full disk: the records already written stay whole, and the run is not green either way
    write_manifest(results, manifest.model_copy(update={"finished": _now(), "exit_status": 1}))
    return 1


def _records(results: Path) -> list[ResultRecord]:
    out: list[ResultRecord] = []
    try:
        lines = results.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            out.append(ResultRecord.model_validate_json(line))
        except ValueError:
            continue  # a line the session could not finish: it is no record
    return out
