"""Known failures: matching reviewed expectations against the build an item runs on."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.devices import device_type
from conformance.schema import BuildCondition, KnownFailure


@dataclass(frozen=True)
class BuildFacts:
    """What a known-failure condition is matched against, for one item."""

    torch_version: str
    device: str
    backend: str
    mode: str


def torch_release(version: str) -> Version | None:
    """The release a version string belongs to: '2.16.0.dev20261120+cpu' counts as 2.16.0."""
    try:
        return Version(Version(version).base_version)
    except InvalidVersion:
        return None


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


def matching(known: tuple[KnownFailure, ...], facts: BuildFacts) -> KnownFailure | None:
    return next((k for k in known if condition_matches(k.when, facts)), None)
