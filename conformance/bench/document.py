"""bench.json as a typed document: what `torch-conformance bench` writes and `bench compare` and the
report read, declared once; its JSON Schema (schemas/bench.schema.json) is generated from it."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from conformance.behaviors import IDS

SCHEMA_ID: Final = "torch-conformance-bench/1"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class StatsDoc(_Doc):
    """A timing's summary over its repeats (microseconds per call) and the samples it came from."""

    median_us: float
    q1_us: float
    q3_us: float
    min_us: float
    max_us: float
    noise: float
    repeats: int
    calls_per_repeat: int
    samples_us: list[float]


class RatioDoc(_Doc):
    value: float
    ci95: list[float] = Field(min_length=2, max_length=2)
    distinguishable: bool


class PublishedDoc(_Doc):
    """What the upstream change description published for the row."""

    before_us: float | None = None
    after_us: float | None = None
    ratio: float | None = None
    source: str = ""
    note: str = ""


class BuildDoc(_Doc):
    """The build's own generated wrapper for the row: timed, absent, or there but unusable."""

    status: Literal["measured", "absent", "unusable"]
    artifact: str | None = None
    stubbed: list[str] | None = None
    reason: str | None = None
    source: str | None = None
    artifacts_seen: list[str] | None = None


class RowDoc(_Doc):
    id: str
    label: str
    forms: dict[str, StatsDoc | None]
    ratios: dict[str, RatioDoc]
    headline: str | None
    published: PublishedDoc
    build: BuildDoc | None = None
    notes: list[str] = []
    verdict: str | None = None


class TableDoc(_Doc):
    # the registry's tuple of ids, which mypy does not take as a Literal's arguments
    id: Literal[IDS] = Field(description="The behaviour the table times (conformance.bench.suites.TABLES).")  # type: ignore[valid-type]
    title: str
    what: str = ""
    unit: Literal["us/call"]
    form_labels: dict[str, str]
    rows: list[RowDoc]


class BenchDocument(_Doc):
    """One `torch-conformance bench` run on one build."""

    schema_: Literal["torch-conformance-bench/1"] = Field(SCHEMA_ID, alias="schema")
    fingerprint: dict[str, Any]
    settings: dict[str, Any]
    started: str | None = None
    elapsed_s: float | None = None
    tables: list[TableDoc]


class CompareRowDoc(_Doc):
    """One row of `bench compare`: the build's own cost on both runs, before/after, the machine's drift
    and the corrected ratio (FILE.json of `bench compare --out FILE`)."""

    table: str
    row: str
    label: str
    form: str
    before: StatsDoc | None
    after: StatsDoc | None
    ratio: RatioDoc | None
    drift: RatioDoc | None
    corrected: RatioDoc | None
    published: PublishedDoc


def bench_json_schema() -> dict[str, Any]:
    """The JSON Schema of bench.json (schemas/bench.schema.json, and beside every bench.json)."""
    schema = BenchDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"torch-conformance bench results ({SCHEMA_ID})"
    return schema
