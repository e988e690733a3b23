"""Torch version strings, read one way everywhere: in release order (the report's builds, the
bench's releases, a record's order) and as the release a known failure's `torch:` range matches.
A local tag (+cpu, +cu130: the wheel's variant) is no part of either; a nightly 2.16.0.devN comes
before 2.16.0 in order and counts as 2.16.0 in a range."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version


def version_key(version: str) -> tuple[int, Version | str]:
    """A torch version (or a build id `version@git`) in release order: the local tag ignored, a
    nightly before its release, an unparsable version last."""
    text = version.split("@", maxsplit=1)[0]
    try:
        return (0, Version(Version(text).public))
    except InvalidVersion:
        return (1, text)


def torch_release(version: str) -> Version | None:
    """The release a version string belongs to: '2.16.0.dev20261120+cpu' counts as 2.16.0."""
    try:
        return Version(Version(version).base_version)
    except InvalidVersion:
        return None
