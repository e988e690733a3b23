"""The measurement machinery of `torch-conformance bench`, on tiny repeats. No timed assertions
beyond "a deliberately slowed function measures slower" (by a wide margin)."""

from __future__ import annotations

import contextlib
import gc
import json
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from conformance.bench import report, timing
from conformance.bench.document import BenchDocument, StatsDoc
from conformance.bench.generated import exec_generated, find_def, free_names
from conformance.bench.harness import CorpusRun, harness_markdown, summarize
from conformance.cli import main
from conformance.probe.capture import CapturedArtifact, CaptureResult, split_combined
from conformance.results import ResultRecord

CAPTURED = Path(__file__).resolve().parents[1] / "resources" / "captured"
TINY = timing.Settings.quick()


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


# -- timing -------------------------------------------------------------------------------


def test_measure_shape() -> None:
    s = timing.measure(lambda: None, TINY)
    assert len(s.samples) == TINY.repeat
    assert 1 <= s.number <= TINY.max_number
    assert min(s.samples) <= s.q1 <= s.median <= s.q3 <= max(s.samples)
    data = s.to_json()
    assert set(data) >= {"median_us", "q1_us", "q3_us", "min_us", "max_us", "noise", "repeats", "calls_per_repeat"}
    assert timing.Stats.from_doc(StatsDoc(**data)) == s


def test_slowed_function_measures_slower() -> None:
    fast, slow = timing.measure_interleaved([lambda: None, lambda: _spin(200e-6)], TINY)
    assert slow.median > fast.median
    assert slow.median >= 150  # µs: the spin alone is 200
    r = timing.ratio(slow, fast)
    assert r.value > 1 and r.distinguishable


def test_gc_disabled_while_timed_and_restored() -> None:
    seen: list[bool] = []
    assert gc.isenabled()
    timing.measure(lambda: seen.append(gc.isenabled()), TINY)
    # warm-up calls run with GC on, every timed call with it off
    assert False in seen
    assert gc.isenabled()
    gc.disable()
    try:
        with timing.gc_disabled():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_gc_restored_when_the_timed_function_raises() -> None:
    def boom() -> None:
        raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        timing.measure(boom, TINY)
    assert gc.isenabled()


def test_ratio_interval_and_aa() -> None:
    a = timing.Stats((10.0, 10.2, 9.9, 10.1, 10.0), 1)
    b = timing.Stats((5.0, 5.1, 4.9, 5.0, 5.05), 1)
    r = timing.ratio(a, b)
    assert r.low <= r.value <= r.high
    assert r.distinguishable
    aa = timing.ratio(a, timing.Stats(a.samples, 1))
    assert aa.value == pytest.approx(1.0)
    assert not aa.distinguishable
    assert timing.ratio(a, b) == r  # seeded: the same samples give the same interval


# -- the build's generated code ---------------------------------------------------------------


def test_free_names_exclude_builtins_and_attributes() -> None:
    src = "def f(args):\n    x = len(args)\n    return torch.cat(args) if _flag_ else _other_(x)\n"
    assert sorted(free_names(src, "f")) == ["_flag_", "_other_", "torch"]


def test_exec_generated_stubs_and_unusable() -> None:
    src = "def g(a):\n    return _compiled_(a) + _k_1\n"
    built = exec_generated(src, "g", {"_compiled_": lambda a: a * 2}, [(r"_k_\d+", 1)])
    assert built.status == "measured"
    assert built.fn is not None and built.fn(3) == 7
    assert built.stubbed == ("_compiled_", "_k_1")
    missing = exec_generated(src, "g", {})
    assert missing.status == "unusable" and "_compiled_" in missing.reason
    broken = exec_generated("def g(:\n", "g", {})
    assert broken.status == "unusable"


def test_find_def_in_any_artifact() -> None:
    cap = CaptureResult([CapturedArtifact("x", "def other(a):\n    return a", ("trace",), 0),
                         CapturedArtifact("renamed_in_a_new_release", "def unwrap_fn(args):\n    return list(args)",
                                          ("trace",), 0)])
    assert find_def(cap, "unwrap_fn") == ("renamed_in_a_new_release", "def unwrap_fn(args):\n    return list(args)")
    assert find_def(cap, "_runtime_wrapper") is None


def _recorded_runtime_wrappers() -> list[tuple[str, str]]:
    out = []
    for path in sorted(CAPTURED.glob("*/*runtime_wrapper_orchestration*.py")):
        out.append((f"{path.parent.name}/{path.name}", path.read_text()))
    for path in sorted(CAPTURED.glob("*combined/*.py")):
        for name, src in split_combined(path.read_text()):
            if "def _runtime_wrapper(" in src:
                out.append((f"{path.parent.name}/{name}", src))
    return out


@pytest.mark.parametrize(("name", "source"), _recorded_runtime_wrappers(), ids=lambda v: str(v)[:60])
def test_recorded_runtime_wrappers_exec_with_the_orchestration_stubs(name: str, source: str) -> None:
    """Every release form recorded (2.13, 2.14, 2.15 combined) runs with the bench's stubs."""
    from conformance.bench import suites

    built = exec_generated(source, "_runtime_wrapper", suites.ORCHESTRATION_STUBS, suites.ORCHESTRATION_PATTERNS)
    assert built.status == "measured", built.reason
    assert built.fn is not None
    n = int(source.split("if len(all_outs) != ")[1].split(":", maxsplit=1)[0])
    outs = [torch.empty(0) for _ in range(n)]
    args = [torch.empty(0) for _ in range(4)]
    ret = built.fn(lambda a: outs, contextlib.nullcontext, lambda: None, args)
    assert isinstance(ret, list) and 1 <= len(ret) <= n


def test_orchestration_source_shape() -> None:
    from conformance.bench.suites import orchestration_source

    src = orchestration_source(2, 1, 5)
    assert src.startswith("def f(a0, a1, a2, a3, a4):")
    assert "a0.add_(1)" in src and "a1.view(-1)" in src and "a2.view(-1)" in src
    with pytest.raises(ValueError, match="exceed"):
        orchestration_source(4, 2, 5)


def test_orchestration_row_on_the_installed_build() -> None:
    """One real row, tiny repeats: the build's own wrapper is found (or said absent) and timed."""
    from conformance.bench import suites
    from conformance.bench.suites import orchestration_row

    row = orchestration_row(2, 0, 5, TINY)
    assert row.forms["interpreted"] is not None and row.forms["reference_codegen"] is not None
    assert row.build is not None
    if row.build.status == "measured":
        assert row.forms["build"] is not None
        assert set(row.build.stubbed) <= set(suites.ORCHESTRATION_STUBS)
        assert row.headline == "interpreted/build"
    else:
        assert row.forms["build"] is None
        assert row.headline == "interpreted/reference_codegen"
    assert row.published.before_us is not None


# -- report, compare, CLI ---------------------------------------------------------------------


def _stats(median: float) -> dict[str, Any]:
    return timing.Stats((median * 0.98, median, median * 1.02), 10).to_json()


def _doc(version: str, build_us: float | None, e2e_us: float) -> dict[str, Any]:
    """A bench.json of two tables as its file holds it (`_bench` reads it into its model)."""
    def row(rid: str, label: str, forms: dict[str, Any], headline: str | None, build: str) -> dict[str, Any]:
        ratios = {}
        if headline:
            ratios[headline] = {"value": 2.0, "ci95": [1.9, 2.1], "distinguishable": True}
        return {"id": rid, "label": label, "forms": forms, "ratios": ratios, "headline": headline,
                "published": {"before_us": 0.35, "after_us": 0.17, "ratio": 2.1, "source": "s", "note": ""},
                "build": {"status": build, "artifact": None, "stubbed": [], "reason": "", "source": None,
                          "artifacts_seen": []},
                "notes": ["a note"], "verdict": None}

    rw_forms = {"interpreted": _stats(0.6), "reference_codegen": _stats(0.3),
                "build": _stats(build_us) if build_us else None}
    return {
        "schema": report.SCHEMA_ID,
        "fingerprint": {"torch_version": version, "torch_git": "abc", "python": "3.11", "platform": "x"},
        "settings": {"repeat": 3},
        "started": "2026-01-01T00:00:00+00:00",
        "elapsed_s": 1.0,
        "tables": [
            {"id": "runtime_wrapper", "title": "RW", "what": "w", "unit": "us/call",
             "form_labels": {"interpreted": "i", "reference_codegen": "r", "build": "b"},
             "rows": [row("0a0m5n", "0 alias, 0 mut, 5 args", rw_forms,
                          "interpreted/build" if build_us else "interpreted/reference_codegen",
                          "measured" if build_us else "absent")]},
            {"id": "subclass_wrapper", "title": "SW", "what": "w", "unit": "us/call",
             "form_labels": {"end_to_end": "e"},
             "rows": [row("twotensor", "TwoTensor", {"end_to_end": _stats(e2e_us)}, None, "measured")]},
        ],
    }


def _bench(data: dict[str, Any]) -> BenchDocument:
    return BenchDocument.model_validate(data)


def test_outputs_markdown_svg_schema(tmp_path: Path) -> None:
    doc = _doc("2.13.0", 0.2, 100.0)
    paths = report.write_outputs(_bench(doc), tmp_path)
    assert json.loads(paths["json"].read_text()) == doc  # the keys and values it was given, as given
    assert {p.name for p in paths.values()} == {"bench.json", "bench.md", "bench.svg", "bench.schema.json"}
    md = paths["markdown"].read_text()
    assert "| 0 alias, 0 mut, 5 args |" in md and "0.35 → 0.17 µs" in md and "2.00x" in md
    svg = paths["svg"].read_text()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "TwoTensor" in svg
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(json.loads(paths["json"].read_text()), json.loads(paths["schema"].read_text()))


def test_absent_build_is_said(tmp_path: Path) -> None:
    md = report.markdown(_bench(_doc("2.11.0", None, 100.0)))
    assert "| absent |" in md


def test_compare_two_builds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(_doc("2.11.0", None, 150.0)))
    new.write_text(json.dumps(_doc("2.13.0", 0.2, 100.0)))
    out = tmp_path / "cmp.md"
    assert main(["bench", "compare", str(old), str(new), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2.11.0 (before) → 2.13.0 (after)" in text
    assert "| 0 alias, 0 mut, 5 args | absent |" in text
    rows = json.loads(out.with_suffix(".json").read_text())["rows"]
    e2e = next(r for r in rows if r["row"] == "twotensor")
    assert e2e["ratio"]["value"] == pytest.approx(1.5)
    assert e2e["ratio"]["distinguishable"]
    assert next(r for r in rows if r["row"] == "0a0m5n")["ratio"] is None


def test_compare_corrects_for_machine_drift(tmp_path: Path) -> None:
    """Run B on a machine 2x slower: the yardstick (same code in both runs) says so, and the
    corrected ratio of an unchanged build is 1."""
    a, b = _doc("2.13.0", 0.2, 100.0), _doc("2.14.1", 0.4, 100.0)
    b["tables"][0]["rows"][0]["forms"]["interpreted"] = _stats(1.2)  # A: 0.6
    _, rows = report.compare(_bench(a), _bench(b))
    row = next(r for r in rows if r.row == "0a0m5n")
    assert row.ratio is not None and row.drift is not None and row.corrected is not None
    assert row.ratio.value == pytest.approx(0.5)
    assert row.drift.value == pytest.approx(2.0)
    assert row.corrected.value == pytest.approx(1.0)
    assert not row.corrected.distinguishable


def test_compare_rejects_other_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["bench", "compare", str(bad), str(bad)]) == 2
    assert "not a bench results file" in capsys.readouterr().err


def test_a_bench_file_that_breaks_its_model_is_refused_with_the_field(tmp_path: Path) -> None:
    doc = _doc("2.13.0", 0.2, 100.0)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    assert report.read(path).model_dump(mode="json", by_alias=True, exclude_unset=True) == doc
    doc["tables"][0]["rows"][0]["forms"]["interpreted"]["median_us"] = "fast"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"tables\.0\.rows\.0\.forms\.interpreted\..*median_us"):
        report.read(path)


def test_cli_quick_run_writes_every_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--quick", "--only", "backward_unwrap", "--out", str(tmp_path)]) == 0
    doc = report.read(tmp_path / "bench.json")
    (table,) = doc.tables
    assert table.id == "backward_unwrap"
    assert [r.label for r in table.rows] == ["5 args", "10 args", "20 args", "50 args"]
    for row in table.rows:
        interpreted = row.forms["interpreted"]
        assert interpreted is not None and interpreted.repeats == TINY.repeat
        assert row.published.ratio is not None
    assert (tmp_path / "bench.svg").exists()
    assert "Backward prologue unwrap" in capsys.readouterr().out


def test_cli_rejects_unknown_table(tmp_path: Path) -> None:
    assert main(["bench", "--only", "nope", "--out", str(tmp_path)]) == 2


# -- harness overhead ------------------------------------------------------------------------


def _run(name: str, workers: int, wall: float, torch_s: float) -> CorpusRun:
    rec = ResultRecord(case_id="a/b", variant="v", status="pass", durations={
        "eager": torch_s / 2, "compile": torch_s / 2, "build_inputs": 0.1, "oracles": 0.2, "probe": 0.3,
        "total": torch_s + 1.0})
    return CorpusRun(name, workers, wall, 0, [rec, rec], ["torch-conformance", "run"])


def test_harness_summary() -> None:
    s = summarize([_run("serial", 1, 30.0, 10.0), _run("parallel", 2, 15.0, 10.0), _run("warm", 1, 9.0, 3.0)])
    serial = s["runs"][0]
    assert serial["torch_s"] == pytest.approx(20.0)
    assert serial["overhead"] == pytest.approx(30.0 / 20.0 - 1)
    assert serial["buckets_s"]["other_in_records"] == pytest.approx(2 * (1.0 - 0.6))
    assert serial["buckets_s"]["outside_records"] == pytest.approx(30.0 - 22.0)
    assert s["runs"][1]["overhead"] == pytest.approx(2 * 15.0 / 20.0 - 1)
    assert s["parallel_over_serial"] == pytest.approx(0.5)
    assert s["warm_over_cold"] == pytest.approx(0.3)
    md = harness_markdown(s)
    assert "warm-cache rerun / cold run = 0.30" in md and "met" in md


def test_harness_reads_a_run_s_results_file_as_records(tmp_path: Path) -> None:
    from conformance.bench.harness import _read_records

    rec = _run("serial", 1, 30.0, 10.0).records[0]
    path = tmp_path / "results.jsonl"
    path.write_text(rec.to_json_line() + "\n" + rec.to_json_line())
    assert _read_records(path) == [rec, rec]
    assert _read_records(tmp_path / "none.jsonl") == []
