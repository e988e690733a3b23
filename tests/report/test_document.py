"""compat.json's model: what the report writes passes it and the published schema, what it reads is
held to it, and a field nobody declared is refused on both sides."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from conformance.report import ReportInputError, merge, write_report
from conformance.report.document import CompatDoc
from conformance.report.model import Report
from tests.helpers.records import full_build, record, write_results

ROOT = Path(__file__).parents[2]


def _written(tmp_path: Path) -> Path:
    """A report with a failure, a known failure, a retired one and a superseded record."""
    old = record("mutation_epilogue/a", status="fail", date="2026-11-01T00:00:00+00:00")
    a = write_results(tmp_path / "a.jsonl", full_build("2.13.0"))
    b = write_results(tmp_path / "b.jsonl", [old, *full_build(
        "2.14.1", status={"runtime_wrapper/a": "fail", "subclass_wrapper/b": "xfail", "backward_unwrap/a": "xpass"})])
    write_report(merge([a, b]), tmp_path / "out")
    return tmp_path / "out" / "compat.json"


def test_a_written_report_validates_against_the_model_and_the_published_schema(tmp_path: Path) -> None:
    import jsonschema

    text = _written(tmp_path).read_text()
    doc = CompatDoc.model_validate_json(text)
    assert (len(doc.records), len(doc.failures), len(doc.retire), len(doc.dropped_duplicates)) == (20, 3, 1, 1)
    jsonschema.validate(json.loads(text), json.loads((ROOT / "schemas" / "compat.schema.json").read_text()))


def test_the_published_six_build_report_is_a_valid_document() -> None:
    """The committed report has every section filled (speed, parity, causes, history, runs)."""
    doc = CompatDoc.model_validate_json(gzip.decompress((ROOT / "reports/releases/compat.json.gz").read_bytes()))
    assert doc.speed is not None and doc.upstream_parity and doc.causes and doc.history.changed and doc.runs
    assert {r.build for r in doc.records} == {b.id for b in doc.builds}


def test_the_writer_refuses_a_value_the_model_does_not_allow(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The document is built as its model: a view that says what the schema does not is an error of the
    writer, before anything is written."""
    monkeypatch.setattr(Report, "exit_code", lambda report: 2)
    with pytest.raises(ValidationError, match="exit_code"):
        _written(tmp_path)
    assert not (tmp_path / "out" / "compat.json").exists()


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["summary"].update(exit_code="no"), "summary.exit_code: Input should be 0 or 1"),
    (lambda d: d.update(colour="red"), "colour: Extra inputs are not permitted"),
    (lambda d: d["matrix"][0].update(verdict="green"), "matrix.0.verdict: Input should be"),
])
def test_a_compat_json_whose_head_breaks_the_model_is_refused_naming_the_field(tmp_path: Path, change: object,
                                                                               message: str) -> None:
    path = _written(tmp_path)
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]  # the parametrized edit
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(ReportInputError, match=rf"compat.json:1: not a valid torch-conformance.compat/1 report: "
                                               rf"{message}"):
        merge([path])


def test_a_hand_made_compat_json_with_missing_sections_is_refused_by_report_and_report_diff(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    good = _written(tmp_path)
    bare = tmp_path / "bare" / "compat.json"
    bare.parent.mkdir()
    bare.write_text('{"schema": "torch-conformance.compat/1",\n "records": []}\n')
    with pytest.raises(ReportInputError, match=r"bare/compat.json:1: not a valid torch-conformance.compat/1 report: "
                                               r"generator: Field required"):
        merge([bare])
    assert main(["report", "diff", str(good), str(bare)]) == 2
    err = capsys.readouterr().err
    assert "compat.json:1: not a valid torch-conformance.compat/1 report" in err and "Traceback" not in err, err
