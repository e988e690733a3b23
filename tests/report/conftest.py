"""Fixtures for report tests: synthetic records (fast, any build) and one real run of the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.bench.report import SCHEMA_ID
from conformance.bench.timing import Stats
from conformance.results import ResultRecord
from tests.templates import case_text

RecordFactory = Callable[..., ResultRecord]

BUILDS = {
    "2.12.1": ("2.12.1+cu130", "0d43ae8a1a94b34dbb58ffaeb6fd75e1fa4e9a2b"),
    "2.13.0": ("2.13.0+cpu", "cf30153c4c131c8164ee7798e5022d810682e2cb"),
    "2.14.1": ("2.14.1+cpu", "5c4886908584029761b579af026dcfb627c84070"),
    "2.16.0.dev20261120": ("2.16.0.dev20261120+cpu", "9b2f6c1e0d1d4b8a8f3e2a7c5d6e4f3a2b1c0d9e"),
}


def record(case_id: str = "mutation_epilogue/a", variant: str = "cpu-aot_eager-inference", status: str = "pass",
           build: str = "2.13.0", date: str = "2026-11-01T00:00:00+00:00", **kw: Any) -> ResultRecord:
    device, _, rest = variant.partition("-")
    backend, _, mode = rest.rpartition("-")
    version, git = BUILDS[build]
    fields: dict[str, Any] = {
        "case_id": case_id, "variant": variant, "status": status, "behavior": case_id.split("/", maxsplit=1)[0],
        "device": device, "backend": backend, "mode": mode, "summary": f"summary of {case_id}",
        "case_file": f"cases/{case_id}.yaml",
        "fingerprint": {"torch_version": version, "torch_git": git, "cuda": None, "hip": None, "python": "3.11.7",
                        "platform": "Linux", "harness_version": "0.1.0", "date": date, "device": device,
                        "device_name": "x86_64"},
        "durations": {"total": 1.25},
        "compile_counts": {"cold_graphs": 1},
    }
    if status == "fail" and "mismatches" not in kw:
        kw["mismatches"] = ({"check": "values", "where": "out[0]", "expected": "[1.0]", "actual": "[2.0]",
                             "detail": "", "source": "eager"},)
        kw.setdefault("reason", "out[0]: values is [2.0], but eager gives [1.0]")
    fields.update(kw)
    return ResultRecord.model_validate(fields)


def changed(r: ResultRecord, **changes: Any) -> ResultRecord:
    """`r` with fields replaced, validated like a record read from a file."""
    return ResultRecord.model_validate({**r.model_dump(by_alias=True), **changes})


def write_results(path: Path, records: list[ResultRecord]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.to_json_line() for r in records))
    return path


def full_build(build: str, device: str = "cpu", status: dict[str, str] | None = None) -> list[ResultRecord]:
    """Two passing items per behaviour on one build and device; `status` overrides by case id."""
    out = []
    for beh in ("mutation_epilogue", "runtime_wrapper", "subclass_wrapper", "backward_unwrap", "scalar_recompile"):
        for name in ("a", "b"):
            case = f"{beh}/{name}"
            out.append(record(case, f"{device}-aot_eager-inference", (status or {}).get(case, "pass"), build))
    return out



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
                 "    kind: bug\n    evidence: thought broken on a run\n"},
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


def dedent(text: str) -> str:
    return textwrap.dedent(text)


def stats_json(us: float) -> dict[str, Any]:
    return Stats(tuple(us * (1 + d) for d in (-0.01, -0.005, 0.0, 0.005, 0.01) * 3), 100).to_json()


def bench_doc(version: str, *, e2e: float, yard: float, step: float | None) -> dict[str, Any]:
    """A bench of one build: the mutation epilogue end to end (the build's compiled call) and the
    runtime-wrapper step, which builds before the change do not generate."""
    status = "measured" if step is not None else "absent"
    published = {"before_us": None, "after_us": None, "ratio": 1.02, "source": "pytorch#179600", "note": ""}
    return {
        "schema": SCHEMA_ID, "fingerprint": {"torch_version": version}, "settings": {}, "tables": [
            {"id": "mutation_epilogue", "title": "Mutation epilogue, end to end", "unit": "us/call",
             "form_labels": {"end_to_end": "compiled call", "interpreted": "step: reference loop",
                             "build": "step: build's _apply_mutations"},
             "rows": [{"id": "k1", "label": "k=1",
                       "forms": {"end_to_end": stats_json(e2e), "interpreted": stats_json(yard),
                                 "build": stats_json(step) if step is not None else None},
                       "ratios": {}, "headline": None, "published": published, "build": {"status": status}}]},
            {"id": "runtime_wrapper", "title": "RuntimeWrapper orchestration step in isolation", "unit": "us/call",
             "form_labels": {"interpreted": "reference interpreted", "build": "build's _runtime_wrapper"},
             "rows": [{"id": "a0m0n5", "label": "0 aliases, 0 mutations, 5 args",
                       "forms": {"interpreted": stats_json(0.5), "build": stats_json(step / 50) if step else None},
                       "ratios": {"interpreted/build": {"value": 2.5, "ci95": [2.4, 2.6], "distinguishable": True}}
                       if step else {}, "headline": "interpreted/build" if step else None,
                       "published": {"before_us": 0.35, "after_us": 0.17, "ratio": 2.1, "source": "pytorch#181271"},
                       "build": {"status": status}}]},
        ]}
