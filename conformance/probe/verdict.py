"""One behaviour's probe verdict, and how a build's source is compared with the reference's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from conformance.behaviors import artifact
from conformance.capture import CaptureResult
from reference_impl.structural import StructuralError, diff_lines, find_function

Status = Literal["conforms", "diverges", "absent", "unknown-form"]


@dataclass(frozen=True)
class ProbeResult:
    """One behaviour's verdict, with both sources and a structural diff when it diverges."""

    behaviour: str
    status: Status
    artifacts: tuple[str, ...] = ()
    diff: str = ""
    reference_source: str = ""
    build_source: str = ""
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "behaviour": self.behaviour,
            "status": self.status,
            "artifacts": list(self.artifacts),
            "diff": self.diff,
            "reference_source": self.reference_source,
            "build_source": self.build_source,
            "note": self.note,
        }


@dataclass(frozen=True)
class ProbeReport:
    """All five verdicts plus what the build was seen to generate."""

    results: tuple[ProbeResult, ...]
    seen: tuple[str, ...]
    forms: tuple[str, ...]
    unrecognised: tuple[str, ...] = ()

    def __getitem__(self, behaviour: str) -> ProbeResult:
        for r in self.results:
            if r.behaviour == behaviour:
                return r
        raise KeyError(behaviour)

    def statuses(self) -> dict[str, Status]:
        return {r.behaviour: r.status for r in self.results}

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [r.to_json() for r in self.results],
            "seen": list(self.seen),
            "forms": list(self.forms),
            "unrecognised": list(self.unrecognised),
        }


def sources(capture: CaptureResult, name: str) -> list[str]:
    """The captured sources of the declared artifact `name` (by artifact name, else by the name
    of the function they define)."""
    declared = artifact(name)
    found = capture.sources(declared.name)
    if found:
        return found
    out = []
    for art in capture.artifacts:
        try:
            if find_function(art.source).name == declared.function:
                out.append(art.source)
        except StructuralError:
            continue
    return out


def compare(
    behaviour: str,
    artifacts: tuple[str, ...],
    reference_source: str,
    build_sources: Sequence[str],
    reduce: Callable[[str], Any],
    *,
    note: str = "",
) -> ProbeResult:
    expected = reduce(reference_source)
    for source in dict.fromkeys(build_sources):
        try:
            actual = reduce(source)
        except StructuralError as exc:
            return ProbeResult(
                behaviour,
                "diverges",
                artifacts,
                f"unreadable source: {exc}",
                reference_source,
                source,
                note,
            )
        if actual != expected:
            diff = diff_lines(expected.describe(), actual.describe())
            return ProbeResult(
                behaviour, "diverges", artifacts, diff, reference_source, source, note
            )
    return ProbeResult(
        behaviour, "conforms", artifacts, "", reference_source, build_sources[0], note
    )


