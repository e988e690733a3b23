"""The CI release list is derived from the index: newest patch per minor, since a floor, the latest N."""

from __future__ import annotations

import pytest

from scripts.torch_releases import available, releases

PIP = """torch (2.15.0)
Available versions: 2.15.0, 2.14.1, 2.14.0, 2.13.0+cpu, 2.13.0, 2.12.1, 2.12.0, 2.11.0, 2.10.0, 2.9.1, 2.16.0rc1
  INSTALLED: 2.13.0+cpu
"""


def test_the_newest_patch_of_each_minor_since_the_floor() -> None:
    assert releases(available(PIP)) == ["2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]


def test_the_latest_two_for_a_push() -> None:
    assert releases(available(PIP), latest=2) == ["2.14.1", "2.15.0"]


def test_a_release_the_index_adds_joins_without_an_edit() -> None:
    newer = PIP.replace("Available versions: ", "Available versions: 2.16.0, ")
    assert releases(available(newer), latest=2) == ["2.15.0", "2.16.0"]


def test_output_without_the_versions_line_is_an_error() -> None:
    with pytest.raises(ValueError, match="Available versions"):
        available("ERROR: No matching distribution found for torch")
