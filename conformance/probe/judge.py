"""One behaviour's probe status, and how a build's source is compared with the reference's."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conformance.behaviors import UNPROBED_ARTIFACTS, artifact
from conformance.probe.capture import CaptureResult
from conformance.results import ProbeResult
from reference_impl.structural import defined_function, diff_lines, free_roles
from reference_impl.terms import GLOBAL_ROLES, StructuralError


def sources(capture: CaptureResult, name: str) -> list[str]:
    """The captured sources of the declared artifact `name` (by artifact name, else by the name
    of the function they define, among artifacts no other wrapper's name claims)."""
    declared = artifact(name)
    found = capture.sources(declared.name)
    if found:
        return found
    out = []
    for art in capture.artifacts:
        if art.name in UNPROBED_ARTIFACTS:
            continue
        try:
            if defined_function(art.source) == declared.function:
                out.append(art.source)
        except StructuralError:
            continue
    return out


def compare(
    behaviour: str,
    artifacts: tuple[str, ...],
    reference: str | Mapping[str, str],
    build_sources: Sequence[str],
    reduce: Callable[[str], Any],
    *,
    note: str = "",
) -> ProbeResult:
    """Each build source against the reference. `reference` is one source or, where builds
    follow different calling conventions, the reference's source under each (by name): a
    build conforms if it equals the reference under any of them. A build that equals none
    and relies on a helper the reference does not know (GLOBAL_ROLES) has changed its convention in a way the
    reference does not model (`unknown-form`); otherwise it diverges from the nearest."""
    conventions = {"": reference} if isinstance(reference, str) else dict(reference)
    expected = {name: reduce(src) for name, src in conventions.items()}
    known = frozenset(GLOBAL_ROLES.values()).union(*(free_roles(src) for src in conventions.values()))
    followed: list[str] = []
    for source in dict.fromkeys(build_sources):
        try:
            actual = reduce(source)
        except StructuralError as exc:
            first = next(iter(conventions.values()))
            return ProbeResult(behaviour, "diverges", artifacts, f"unreadable source: {exc}", first, source, note)
        same = [name for name, form in expected.items() if form == actual]
        if same:
            followed += same[:1]
            continue
        diffs = {name: diff_lines(form.describe(), actual.describe()) for name, form in expected.items()}
        nearest = min(diffs, key=lambda n: len(diffs[n].splitlines()))
        unknown = sorted(free_roles(source) - known)
        where = f" (nearest convention: {nearest})" if nearest else ""
        if unknown:
            why = f"the build relies on {', '.join(unknown)}, a helper the reference does not model{where}"
            return ProbeResult(behaviour, "unknown-form", artifacts, diffs[nearest], conventions[nearest], source,
                               _joined(note, why))
        return ProbeResult(behaviour, "diverges", artifacts, diffs[nearest], conventions[nearest], source,
                           _joined(note, where.strip(" ()")))
    chosen = followed[0] if followed else next(iter(conventions))
    label = f"convention: {chosen}" if len(conventions) > 1 and len(set(expected.values())) > 1 else ""
    return ProbeResult(behaviour, "conforms", artifacts, "", conventions[chosen], build_sources[0],
                       _joined(note, label))


def _joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
