"""A build as the report knows it (a torch version and git hash, and what its records say of the machine), and
builds in release order."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from packaging.version import Version

from conformance.versions import version_key


@dataclass
class Build:
    id: str
    torch_version: str
    torch_git: str | None
    cuda: str | None = None
    hip: str | None = None
    pythons: list[str] = field(default_factory=list)
    platforms: list[str] = field(default_factory=list)
    harness_versions: list[str] = field(default_factory=list)
    corpora: dict[str, str] = field(default_factory=dict)  # digest -> CorpusRef.describe(), per corpus its records ran
    dates: list[str] = field(default_factory=list)
    device_names: dict[str, str] = field(default_factory=dict)
    records: int = 0

    @property
    def label(self) -> str:
        return f"torch {self.torch_version}" + (f" ({self.torch_git[:7]})" if self.torch_git else "")

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.id)


def release_key(build: Build) -> tuple[int, Version | str, str]:
    """Builds in release order (version_key), then by id."""
    return (*version_key(build.torch_version), build.id)



def in_release_order(builds: Sequence[Build]) -> list[Build]:
    return sorted(builds, key=release_key)


def environment_changes(builds: Sequence[Build]) -> list[str]:
    """Where consecutive builds (release order) differ in more than torch: the wheel's variant (the
    local tag: +cpu, +cu130), Python, platform, CUDA. A difference between two such builds, in a
    verdict or a bench ratio, may come from that too."""
    def variant(b: Build) -> str:
        return b.torch_version.partition("+")[2] or "no local tag"

    facts = (("wheel variant", variant), ("Python", lambda b: ", ".join(b.pythons) or "?"),
             ("platform", lambda b: ", ".join(b.platforms) or "?"), ("CUDA", lambda b: b.cuda or "none"))
    ordered = in_release_order(builds)
    out = []
    for before, after in itertools.pairwise(ordered):
        changed = [f"{name} {get(before)} → {get(after)}" for name, get in facts if get(before) != get(after)]
        if changed:
            out.append(f"{before.torch_version} → {after.torch_version}: {'; '.join(changed)}")
    return out


def labels(builds: Sequence[Build]) -> dict[str, str]:
    """How a build is named in the history: its torch version."""
    return {b.id: b.torch_version for b in builds}
