"""What an exploration keeps in each worker's folder (shards/<worker>/), read by the supervisor and
written by the worker: the files' names, how many programs a finding keeps, and the error of a file
of the exploration that could not be written."""

from __future__ import annotations

from pathlib import Path

STATE = "state.json"  # the worker's counts and findings so far, rewritten after each finding and round
RUNNING = "running.yaml"  # the program being run, as a case: what a worker that died was running
EXAMPLES = 3  # programs a finding keeps as first seen, each with other ingredients than those kept before


class WriteFailed(Exception):
    """A file of the report that could not be written (a full disk, no permission)."""

    def __init__(self, path: Path, exc: OSError) -> None:
        super().__init__(f"cannot write {path}: {exc.strerror or exc}")
        self.path = path
