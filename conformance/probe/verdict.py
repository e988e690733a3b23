"""One behaviour's probe verdict, and how a build's source is compared with the reference's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from conformance.behaviors import artifact
from conformance.capture import CaptureResult
from conformance.results import ProbeResult
from reference_impl.structural import diff_lines, find_function
from reference_impl.terms import StructuralError


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


