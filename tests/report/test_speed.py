"""The bench tables release over release in the report (Note [Before/after across releases])."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.bench.document import BenchDocument
from conformance.report.cli import main
from conformance.report.document import OwnDoc
from conformance.report.speed import speed
from tests.helpers.records import bench_doc, record, write_results


def _bench(version: str, *, e2e: float, yard: float, step: float | None) -> BenchDocument:
    return BenchDocument.model_validate(bench_doc(version, e2e=e2e, yard=yard, step=step))


def test_the_change_lands_where_the_step_is_first_generated_and_is_timed_against_the_release_before() -> None:
    docs = [_bench("2.15.0", e2e=40.0, yard=10.0, step=5.0), _bench("2.12.1", e2e=60.0, yard=10.0, step=None),
            _bench("2.13.0", e2e=50.0, yard=10.0, step=5.0)]
    data = speed(docs)
    assert data is not None and data.releases == ["2.12.1", "2.13.0", "2.15.0"]
    me = next(t for t in data.tables if t.id == "mutation_epilogue")
    (row,) = me.rows
    assert row.landed == "2.13.0" and row.before == "2.12.1"
    assert [c.median_us for c in row.own] == pytest.approx([60.0, 50.0, 40.0])
    assert row.at_landing is not None and row.at_landing.corrected is not None
    assert row.at_landing.corrected.value == pytest.approx(60 / 50, rel=0.01)
    assert row.at_landing.distinguishable
    (later,) = row.later
    assert later.release == "2.15.0" and later.corrected is not None
    assert later.corrected.value == pytest.approx(50 / 40, rel=0.01)
    rw = next(t for t in data.tables if t.id == "runtime_wrapper")
    (row,) = rw.rows
    # the release before has no isolated step of its own: no before/after is invented
    assert row.own[0] == OwnDoc(status="absent") and row.at_landing is None
    assert "no such step of its own" in row.before_note
    assert row.within_build is not None and row.within_build.value == 2.5


def test_machine_drift_between_the_two_runs_is_corrected_by_the_yardstick() -> None:
    # the compiled call took 1.5x as long on the newer build, but so did the reference loop: no change
    data = speed([_bench("2.12.1", e2e=40.0, yard=10.0, step=None),
                  _bench("2.13.0", e2e=60.0, yard=15.0, step=5.0)])
    assert data is not None
    at = next(t for t in data.tables if t.id == "mutation_epilogue").rows[0].at_landing
    assert at is not None and at.ratio is not None and at.corrected is not None
    assert at.ratio.value == pytest.approx(40 / 60, rel=0.01)
    assert at.corrected.value == pytest.approx(1.0, rel=0.01)
    assert not at.distinguishable


def test_an_oldest_build_that_already_has_the_step_says_the_landing_is_not_in_view() -> None:
    data = speed([_bench("2.13.0", e2e=50.0, yard=10.0, step=5.0)])
    assert data is not None
    row = data.tables[0].rows[0]
    assert row.landed == "2.13.0" and row.at_landing is None and "oldest build given" in row.before_note
    assert speed([]) is None


def test_the_report_shows_the_speed_section_with_the_plot(tmp_path: Path) -> None:
    results = [write_results(tmp_path / f"{v}.jsonl", [record("mutation_epilogue/a", build=v)])
               for v in ("2.12.1", "2.13.0")]
    benches = []
    for v, step in (("2.12.1", None), ("2.13.0", 5.0)):
        path = tmp_path / "bench" / v / "bench.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(bench_doc(v, e2e=60.0 if step is None else 50.0, yard=10.0, step=step)))
        benches.append(path)
    out = tmp_path / "out"
    assert main([*map(str, results), "-o", str(out), "--exit-zero", "--bench", str(tmp_path / "bench")]) == 0
    md = (out / "compat.md").read_text()
    assert "## Speed across releases (bench)" in md
    assert "| k=1 | 60.0 | 50.0 | 2.12.1 → 2.13.0: 1.20x (" in md
    assert "| 0 aliases, 0 mutations, 5 args | absent | 0.10 | 2.12.1 has no such step of its own" in md
    page = (out / "index.html").read_text()
    assert 'id="speed"' in page and '<figure class="bench-plot" id="bench-plot"><svg' in page
    doc = json.loads((out / "compat.json").read_text())
    assert doc["speed"]["releases"] == ["2.12.1", "2.13.0"] and "svg" not in doc["speed"]["plot"]


@pytest.mark.parametrize(("content", "says"), [
    ("[1, 2]", "not a bench results file (schema 'list'"),
    ('{"schema": "torch-conformance-bench/1", "tables": [{"id": "x"}]}', "fingerprint: Field required (7 error(s))"),
    ("{", "Expecting property name"),
    ('{"schema": "torch-conformance-bench/1", "tables": [], "x": NaN}', "NaN is not a number this file may hold"),
])
def test_bad_bench_input_is_refused_naming_the_file_and_nothing_is_written(tmp_path: Path, capsys: Any,
                                                                         content: str, says: str) -> None:
    results = write_results(tmp_path / "r.jsonl", [record("mutation_epilogue/a")])
    bad = tmp_path / "bench.json"
    bad.write_text(content)
    assert main([str(results), "-o", str(tmp_path / "out"), "--bench", str(bad)]) == 2
    err = capsys.readouterr().err
    assert says in err and str(bad) in err
    assert not (tmp_path / "out").exists()
    assert main([str(results), "-o", str(tmp_path / "out"), "--bench", str(tmp_path / "nothing")]) == 2


def test_bench_labels_and_versions_are_shown_as_text(tmp_path: Path) -> None:
    doc = bench_doc("2.13.0", e2e=50.0, yard=10.0, step=5.0)
    doc["tables"][0]["rows"][0]["label"] = "<script>window.x=1</script>"
    doc["fingerprint"]["torch_version"] = "<img src=x onerror=alert(1)>"
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    results = write_results(tmp_path / "r.jsonl", [record("mutation_epilogue/a")])
    out = tmp_path / "out"
    assert main([str(results), "-o", str(out), "--exit-zero", "--bench", str(path)]) == 0
    page = (out / "index.html").read_text()
    assert "<script>window.x" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.x=1&lt;/script&gt;" in page
    assert "<script>window.x" not in (out / "compat.md").read_text()


def test_the_table_holds_every_ratio_the_plot_draws_and_says_which_build_each_is() -> None:
    """The plot draws the newest build's within-build ratios; the table gives the landing build's, and
    the newest's beside it where they differ, so that the two never show different numbers unnamed."""
    from conformance.bench.report import ratio_text
    from conformance.report.speed import within_text

    newest = bench_doc("2.15.0", e2e=40.0, yard=10.0, step=4.0)
    newest["tables"][1]["rows"][0]["ratios"]["interpreted/build"] = {"value": 3.1, "ci95": [3.0, 3.2],
                                                                      "distinguishable": True}
    data = speed([_bench("2.12.1", e2e=60.0, yard=10.0, step=None),
                  _bench("2.13.0", e2e=50.0, yard=10.0, step=5.0), BenchDocument.model_validate(newest)])
    assert data is not None
    rows = [r for t in data.tables for r in t.rows if r.within_newest is not None]
    assert rows and any(r.within_newest != r.within_build for r in rows)
    for r in rows:
        assert r.within_newest is not None
        assert f">{r.within_newest.value:.2f}x<" in data.plot.svg  # drawn
        text = within_text(r)
        assert text.startswith(ratio_text(r.within_build))
        if r.within_newest != r.within_build:
            assert f"newest build {ratio_text(r.within_newest)} (plotted)" in text, text
