"""compat.json as a typed document: what `torch-conformance report` writes and `report`/`report diff`
read back, declared once; its JSON Schema (schemas/compat.schema.json) is generated from it."""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from conformance.bench.document import RatioDoc
from conformance.data.parity import ParityRowDoc
from conformance.results import ProbeStatus, ResultRecord, RunManifest, Status
from conformance.schema.known import KnownFailureKind

CompatSchema = Literal["torch-conformance.compat/1"]
COMPAT_SCHEMA: Final[str] = get_args(CompatSchema)[0]
CellVerdict = Literal["pass", "fail", "xpass", "empty", "unavailable", "not-selected"]  # report.model.Cell
# what a cell holds, worst first (report.model.SHADES)
CellShade = Literal["fail", "empty", "new", "xpass", "bug", "difference", "pass", "unavailable", "not-selected"]



class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class InputDoc(_Doc):
    path: str
    records: int


class SummaryDoc(_Doc):
    records: int
    by_status: dict[Status, int]
    failures: int = Field(description="Items that fail or error (untriaged).")
    cells_without_cases: int = Field(description="Matrix cells where no case ran and nothing says why.")
    cells_not_run_for_a_reason: int
    runs_cut_short: int
    exit_code: Literal[0, 1]


class KindCountDoc(_Doc):
    items: int
    causes: int


class VerdictDoc(_Doc):
    """One build on one device: the report's verdict line."""

    build: str
    label: str
    device: str
    items: int = Field(description="Items that ran (skips aside).")
    passed: int
    known: int
    known_causes: int
    known_by_kind: dict[KnownFailureKind, KindCountDoc]
    links: list[str]
    untriaged: int
    previous: str | None = Field(description="The previous release on this device, when given.")
    new: int = Field(description="Items failing here that did not fail on the previous release.")
    fixed: int


class MechanismsDoc(_Doc):
    seen: dict[str, int] = Field(description="Generated artifacts by name, with the records that saw each.")
    probes: dict[str, dict[ProbeStatus, int]]
    generated: list[str]


class BuildDoc(_Doc):
    id: str
    label: str
    torch_version: str
    torch_git: str | None
    cuda: str | None
    hip: str | None
    python: list[str]
    platform: list[str]
    harness_version: list[str]
    corpus: list[str] = Field(default_factory=list, description="Each corpus the build's records ran, in words "
                              "(results.CorpusRef.describe); empty in a report of records that name none.")
    dates: list[str]
    device_names: dict[str, str]
    records: int
    devices: list[str]
    mechanisms: MechanismsDoc


class CellDoc(_Doc):
    behavior: str
    build: str
    device: str
    counts: dict[Status, int]
    ran: int
    verdict: CellVerdict
    shade: CellShade | None = Field(None, description="What the cell holds, worst first (a report written before "
                                    "cells were shaded has none).")
    new: int = Field(0, ge=0, description="Items failing here that passed (or differed only by design or benignly) "
                     "on the release before.")
    kinds: dict[KnownFailureKind, int] = Field(default_factory=dict,
                                               description="Known-failing items by the kind they count as.")


class ProblemDoc(_Doc):
    kind: str
    build: str
    message: str


class RunDoc(RunManifest):
    """A run's manifest, with the build that ran it and the results file it came with."""

    build: str
    source: str


class ItemRefDoc(_Doc):
    build: str
    case_id: str
    variant: str
    status: Status


class FailureDoc(ItemRefDoc):
    reproducer_link: str | None


class RetireDoc(ItemRefDoc):
    expectation: str
    link: str


class RecompiledDoc(ItemRefDoc):
    recompiles: str


class StaleDoc(_Doc):
    source: str
    case: str
    reason: str
    link: str


class DroppedDoc(_Doc):
    build: str
    case_id: str
    variant: str
    dropped: str
    kept: str


class ChangedDoc(_Doc):
    case_id: str
    variant: str
    statuses: list[str] = Field(description="Per build of `history.builds`, in order ('' where not run).")
    first_failing: str | None
    first_fixed: str | None
    regressions: list[str]


class HistoryDoc(_Doc):
    builds: list[str]
    mechanisms: dict[str, list[str]]
    changed: list[ChangedDoc]


class NamedRatioDoc(RatioDoc):
    name: str


class BetweenDoc(_Doc):
    """One row's cost on two builds: the ratio, the machine's drift and the corrected ratio."""

    ratio: RatioDoc | None
    drift: RatioDoc | None = None
    corrected: RatioDoc | None = None
    distinguishable: bool | None = None


class LaterDoc(BetweenDoc):
    release: str


class OwnDoc(_Doc):
    """A row's own cost on one build, or why there is none."""

    median_us: float | None = None
    q1_us: float | None = None
    q3_us: float | None = None
    status: str | None = None


class SpeedRowDoc(_Doc):
    id: str
    label: str
    published: dict[str, Any]
    own: list[OwnDoc]
    landed: str | None
    before: str | None
    at_landing: BetweenDoc | None
    before_note: str
    later: list[LaterDoc]
    within_build: NamedRatioDoc | None
    within_newest: NamedRatioDoc | None


class SpeedTableDoc(_Doc):
    id: str
    title: str
    form: str
    rows: list[SpeedRowDoc]


class PlotDoc(_Doc):
    release: str
    _svg: str = PrivateAttr("")  # the drawing is index.html's, never compat.json's

    @property
    def svg(self) -> str:
        return self._svg

    @classmethod
    def drawn(cls, release: str, svg: str) -> PlotDoc:
        plot = cls(release=release)
        plot._svg = svg
        return plot


class SpeedDoc(_Doc):
    releases: list[str]
    tables: list[SpeedTableDoc]
    plot: PlotDoc


class CauseDoc(_Doc):
    key: str
    words: str
    items: int
    builds: dict[str, dict[Status, int]]
    cases: list[str]
    links: list[str]
    kinds: list[KnownFailureKind | Literal["untriaged"]]


class DraftDoc(_Doc):
    title: str
    path: str


class CompatRecord(ResultRecord):
    """A result record as the report keeps it: with its build, where it was read from, and the link to
    its reproducer in the report folder."""

    build: str
    source: str
    reproducer_link: str | None


class CompatDoc(_Doc):
    """The merged report (compat.json)."""

    schema_: CompatSchema = Field(alias="schema")
    generator: str
    inputs: list[InputDoc]
    expectation_files: list[str]
    summary: SummaryDoc
    verdicts: list[VerdictDoc]
    behaviors: list[str]
    builds: list[BuildDoc]
    matrix: list[CellDoc]
    problems: list[ProblemDoc]
    runs: list[RunDoc]
    failures: list[FailureDoc]
    retire: list[RetireDoc] = Field(description="Known failures that passed (xpass): retire their expectation.")
    stale_expectations: list[StaleDoc]
    upstream_parity: list[ParityRowDoc]
    history: HistoryDoc
    speed: SpeedDoc | None
    causes: list[CauseDoc]
    issue_drafts: list[DraftDoc]
    recompiled: list[RecompiledDoc]
    compiled_nothing: list[ItemRefDoc]
    dropped_duplicates: list[DroppedDoc]
    records: list[CompatRecord]


def compat_json_schema() -> dict[str, Any]:
    """The JSON Schema of compat.json (schemas/compat.schema.json)."""
    schema = CompatDoc.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"torch-conformance report ({COMPAT_SCHEMA})"
    return schema
