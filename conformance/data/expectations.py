"""Known failures: matching reviewed expectations against the build an item runs on."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from packaging.specifiers import SpecifierSet
from pydantic import BaseModel, ConfigDict, Field

from conformance.data.devices import device_type
from conformance.data.loader import load_model
from conformance.schema import BuildCondition, KnownFailure, KnownFailureKind
from conformance.versions import torch_release


@dataclass(frozen=True)
class BuildFacts:
    """What a known-failure condition is matched against, for one item."""

    torch_version: str
    device: str
    backend: str
    mode: str


def condition_matches(when: BuildCondition, facts: BuildFacts) -> bool:
    if when.torch is not None:
        release = torch_release(facts.torch_version)
        if release is None or not SpecifierSet(when.torch).contains(release, prereleases=True):
            return False
    if when.device is not None and device_type(facts.device) not in {device_type(d) for d in when.device}:
        return False
    if when.backend is not None and facts.backend not in when.backend:
        return False
    return when.mode is None or facts.mode in when.mode


class ExpectationEntry(KnownFailure):
    """A known failure kept outside the case files: `case` is an id or a glob over ids."""

    case: str = Field(min_length=1, description="Case id, or a glob such as 'subclass_wrapper/*'.")
    kind: KnownFailureKind = Field("bug", description="As in a case file; a fork's file may leave it out (bug).")
    evidence: str = Field("not given", min_length=1, description="As in a case file; optional here.")


class ExpectationsFile(BaseModel):
    """A fork's or device vendor's own reviewed expectations (`--expectations FILE`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    version: Literal[1] = 1
    entries: tuple[ExpectationEntry, ...] = ()


@dataclass(frozen=True)
class Expectation:
    entry: ExpectationEntry
    source: str  # path:line of the entry, the key for stale-entry reports

    def applies_to(self, case_id: str) -> bool:
        return fnmatch.fnmatchcase(case_id, self.entry.case)


def load_expectations(paths: Sequence[Path]) -> list[Expectation]:
    """Every entry of the given files; raise CaseLoadError (path:line: field: message)."""

    out: list[Expectation] = []
    for path in paths:
        model, lines = load_model(path, ExpectationsFile, "an expectations file")
        for i, entry in enumerate(model.entries):
            out.append(Expectation(entry, f"{path}:{lines.get(('entries', i), 1)}"))
    return out


def external_lookup(expectations: Sequence[Expectation]) -> Callable[[str], tuple[tuple[KnownFailure, str], ...]]:
    def lookup(case_id: str) -> tuple[tuple[KnownFailure, str], ...]:
        return tuple((e.entry, e.source) for e in expectations if e.applies_to(case_id))

    return lookup


def stale(expectations: Sequence[Expectation], used_sources: set[str]) -> list[Expectation]:
    """Entries that matched no item of the run: they have gone stale (or name a typo)."""
    return [e for e in expectations if e.source not in used_sources]
