"""cases/README.md shows each schema feature with a complete case: every one validates (with the
checks that need the build) and, in the slow suite, runs and conforms on aot_eager."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.data.deep_check import checker
from conformance.data.loader import load_all, load_case
from conformance.data.variants import Variant
from conformance.run.runner import run_variant

README = Path(__file__).parents[1] / "cases" / "README.md"
# What a schema-2 feature looks like in a case file: each must appear in some complete example.
FEATURES = {
    "tensor.values": r"\bvalues: \[",
    "module class": r"module: \{class: ",
    "classes block": r"^classes: \|",
    "subclass input": r"^\s+subclass:",
    "persist": r"persist: true",
    "optimizer": r"optimizer: \{class: ",
    "before action": r"- before: \|",
    "after action": r"- after: \|",
    "scoped version": r"version: \{\w",
    "open backends": r"backends: \[.*aot_eager_decomp_partition",
}


def examples() -> list[str]:
    """Every YAML block of the README that is a whole case (it says behavior:)."""
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [b for b in blocks if re.search(r"^behavior:", b, flags=re.MULTILINE)]


def _write(tmp_path: Path) -> list[Path]:
    paths = []
    for i, text in enumerate(examples()):
        path = tmp_path / "cases" / f"readme_{i}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def test_every_feature_has_a_complete_example() -> None:
    blocks = examples()
    missing = [name for name, pattern in FEATURES.items()
               if not any(re.search(pattern, b, flags=re.MULTILINE) for b in blocks)]
    assert not missing, f"cases/README.md has no complete example of: {', '.join(missing)}"


def test_readme_examples_validate(tmp_path: Path) -> None:
    paths = _write(tmp_path)
    cases, errors = load_all(paths, tmp_path / "cases", checker(backends=True))
    assert [str(e) for e in errors] == []
    assert len(cases) == len(paths) > 0


@pytest.mark.slow
def test_readme_examples_conform_on_aot_eager(tmp_path: Path) -> None:
    failed = []
    for path in _write(tmp_path):
        lc = load_case(path, tmp_path / "cases")
        for mode in lc.case.modes:
            record = run_variant(lc, Variant("cpu", "aot_eager", mode))
            if record.status != "pass":
                failed.append(f"{lc.case.summary} [{mode}]: {record.status}: {record.reason[:300]}")
    assert failed == []
