"""One real `torch-conformance run` over a handful of cases (a pass, failures, an xpass, errors), shared by the
report and reproducer tests (registered in tests/conftest.py; synthetic records: tests/helpers/records.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.templates import case_text

REAL_CASES = {
    # passes
    "mutation_epilogue/ok": {"behavior": "mutation_epilogue", "summary": "A mutated input ends as in eager.",
                                 "inputs": "  x: {tensor: {shape: [4, 3], layout: transposed}}",
                                 "program": "  def f(x):\n      x.mul_(2)\n      return x.t()", "extra": ""},
    # a wrong case: its declared compile count is wrong (and its summary holds markup)
    "runtime_wrapper/wrong_compiles": {
        "behavior": "runtime_wrapper", "summary": "'<script>window.__pwned = 1</script> | a wrong compile count'",
        "inputs": "  x: {tensor: {shape: [4]}}\n  s: {scalar: {values: [0.5, 1.5]}}",
        "program": "  def f(x, s):\n      return x * s", "extra": "expect:\n  compiles: 3\n"},
    # a "build bug": compiled returns something else
    "runtime_wrapper/diverges": {
        "behavior": "runtime_wrapper", "summary": "Compiled code returns another value.",
        "inputs": "  x: {tensor: {shape: [4]}}",
        "program": "  def f(x):\n      if torch.compiler.is_compiling():\n          return x + 1\n      return x",
        "extra": ""},
    # a known failure that passes: xpass
    "subclass_wrapper/xpass": {
        "behavior": "subclass_wrapper", "summary": "A TwoTensor goes through.",
        "inputs": "  x: {two_tensor: {a: {tensor: {shape: [3]}}, b: {tensor: {shape: [3]}}}}",
        "program": "  def f(x):\n      return x.sin()",
        "extra": "known_failures:\n  - reason: thought broken\n    link: https://github.com/pytorch/pytorch/issues/1\n"
                 "    kind: bug\n    evidence: thought broken on a run\n    covers: [{check: values}]\n"},
    # eager itself raises: a broken case, an error
    "backward_unwrap/eager_raises": {
        "behavior": "backward_unwrap", "summary": "Eager raises.", "inputs": "  x: {tensor: {shape: [4]}}",
        "program": "  def f(x):\n      return x.view(3)", "extra": ""},
}


@pytest.fixture(scope="session")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `torch-conformance run` over REAL_CASES plus a broken case file; returns the results file."""
    root = tmp_path_factory.mktemp("real_run")
    for case_id, parts in REAL_CASES.items():
        path = root / "cases" / f"{case_id}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(case_text(upstream="https://github.com/pytorch/pytorch/pull/181271", **parts))
    (root / "cases" / "scalar_recompile").mkdir()
    (root / "cases" / "scalar_recompile" / "broken.yaml").write_text("behavior: scalar_recompile\nsumary: typo\n")
    proc = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--cases", "cases", "--results", "out/results.jsonl", "-q",
         "--", "-p", "no:logging"],
        cwd=root, capture_output=True, text=True, timeout=600, check=False,
    )
    results = root / "out" / "results.jsonl"
    assert results.is_file(), proc.stdout + proc.stderr
    statuses = {json.loads(line)["case_id"]: json.loads(line)["status"] for line in results.read_text().splitlines()}
    assert statuses == {"mutation_epilogue/ok": "pass", "runtime_wrapper/wrong_compiles": "fail",
                        "runtime_wrapper/diverges": "fail", "subclass_wrapper/xpass": "xpass",
                        "backward_unwrap/eager_raises": "error", "scalar_recompile/broken": "error"}, (
        proc.stdout[-3000:])
    return results
