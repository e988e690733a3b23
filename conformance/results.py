"""Result records: one JSON object per (case, device, backend, mode), written as JSON Lines.

The results file is appended one flushed line per finished item under an exclusive lock, so
an interrupted or crashed run leaves every finished item's record readable; a torn last line
is skipped by the reader with a warning.
"""

from __future__ import annotations

import fcntl
import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RESULT_SCHEMA = "torch-conformance.result/1"
Status = Literal["pass", "fail", "xfail", "xpass", "skip", "error"]
STATUSES: tuple[str, ...] = ("pass", "fail", "xfail", "xpass", "skip", "error")


class KnownFailureRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    reason: str
    link: str
    source: str = Field(description="Where the expectation is declared: a case file or expectations file.")


class ResultRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: str = Field(RESULT_SCHEMA, alias="schema")
    case_id: str
    variant: str
    nodeid: str = ""
    behavior: str | None = None
    device: str | None = None
    backend: str | None = None
    mode: str | None = None
    status: Status
    reason: str = ""
    summary: str = ""
    upstream: tuple[str, ...] = ()
    mismatches: tuple[dict[str, str], ...] = ()
    known_failure: KnownFailureRef | None = None
    compile_counts: dict[str, int | None] = Field(default_factory=dict)
    probes: dict[str, Any] = Field(default_factory=dict)
    durations: dict[str, float] = Field(default_factory=dict)
    calls: int = 0
    warnings: tuple[str, ...] = Field((), description="Distinct warnings the build raised (first 10).")
    case_file: str = ""
    case_sha256: str = ""
    reproducer: str | None = None
    fingerprint: dict[str, Any] = Field(default_factory=dict)

    def to_json_line(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True) + "\n"

    @property
    def key(self) -> tuple[str, str]:
        return (self.case_id, self.variant)


class ResultsWriter:
    """Appends records to a JSONL file; safe across xdist workers and processes."""

    def __init__(self, path: Path, *, truncate: bool) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if truncate:
            path.write_text("")

    def write(self, record: ResultRecord) -> None:
        self.write_line(record.to_json_line())

    def write_line(self, text: str) -> None:
        line = text.encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def read_results(path: Path) -> Iterator[ResultRecord]:
    """Records of a results file; a torn or foreign line is skipped with a warning naming it."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                warnings.warn(f"{path}:{lineno}: unreadable record skipped (torn write?)", stacklevel=2)
                continue
            if not isinstance(data, dict) or data.get("schema") != RESULT_SCHEMA:
                got = data.get("schema") if isinstance(data, dict) else type(data).__name__
                warnings.warn(f"{path}:{lineno}: not a {RESULT_SCHEMA} record (schema {got!r})", stacklevel=2)
                continue
            yield ResultRecord.model_validate(data)
