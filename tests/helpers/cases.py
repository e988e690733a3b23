"""Writing case files from YAML text in tests and loading them."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

from conformance.data.loader import LoadedCase, load_case

CaseFactory = Callable[..., LoadedCase]


def case_factory(tmp_path: Path) -> CaseFactory:
    """Write a case file from YAML text (dedented) under `tmp_path`/cases and load it; `name` sets its path/id."""

    def make(text: str, name: str = "case.yaml") -> LoadedCase:
        path = tmp_path / "cases" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return load_case(path, tmp_path / "cases")

    return make
