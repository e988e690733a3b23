"""Hooks by which another pytest plugin extends torch-conformance (pluggy hookspecs).

A vendor's plugin (its own `pytest11` entry point) implements any of these; the conformance
plugin calls them in every process of a session (the controller and each xdist worker) and uses
what they return, so an implementation must give the same answer each time. Nothing here is
called unless `--conformance` is active.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest


@pytest.hookspec
def pytest_conformance_backends(config: pytest.Config) -> Sequence[str]:  # type: ignore[empty-body]  # a spec
    """torch.compile backends every case also runs on, beside its own (e.g. a vendor's backend,
    which the implementation registers with `torch._dynamo.register_backend` when called). A case
    that names its backends explicitly is left as declared."""


@pytest.hookspec
def pytest_conformance_devices(config: pytest.Config) -> Sequence[str]:  # type: ignore[empty-body]  # a spec
    """Device types every case also runs on (e.g. 'xpu', or a PrivateUse1 device's name), beside
    cpu and cuda. A case that names its devices explicitly is left as declared."""


@pytest.hookspec
def pytest_conformance_expectations(config: pytest.Config) -> Sequence[Path]:  # type: ignore[empty-body]  # a spec
    """Known-failure files (the --expectations format) to use as if given on the command line."""
