"""Writing a failing item's reproducer(s) beside the results file, during the run (see the package's
docstring for the two forms)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from conformance.files import write_atomic
from conformance.reproducer import FOLDER, script_name, wanted
from conformance.reproducer.full import render_full
from conformance.reproducer.short import render_short
from conformance.results import ResultRecord

if TYPE_CHECKING:
    from conformance.data.loader import LoadedCase
    from conformance.data.variants import Variant


def shown_path(path: Path, cwd: Path) -> str:
    """How a record names the script: relative to where the run started if inside it."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def attach(record: ResultRecord, lc: LoadedCase, variant: Variant, results: Path, cwd: Path, *,
           full: bool = False) -> ResultRecord:
    """The record with `reproducer` set, after writing its script(s); unchanged if none is wanted.

    Writing must never cost the verdict: a failure to write is noted in the record's warnings.
    """
    if not wanted(record):
        return record
    folder = results.parent / FOLDER
    path = folder / script_name(record.case_id, record.variant)
    try:
        full_text = render_full(lc, variant, record)
        text = render_short(lc, variant, record) or full_text
        for target, body in ((path, text), *([(folder / script_name(record.case_id, record.variant, full=True),
                                                full_text)] if full else [])):
            compile(body, str(target), "exec")  # never write a script that cannot run
            write_atomic(target, body)
    except Exception as exc:  # the verdict stands without its reproducer
        note = f"reproducer not written: {type(exc).__name__}: {exc}"[:300]
        return record.model_copy(update={"warnings": (*record.warnings, note)})
    return record.model_copy(update={"reproducer": shown_path(path, cwd)})
