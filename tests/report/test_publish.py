"""`report --publish`: the form of a report kept in git (the published release matrix)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from conformance.report.cli import diff_main, main
from tests.helpers.records import record, write_results


def _inputs(tmp_path: Path) -> list[str]:
    files = []
    for build, status in (("2.12.1", "pass"), ("2.13.0", "fail")):
        files.append(write_results(tmp_path / f"{build}.jsonl", [
            record("mutation_epilogue/changes", status=status, build=build),
            record("mutation_epilogue/steady", status="pass", build=build),
            record("mutation_epilogue/known", status="xfail", build=build),
        ]))
    return [str(f) for f in files]


def test_published_report_gzips_the_full_records_and_lists_only_notable_items(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([*_inputs(tmp_path), "-o", str(out), "--exit-zero"]) == 0
    assert (out / "compat.json").is_file() and (out / "junit.xml").is_file()
    assert main([*_inputs(tmp_path), "-o", str(out), "--exit-zero", "--publish"]) == 0
    # the other form's files go: the folder never holds a compat.json older than its compat.json.gz
    assert not (out / "compat.json").exists() and not (out / "junit.xml").exists()
    doc = json.loads(gzip.decompress((out / "compat.json.gz").read_bytes()))
    assert len(doc["records"]) == 6
    page = (out / "index.html").read_text()
    data = json.loads(page.split('<script type="application/json" id="data">')[1].split("</script>")[0])
    # steady passes are counted in the matrix, not listed; the item that changes is listed on both builds
    assert len(data["items"]) == 4 and "mutation_epilogue/steady" not in {it["c"] for it in data["items"]}
    assert "4 of 6 items listed" in page
    first = (out / "compat.json.gz").read_bytes()
    assert main([*_inputs(tmp_path), "-o", str(out), "--exit-zero", "--publish"]) == 0
    assert (out / "compat.json.gz").read_bytes() == first  # regenerated: byte-identical, a clean git diff


def test_report_and_diff_read_a_published_compat_json_gz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    inputs = _inputs(tmp_path)
    assert main([*inputs, "-o", str(out), "--exit-zero", "--publish"]) == 0
    again = tmp_path / "again"
    assert main([str(out / "compat.json.gz"), "-o", str(again), "--exit-zero"]) == 0
    assert len(json.loads((again / "compat.json").read_text())["records"]) == 6
    newer = tmp_path / "newer"
    assert main([inputs[1], "-o", str(newer), "--exit-zero", "--publish"]) == 0
    assert diff_main([inputs[0], str(newer / "compat.json.gz")]) == 1  # the pass -> fail of 2.13.0, read from .gz
    assert "mutation_epilogue/changes" in capsys.readouterr().out


def test_a_damaged_gzip_is_refused_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "compat.json.gz"
    bad.write_bytes(gzip.compress(b'{"schema": "torch-conformance.compat/1"}\n')[:20])
    assert main([str(bad), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:0: cannot read" in err and "damaged gzip" in err
    assert not (tmp_path / "out").exists()
