"""The report: strict merging, the matrix, empty cells, overlaps, expectations, the four files,
atomic and byte-identical writes, the CLI, and `report diff`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import files as files_module
from conformance.cli import main
from conformance.report import ReportInputError, merge, write_report
from conformance.report.diff import diff_runs
from conformance.report.document import COMPAT_SCHEMA, DroppedDoc, KindCountDoc, StaleDoc
from conformance.report.words import verdict_line
from tests.helpers.records import changed, full_build, record, write_results

VALUE_MISMATCH = {"check": "values", "expected": "[1.0]", "actual": "[2.0]", "role": "output", "subject": "out[0]"}

FILES = ("compat.json", "compat.md", "index.html", "junit.xml")


def _xml(path: Path) -> ET.Element:
    return ET.fromstring(path.read_text())  # noqa: S314  # the report's own output, written by this test


def _two_builds(tmp_path: Path) -> list[Path]:
    """2.13.0 on cpu in two shards, 2.14.1 on cpu with one failure and one xfail."""
    recs = full_build("2.13.0")
    a = write_results(tmp_path / "in" / "r213-1.jsonl", recs[:5])
    b = write_results(tmp_path / "in" / "r213-2.jsonl", recs[5:])
    c = write_results(tmp_path / "in" / "r214.jsonl",
                      full_build("2.14.1", status={"runtime_wrapper/a": "fail", "subclass_wrapper/b": "xfail"}))
    return [a, b, c]


def test_merge_builds_the_matrix_per_behaviour_build_and_device(tmp_path: Path) -> None:
    report = merge(_two_builds(tmp_path))
    assert [b.id for b in report.builds] == ["2.13.0+cpu@cf30153c4c13", "2.14.1+cpu@5c4886908584"]
    assert [b.label for b in report.builds] == ["torch 2.13.0+cpu (cf30153)", "torch 2.14.1+cpu (5c48869)"]
    cell = report.cell("runtime_wrapper", "2.14.1+cpu@5c4886908584", "cpu")
    assert (cell.counts["pass"], cell.counts["fail"], cell.verdict) == (1, 1, "fail")
    assert report.cell("subclass_wrapper", "2.14.1+cpu@5c4886908584", "cpu").verdict == "pass"  # xfail is declared
    assert report.exit_code() == 1
    assert [s.record.case_id for s in report.failures] == ["runtime_wrapper/a"]


def test_the_four_files_say_the_same(tmp_path: Path) -> None:
    report = merge(_two_builds(tmp_path))
    write_report(report, tmp_path / "out")
    doc = json.loads((tmp_path / "out" / "compat.json").read_text())
    assert doc["schema"] == COMPAT_SCHEMA
    assert doc["summary"]["by_status"] == {"pass": 18, "fail": 1, "xfail": 1, "xpass": 0, "skip": 0, "error": 0}
    assert doc["failures"] == [{"build": "2.14.1+cpu@5c4886908584", "case_id": "runtime_wrapper/a",
                                "variant": "cpu-aot_eager-inference", "status": "fail", "reproducer_link": None}]
    assert len(doc["matrix"]) == 5 * 2 and len(doc["records"]) == 20
    md = (tmp_path / "out" / "compat.md").read_text()
    assert "| behaviour | torch 2.13.0+cpu (cf30153) · cpu | torch 2.14.1+cpu (5c48869) · cpu |" in md
    assert "| runtime_wrapper | **all pass** 2 pass | **FAIL** 1 pass · 1 fail · 1 newly failing |" in md
    # an xfail that passed on the release before, its known failure of no stated kind: a known bug, new
    assert "| subclass_wrapper | **all pass** 2 pass | " \
           "**NEWLY FAILING** 1 pass · 1 known bug · 1 newly failing |" in md
    assert "### FAIL `runtime_wrapper/a` [cpu-aot_eager-inference] on torch 2.14.1+cpu (5c48869)" in md
    assert "| out[0] | values | `[2.0]` | `[1.0]` (eager) |" in md
    junit = _xml(tmp_path / "out" / "junit.xml")
    assert (junit.get("tests"), junit.get("failures"), junit.get("skipped")) == ("20", "1", "1")
    failure = junit.find(".//testcase[@classname='runtime_wrapper.runtime_wrapper.a']/failure")
    assert failure is not None and "out[0]: values is [2.0], but eager gives [1.0]" in (failure.text or "")


def test_a_cell_where_no_case_ran_is_an_error_never_green(tmp_path: Path) -> None:
    recs = [r for r in full_build("2.13.0") if r.behavior != "scalar_recompile"]
    recs.append(record("scalar_recompile/a", status="skip", reason="device cuda: not available"))
    report = merge([write_results(tmp_path / "r.jsonl", recs)])
    (empty,) = report.empty_cells()
    assert (empty.behavior, empty.verdict) == ("scalar_recompile", "empty")
    assert report.exit_code() == 1
    assert [p.kind for p in report.problems] == ["no-case-ran"]
    assert "all 1 item(s) skipped, e.g. 'device cuda: not available'" in report.problems[0].message
    write_report(report, tmp_path / "out")
    assert "| scalar_recompile | **NO CASE RAN** 1 skip |" in (tmp_path / "out" / "compat.md").read_text()
    junit = _xml(tmp_path / "out" / "junit.xml")
    assert junit.find(".//testcase[@name='no case ran']/error") is not None
    # a device that ran some behaviours but never this one: also empty
    more = [*full_build("2.13.0"), *full_build("2.13.0", "cuda")[:2]]
    assert {c.behavior for c in merge([write_results(tmp_path / "c.jsonl", more)]).empty_cells()} == {
        "runtime_wrapper", "subclass_wrapper", "backward_unwrap", "scalar_recompile"}


def test_overlapping_inputs_keep_the_latest_record_and_say_so(tmp_path: Path) -> None:
    old = record("mutation_epilogue/a", status="fail", date="2026-11-01T00:00:00+00:00")
    new = record("mutation_epilogue/a", status="pass", date="2026-11-02T00:00:00+00:00")
    a = write_results(tmp_path / "new.jsonl", [new])
    b = write_results(tmp_path / "old.jsonl", [old])
    report = merge([a, b])  # the newer record wins whatever the order of the files
    assert [s.record.status for s in report.records] == ["pass"]
    assert report.dropped == [DroppedDoc(build="2.13.0+cpu@cf30153c4c13", case_id="mutation_epilogue/a",
                                         variant="cpu-aot_eager-inference", dropped=f"{b}:1", kept=f"{a}:1")]
    write_report(report, tmp_path / "out")
    assert "1 record(s) were superseded by a later record" in (tmp_path / "out" / "compat.md").read_text()


def test_records_without_a_fingerprint_take_their_files_build(tmp_path: Path) -> None:
    schema_error = record("mutation_epilogue/broken", "schema", "error", fingerprint={}, device=None, backend=None,
                          mode=None, reason="cases/x.yaml:3: inputs: unknown key")
    report = merge([write_results(tmp_path / "r.jsonl", [*full_build("2.13.0"), schema_error])])
    assert {s.build for s in report.records} == {"2.13.0+cpu@cf30153c4c13"}
    assert report.devices("2.13.0+cpu@cf30153c4c13") == ["cpu", "case file"]
    assert report.cell("mutation_epilogue", "2.13.0+cpu@cf30153c4c13", "case file").counts["error"] == 1
    assert not report.empty_cells()  # the case-file column is no device: it is never "empty"


@pytest.mark.parametrize(("lines", "message"), [
    (['{"schema": "torch-conformance.result/2"'], "{path}:1: not JSON (Expecting ',' delimiter"),
    (["", "[1, 2]"], "{path}:2: a JSON list, not a record object; a results file has one JSON object per line"),
    (['{"schema": "torch-conformance.result/3", "case_id": "x"}'],
     "{path}:1: schema 'torch-conformance.result/3', but this harness reads 'torch-conformance.result/2'"),
    (['{"schema": "torch-conformance.result/2", "case_id": "x", "variant": "v"}'],
     "{path}:1: invalid record: status: Field required"),
    (['{"schema": "torch-conformance.result/2", "case_id": "x", "variant": "v", "status": "pass", "colour": 1}'],
     "{path}:1: invalid record: colour: Extra inputs are not permitted"),
])
def test_malformed_input_is_rejected_naming_file_and_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReportInputError) as err:
        merge([path])
    assert str(err.value).startswith(message.format(path=path)), str(err.value)


def test_mixed_schema_inputs_are_rejected(tmp_path: Path) -> None:
    good = write_results(tmp_path / "a.jsonl", [record()])
    other = tmp_path / "b.jsonl"
    other.write_text(record().to_json_line() + record("x/y").to_json_line().replace(
        '"torch-conformance.result/2"', '"torch-conformance.result/3"'))
    with pytest.raises(ReportInputError) as err:
        merge([good, other])
    assert str(err.value) == (
        f"{other}:2: schema 'torch-conformance.result/3', but {good}:1 is 'torch-conformance.result/2': the inputs "
        "mix schema versions; report each harness version's results separately")


def test_cli_reports_bad_input_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(record().to_json_line() + "{torn")
    assert main(["report", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"report: {path}:2: not JSON" in err and "a torn last line from an interrupted run: delete that line" in err
    assert not (tmp_path / "out").exists()
    assert main(["report", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such results file" in capsys.readouterr().err


def test_cli_writes_the_folder_and_exits_by_what_it_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = _two_builds(tmp_path)
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "in"), "-o", str(out)]) == 1  # a folder stands for its *.jsonl
    assert sorted(p.name for p in out.iterdir() if p.name != "issue-drafts") == sorted(FILES)
    assert "20 record(s), 2 build(s).\nSomething needs a person: 1 failing item(s)." in capsys.readouterr().out
    assert main(["report", *map(str, inputs), "-o", str(out), "--exit-zero"]) == 0
    assert main(["report", str(inputs[0]), str(inputs[1]), "-o", str(out)]) == 0


def test_regenerating_is_byte_identical(tmp_path: Path) -> None:
    inputs = _two_builds(tmp_path)
    write_report(merge(inputs), tmp_path / "one")
    first = {n: (tmp_path / "one" / n).read_bytes() for n in FILES}
    write_report(merge(inputs), tmp_path / "one")  # the same folder again
    write_report(merge(inputs), tmp_path / "two")
    for n in FILES:
        assert (tmp_path / "one" / n).read_bytes() == first[n] == (tmp_path / "two" / n).read_bytes(), n
    assert not [p for p in (tmp_path / "one").iterdir() if p.name not in (*FILES, "issue-drafts")]  # no temp file


def test_writes_are_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = _two_builds(tmp_path)
    out = tmp_path / "out"
    write_report(merge(inputs), out)
    before = {n: (out / n).read_bytes() for n in FILES}
    calls = []

    def crash(src: str, dst: str) -> None:
        calls.extend([dst] if Path(dst).name in FILES else [])  # the report's own files (not its drafts)
        if len(calls) == 2:
            raise OSError("disk gone")
        os.rename(src, dst)

    monkeypatch.setattr(files_module.os, "replace", crash)
    recs = full_build("2.13.0", status={"mutation_epilogue/a": "fail"})
    with pytest.raises(OSError, match="disk gone"):
        write_report(merge([write_results(tmp_path / "other.jsonl", recs)]), out)
    # every file is either wholly old or wholly new, never cut; no temp file is left behind
    for n in FILES:
        data = (out / n).read_bytes()
        assert data == before[n] or n == "compat.json", n
    assert json.loads((out / "compat.json").read_text())["summary"]["records"] == 10
    assert sorted(p.name for p in out.iterdir() if p.name != "issue-drafts") == sorted(FILES)


def test_stale_expectations_and_xpasses_are_listed(tmp_path: Path) -> None:
    exp = tmp_path / "vendor.yaml"
    exp.write_text(
        "entries:\n"
        "  - case: mutation_epilogue/a\n    reason: used\n    link: https://github.com/pytorch/pytorch/issues/1\n"
        "    covers: [{check: values}]\n"
        "  - case: runtime_wrapper/gone\n    reason: stale\n    link: https://github.com/pytorch/pytorch/issues/2\n"
        "    covers: [{check: values}]\n")
    used = {"reason": "used", "link": "https://github.com/pytorch/pytorch/issues/1", "source": f"{exp}:2"}
    recs = [record("mutation_epilogue/a", status="xpass", known_failure=used, reason="passes; retire it"),
            *full_build("2.13.0")[1:]]
    report = merge([write_results(tmp_path / "r.jsonl", recs)], expectations=[exp])
    assert report.stale == [StaleDoc(source=f"{exp}:6", case="runtime_wrapper/gone", reason="stale",
                                     link="https://github.com/pytorch/pytorch/issues/2")]
    assert [s.record.case_id for s in report.xpasses] == ["mutation_epilogue/a"]
    write_report(report, tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    assert f"- {exp}:6: `runtime_wrapper/gone` matched no item of any build; retire or fix it" in md
    assert f"on torch 2.13.0+cpu (cf30153): retire or narrow the expectation at {exp}:2" in md
    doc = json.loads((tmp_path / "out" / "compat.json").read_text())
    assert doc["retire"][0]["expectation"] == f"{exp}:2"
    assert doc["stale_expectations"][0]["case"] == "runtime_wrapper/gone"


def test_the_real_run_reports_with_its_reproducers(real_run: Path, tmp_path: Path) -> None:
    report = merge([real_run])
    out = tmp_path / "out"
    write_report(report, out)
    doc = json.loads((out / "compat.json").read_text())
    links = {f["case_id"]: f["reproducer_link"] for f in doc["failures"]}
    assert re.fullmatch(r"reproducers/runtime_wrapper__diverges__cpu-aot_eager-inference-[0-9a-f]{12}\.py",
                        links["runtime_wrapper/diverges"]), links  # stored once, by its content
    assert links["scalar_recompile/broken"] is None  # a case file that does not load has nothing to reproduce
    assert (out / links["runtime_wrapper/diverges"]).read_bytes() == (
        real_run.parent / "reproducers" / "runtime_wrapper__diverges__cpu-aot_eager-inference.py").read_bytes()
    md = (out / "compat.md").read_text()
    assert "\\<script\\>window.__pwned = 1\\</script\\> \\| a wrong compile count (runtime_wrapper)" in md
    assert "<script>" not in md
    assert f"[reproducer]({links['runtime_wrapper/diverges']})" in md


def test_the_report_needs_no_torch(tmp_path: Path) -> None:
    inputs = _two_builds(tmp_path)
    code = ("import runpy, sys; sys.modules['torch'] = None\n"
            "runpy.run_module('conformance.report', run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code, *map(str, inputs), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    assert (tmp_path / "out" / "index.html").is_file()
    proc = subprocess.run([sys.executable, "-c", code, "diff", str(inputs[0]), str(inputs[2])],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "regression(s): exit status 1" in proc.stdout


# ----------------------------------------------------------------------------- diff


def _side(tmp_path: Path, name: str, build: str, **changes: dict[str, object]) -> Path:
    recs = [changed(r, **changes.get(r.case_id, {})) for r in full_build(build)]
    return write_results(tmp_path / f"{name}.jsonl", recs)


PROBES = {"results": [{"behavior": "mutation_epilogue", "status": "conforms"}], "seen": ["mutation_epilogue"]}
ABSENT = {"results": [{"behavior": "mutation_epilogue", "status": "absent"}], "seen": []}


def test_diff_finds_regressions_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _side(tmp_path, "a", "2.13.0", **{"runtime_wrapper/b": {"status": "fail", "reason": "was broken"},
                                          "mutation_epilogue/a": {"probes": PROBES}})
    b = _side(tmp_path, "b", "2.14.1", **{
        "runtime_wrapper/a": {"status": "fail", "reason": "out[0]: values is 2, but eager gives 1"},
        "mutation_epilogue/a": {"probes": ABSENT},
        "scalar_recompile/a": {"compile_counts": {"cold_graphs": 5}},
    })
    assert main(["report", "diff", str(a), str(b), "--json", str(tmp_path / "d.json")]) == 1
    out = capsys.readouterr().out
    assert "## 2.13.0+cpu@cf30153c4c13 -> 2.14.1+cpu@5c4886908584" in out
    assert ("runtime_wrapper/a [cpu-aot_eager-inference]: pass -> fail (out[0]: values is 2, but eager gives 1)"
            in out)
    assert ("mutation_epilogue/a [cpu-aot_eager-inference]: conforms -> absent (internals probe mutation_epilogue)"
            in out)
    assert "scalar_recompile/a [cpu-aot_eager-inference]: 1 -> 5 (graphs compiled (cold_graphs))" in out
    assert "runtime_wrapper/b [cpu-aot_eager-inference]: fail -> pass" in out.split("improvements")[1]
    assert "generated-code artifacts no longer seen: mutation_epilogue" in out
    assert "3 regression(s): exit status 1" in out
    doc = json.loads((tmp_path / "d.json").read_text())
    assert doc["regressed"] and len(doc["pairs"][0]["regressions"]) == 3


def test_diff_without_regressions_exits_0_and_reads_compat_json(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    a = _side(tmp_path, "a", "2.13.0", **{"runtime_wrapper/b": {"status": "fail"},
                                          "mutation_epilogue/a": {"probes": ABSENT}})
    b = _side(tmp_path, "b", "2.13.0", **{"mutation_epilogue/a": {"probes": PROBES}})
    write_report(merge([a]), tmp_path / "rep")
    assert main(["report", "diff", str(tmp_path / "rep" / "compat.json"), str(b)]) == 0
    out = capsys.readouterr().out
    assert "improvements: 2" in out and "0 regression(s)" in out


def test_diff_pairs_builds_by_id_then_release(tmp_path: Path) -> None:
    a = merge([_side(tmp_path, "a1", "2.13.0"), _side(tmp_path, "a2", "2.14.1")])
    nightly = [changed(r, fingerprint={**r.fingerprint.model_dump(), "torch_version": "2.14.1+cpu",
                                       "torch_git": "0" * 40}) for r in full_build("2.14.1")]
    b = merge([_side(tmp_path, "b1", "2.13.0"), write_results(tmp_path / "b2.jsonl", nightly)])
    d = diff_runs(a, b)
    assert [(p.a, p.b) for p in d.pairs] == [("2.13.0+cpu@cf30153c4c13", "2.13.0+cpu@cf30153c4c13"),
                                            ("2.14.1+cpu@5c4886908584", "2.14.1+cpu@000000000000")]
    assert not d.regressed and not d.only_a and not d.only_b


def test_huge_texts_are_clipped_on_the_pages_but_kept_in_compat_json(tmp_path: Path) -> None:
    diff = "x" * 1_000_000  # a probe once wrote a 70 MB structural diff
    probes = {"results": [{"behavior": "subclass_wrapper", "status": "diverges", "diff": diff,
                           "build_source": "def inner_fn(args): ...", "reference_source": "def inner_fn(args): ..."}]}
    recs = full_build("2.13.0", status={"subclass_wrapper/a": "fail"})
    recs = [changed(r, probes=probes) if r.case_id == "subclass_wrapper/a" else r for r in recs]
    write_report(merge([write_results(tmp_path / "r.jsonl", recs)]), tmp_path / "out")
    html = (tmp_path / "out" / "index.html").read_text()
    md = (tmp_path / "out" / "compat.md").read_text()
    assert len(html) < 200_000 and "… 980000 more characters in compat.json" in html
    assert len(md) < 50_000 and "… 995000 more characters in compat.json" in md
    doc = json.loads((tmp_path / "out" / "compat.json").read_text())
    (kept,) = [r for r in doc["records"] if r["case_id"] == "subclass_wrapper/a"]
    assert kept["probes"]["results"][0]["diff"] == diff


def test_the_verdict_per_build_comes_first_newest_first_and_counts_what_changed(tmp_path: Path) -> None:
    known = {"reason": "r", "link": "https://github.com/pytorch/pytorch/issues/1", "source": "cases/x.yaml:9"}
    old = full_build("2.13.0", status={"runtime_wrapper/a": "xfail", "runtime_wrapper/b": "fail"})
    new = full_build("2.14.1", status={"mutation_epilogue/a": "xfail", "runtime_wrapper/b": "fail"})
    recs = [changed(r, known_failure=known) if r.status == "xfail" else r for r in [*old, *new]]
    report = merge([write_results(tmp_path / "r.jsonl", recs)])
    first, second = report.verdicts()
    assert first.label.startswith("torch 2.14.1") and second.label.startswith("torch 2.13.0")
    assert first.model_dump(include={"items", "passed", "known", "untriaged", "new", "fixed"}) == {
        "items": 10, "passed": 8, "known": 1, "untriaged": 1, "new": 1, "fixed": 1}
    assert second.previous is None and first.links == [known["link"]]
    write_report(report, tmp_path / "out")
    head = (tmp_path / "out" / "compat.md").read_text().splitlines()[:12]
    assert head[4] == "## Verdict per build (newest first)"
    assert "passes 8 of 10 items; known: 1 known bug(s) (1 items)" in head[6]
    assert "1 newly failing, 1 fixed; 1 UNTRIAGED" in head[6]
    assert "passes 8 of 10 items" in (tmp_path / "out" / "index.html").read_text()


def test_a_verdict_counts_only_bugs_as_known_bugs_and_the_other_kinds_apart(tmp_path: Path) -> None:
    link = "https://github.com/pytorch/pytorch/issues/1"
    kinds = {"mutation_epilogue/a": "bug", "runtime_wrapper/a": "benign", "runtime_wrapper/b": "by_design",
             "subclass_wrapper/a": "eager_bug"}
    recs = [changed(r, known_failure={"reason": "r", "link": link, "source": "x", "kind": kinds[r.case_id]},
                    mismatches=({**VALUE_MISMATCH, "where": r.case_id, "path": r.case_id},))
            if r.case_id in kinds else r for r in full_build("2.14.1", status=dict.fromkeys(kinds, "xfail"))]
    (v,) = merge([write_results(tmp_path / "r.jsonl", recs)]).verdicts()
    assert v.known_by_kind == {k: KindCountDoc(items=1, causes=1) for k in ("bug", "eager_bug", "benign", "by_design")}
    line = verdict_line(v)
    assert "known: 1 known bug(s) (1 items), 1 bug(s) of eager's" in line, line
    assert "1 benign difference(s) (1 items), 1 difference(s) by design (1 items)" in line, line


def test_diff_and_the_page_agree_on_the_regressions_between_releases(tmp_path: Path) -> None:
    """A pass that becomes a declared known failure is a regression in both; backend calls (an aborted
    compile included) are no graphs: information, not a regression."""
    known = {"reason": "r", "link": "https://github.com/pytorch/pytorch/issues/1", "source": "x", "kind": "bug"}
    a = [changed(r, compile_counts={"cold_graphs": 1, "cold_backend_calls": 1}) for r in full_build("2.13.0")]
    b = [changed(r, compile_counts={"cold_graphs": 1, "cold_backend_calls": 2}) for r in
         full_build("2.14.1", status={"mutation_epilogue/a": "xfail", "runtime_wrapper/b": "fail"})]
    b = [changed(r, known_failure=known) if r.status == "xfail" else r for r in b]
    pa, pb = write_results(tmp_path / "a.jsonl", a), write_results(tmp_path / "b.jsonl", b)
    d = diff_runs(merge([pa]), merge([pb]))
    status_moves = {(c.case_id, c.variant) for c in d.pairs[0].regressions if "->" in c.kind}
    assert not any(c.kind.endswith("_backend_calls") for c in d.pairs[0].regressions)
    report = merge([pa, pb])
    write_report(report, tmp_path / "out")
    from conformance.report.history import regressed

    assert {(r.case_id, r.variant) for r, _ in regressed(report)} == status_moves
    assert {case for case, _ in status_moves} == {"mutation_epilogue/a", "runtime_wrapper/b"}
