"""findings.json as `explore` writes it and `explore --merge` reads it, declared once and checked
strictly: a file made by hand or damaged is refused with the field named, before any merging."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

MAX_BYTES = 256 * 2**20  # a real one is a few MiB at most
SHOWN = 10  # errors listed per file

# bounds that keep the merged sums and rates finite: a count a float holds exactly, centuries of seconds
Count = Annotated[int, Field(ge=0, le=2**53)]
Seconds = Annotated[float, Field(ge=0, le=1e10)]


def _shard(text: str) -> str:
    index, count = shard_numbers(text)
    if not 1 <= index <= count:
        raise ValueError("I must be between 1 and N")
    return text


Shard = Annotated[str, Field(pattern=r"^[1-9][0-9]{0,8}/[1-9][0-9]{0,8}$"), AfterValidator(_shard)]


def shard_numbers(text: str) -> tuple[int, int]:
    index, count = text.split("/")
    return int(index), int(count)


class _Strict(BaseModel):
    # keys of other versions (harness_share) are ignored, and never written back: merging uses what was checked
    model_config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False)


class FindingEntry(_Strict):
    signature: str
    statements: Count
    found_after_s: Seconds
    program: str
    variant: str
    mismatches: list[str]
    reason: str
    programs_before: Count
    reproduces: bool | None
    case: str
    reproducer: str
    case_yaml: str
    kinds: list[str] = []
    real_code: list[str] | None = Field(None, description="The calls of its statements that torch's own "
                                        "optimizers (torch/optim) or modules (torch/nn/modules) make too: the cause is "
                                        "in reach of real training code where this is not empty (None: not told).")
    where: str = ""
    shrunk: bool = True
    known_by: list[str] = []
    seen: Annotated[int, Field(ge=1, le=2**53)] = 1  # programs that showed this cause
    examples: list[str] = []  # a few of them as first seen, each with other ingredients
    releases: dict[str, str] = {}  # build -> fails / passes / what else (explore --builds)
    history: bool = False  # passes on every newer build it was rerun on: fixed since


class CrashEntry(_Strict):
    signature: str
    program: str
    case: str
    found_after_s: Seconds
    reproduces: bool
    rerun: str
    count: Annotated[int, Field(ge=1, le=2**53)]


class FindingsFile(_Strict):
    """What merging reads; the rates (valid_share, programs_per_hour, compile_share, torch_share) are computed again."""

    torch: str
    backends: list[str]
    modes: list[str]
    seed: Count
    seconds: Seconds
    programs: Count
    findings: list[FindingEntry]
    shard: Shard = "1/1"
    parts: Annotated[int, Field(ge=1, le=2**20)] = 1
    eager_rejected: Count = 0
    seconds_in_runs: Seconds = 0.0
    seconds_compiling: Seconds = 0.0
    seconds_in_torch: Seconds = 0.0
    interrupted: bool = False
    flaky: list[str] = []
    worker_errors: list[str] = []
    crashes: list[CrashEntry] = []
    known_from: str = ""

    def overlaps(self, other: FindingsFile) -> bool:
        """Both explored some of the same rounds: one exploration (build, seed, backends, modes) whose
        shards I/N and J/M share rounds (round r is shard r mod N + 1)."""
        if (self.torch, self.seed, self.backends, self.modes) != (other.torch, other.seed, other.backends, other.modes):
            return False
        (i, n), (j, m) = shard_numbers(self.shard), shard_numbers(other.shard)
        return (i - j) % math.gcd(n, m) == 0


def read_findings(path: Path) -> tuple[FindingsFile | None, list[str]]:
    """The file checked, or None and its problems as `field: message`."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return None, [f"{size} bytes; more than a findings.json holds ({MAX_BYTES})"]
        data = path.read_bytes()
    except OSError as exc:
        return None, [f"cannot be read ({exc.strerror or exc})"]
    try:
        doc = FindingsFile.model_validate_json(data)
    except ValidationError as exc:
        errors = [f"{_field(e['loc'])}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors()]
        more = [f"... and {len(errors) - SHOWN} more"] if len(errors) > SHOWN else []
        return None, errors[:SHOWN] + more
    if doc.eager_rejected > doc.programs:
        return None, [f"eager_rejected: {doc.eager_rejected}, more than the {doc.programs} programs"]
    return doc, []


def _field(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "document"


def findings_json_schema() -> dict[str, Any]:
    """The JSON Schema of findings.json as merging reads it (schemas/findings.schema.json)."""
    schema = FindingsFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "torch-conformance explorer findings (findings.json)"
    return schema
