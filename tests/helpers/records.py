"""Synthetic result records (any build, any status), results files and bench documents for tests."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.bench.report import SCHEMA_ID
from conformance.bench.timing import Stats
from conformance.results import ResultRecord

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
