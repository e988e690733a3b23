"""A case's history across releases: status per build in release order, first failing, first fixed,
regressions; the same per internals mechanism; shown in compat.md, compat.json and index.html."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.report import merge, write_report
from conformance.report.history import history, timeline
from tests.helpers.records import changed, record, write_results


def test_first_failing_first_fixed_and_regressions_follow_release_order() -> None:
    ids = ["2.10", "2.11", "2.12", "2.13", "2.14"]
    assert timeline(["pass", "fail", "xfail", "pass", "pass"], ids) == ("2.11", "2.13", ("2.11",))
    assert timeline(["fail", "pass", "fail", None, "pass"], ids) == ("2.10", "2.11", ("2.12",))
    assert timeline([None, "pass", "pass", "pass", "error"], ids) == ("2.14", None, ("2.14",))
    assert timeline(["pass", None, "fail", "fail", "fail"], ids) == ("2.12", None, ("2.12",))  # a gap is skipped
    assert timeline(["pass"] * 5, ids) == (None, None, ())


def test_builds_are_ordered_by_release_not_by_input_and_a_nightly_comes_last(tmp_path: Path) -> None:
    files = [write_results(tmp_path / f"{b}.jsonl", [record("mutation_epilogue/a", status=st, build=b)])
             for b, st in (("2.16.0.dev20261120", "pass"), ("2.13.0", "fail"), ("2.12.1", "pass"),
                           ("2.14.1", "fail"))]
    report = merge(files)
    builds, rows = history(report)
    assert [b.torch_version for b in builds] == ["2.12.1+cu130", "2.13.0+cpu", "2.14.1+cpu", "2.16.0.dev20261120+cpu"]
    (row,) = rows
    assert row.statuses == ("pass", "fail", "fail", "pass") and row.changes
    assert [report.build(b).torch_version for b in (row.first_failing, row.first_fixed)] == [
        "2.13.0+cpu", "2.16.0.dev20261120+cpu"]
    write_report(report, tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    assert "## History across releases (1 of 1 items change status)" in md
    assert "| `mutation_epilogue/a` [cpu-aot_eager-inference] | pass | fail | fail | pass | 2.13.0+cpu | " \
           "2.16.0.dev20261120+cpu | 2.13.0+cpu |" in md
    doc = json.loads((tmp_path / "out" / "compat.json").read_text())
    assert doc["history"]["changed"][0]["statuses"] == ["pass", "fail", "fail", "pass"]
    page = (tmp_path / "out" / "index.html").read_text()
    assert 'id="history"' in page and "first fixed" in page


def test_a_mechanism_that_diverges_only_where_the_contract_fails_says_so_apart(tmp_path: Path) -> None:
    """The internals row per release: a probe that diverges on a passing item is the reference's
    word against the build; one that diverges only on failing items is a build that is wrong there."""
    from conformance.report.history import FAILING_ONLY, mechanism_history

    def probed(status: str, verdict: str, build: str, case: str) -> Any:
        return record(case, status=status, build=build,
                      probes={"results": [{"behavior": "mutation_epilogue", "status": verdict}]})

    files = [write_results(tmp_path / f"{b}.jsonl", rows) for b, rows in (
        ("2.13.0", [probed("pass", "conforms", "2.13.0", "mutation_epilogue/a"),
                    probed("xfail", "diverges", "2.13.0", "mutation_epilogue/b")]),
        ("2.14.1", [probed("pass", "diverges", "2.14.1", "mutation_epilogue/a"),
                    probed("xfail", "diverges", "2.14.1", "mutation_epilogue/b")]),
    )]
    words = dict(mechanism_history(merge(files)))["mutation_epilogue"]
    assert words == [FAILING_ONLY, "diverges"]


def test_an_item_that_holds_the_same_everywhere_is_not_listed_as_changing(tmp_path: Path) -> None:
    files = [write_results(tmp_path / f"{b}.jsonl", [record("mutation_epilogue/a", status="xfail", build=b),
                                                     record("mutation_epilogue/b", status="pass", build=b)])
             for b in ("2.13.0", "2.14.1")]
    _, rows = history(merge(files))
    assert [r.changes for r in rows] == [False, False]


def test_the_report_warns_when_case_files_changed_since_their_results(tmp_path: Path, monkeypatch: Any,
                                                                      capsys: Any) -> None:
    import hashlib

    from conformance.cli import main
    from tests.helpers.records import changed

    monkeypatch.chdir(tmp_path)
    case = tmp_path / "cases" / "mutation_epilogue" / "a.yaml"
    case.parent.mkdir(parents=True)
    case.write_text("the case as it was run\n")
    made = hashlib.sha256(case.read_bytes()).hexdigest()
    results = write_results(tmp_path / "r.jsonl", [
        changed(record("mutation_epilogue/a"), case_file="cases/mutation_epilogue/a.yaml", case_sha256=made),
        changed(record("mutation_epilogue/b"), case_file="cases/mutation_epilogue/b.yaml", case_sha256=made)])
    assert merge([results]).changed_cases() == ["cases/mutation_epilogue/b.yaml (gone)"]
    case.write_text("edited since\n")
    assert merge([results]).changed_cases() == ["cases/mutation_epilogue/a.yaml",
                                                "cases/mutation_epilogue/b.yaml (gone)"]
    main(["report", str(results), "-o", str(tmp_path / "out"), "--exit-zero"])
    assert "stale: 2 case file(s) changed since their results were made" in capsys.readouterr().err


def test_what_needs_a_person_comes_first_in_both_pages(tmp_path: Path) -> None:
    files = [write_results(tmp_path / f"{b}.jsonl", [record("mutation_epilogue/a", status=st, build=b),
                                                     record("mutation_epilogue/b", status="pass", build=b)])
             for b, st in (("2.13.0", "pass"), ("2.14.1", "fail"))]
    report = merge(files)
    write_report(report, tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    assert md.index("## Needs a person (") < md.index("### Failures (1)") \
        < md.index("## Newly failing since the release before (1)") \
        < md.index("## Builds") < md.index("## Matrix")
    page = (tmp_path / "out" / "index.html").read_text()
    assert page.index('id="attention"') < page.index('id="builds"') < page.index('id="items-section"')
    attention = page[page.index('id="attention"'):page.index('id="builds"')]
    assert "mutation_epilogue/a" in attention and "mutation_epilogue/b" not in attention
    assert "fails (untriaged) on 2.14.1+cpu after passing on the release before" in attention
    assert "fails (untriaged) on 2.14.1+cpu after passing on the release before" in md


def test_a_regression_into_a_known_failure_says_so_not_fails(tmp_path: Path) -> None:
    known = {"reason": "r", "link": "https://github.com/pytorch/pytorch/issues/1", "source": "x", "kind": "bug"}
    files = [write_results(tmp_path / f"{b}.jsonl", [changed(record("mutation_epilogue/a", status=st, build=b),
                                                             known_failure=known if st == "xfail" else None)])
             for b, st in (("2.13.0", "pass"), ("2.14.1", "xfail"))]
    write_report(merge(files), tmp_path / "out")
    for name in ("compat.md", "index.html"):
        text = (tmp_path / "out" / name).read_text()
        assert "fails as a declared known failure on 2.14.1+cpu after passing" in text, name
        assert "fails (untriaged)" not in text, name


