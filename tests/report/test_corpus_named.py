"""Note [The corpus] in a report: each build names the corpus it ran, and a report or a diff of runs
of different corpora says so; a bundled corpus's case files are found where the working folder has none."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from conformance.data import corpus
from conformance.report import merge, write_report
from conformance.report.diff import diff_runs, render_text
from conformance.results import CorpusRef, ResultRecord
from tests.helpers.records import changed, full_build, write_results


def _ran(records: list[ResultRecord], digest: str, **kw: Any) -> list[ResultRecord]:
    ref = CorpusRef(origin="bundled", version="0.1.0", digest=digest, files=620, base="bundled corpus of "
                    "torch-conformance 0.1.0", added=0, changed=0, removed=0, **kw)
    return [changed(r, fingerprint={**r.fingerprint.model_dump(), "corpus": ref.model_dump()}) for r in records]


def test_each_build_names_its_corpus_and_one_corpus_is_no_news(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl", _ran(full_build("2.13.0"), "a" * 64))
    report = merge([results])
    assert "different corpora" not in report.summary()[1]
    write_report(report, tmp_path / "out")
    said = "torch-conformance 0.1.0 corpus (bundled), 620 files, sha256 aaaaaaaaaaaa, as in the bundled corpus"
    assert said in (tmp_path / "out" / "compat.md").read_text()
    assert said in (tmp_path / "out" / "index.html").read_text()


def test_a_report_of_runs_of_different_corpora_says_so(tmp_path: Path) -> None:
    a = write_results(tmp_path / "a.jsonl", _ran(full_build("2.13.0"), "a" * 64))
    b = write_results(tmp_path / "b.jsonl", _ran(full_build("2.14.1"), "b" * 64))
    words = merge([a, b]).summary()[1]
    assert "ran 2 different corpora" in words and "2.13.0+cpu: aaaaaaaaaaaa" in words, words


def test_report_diff_says_when_the_two_sides_ran_different_corpora(tmp_path: Path) -> None:
    base = full_build("2.13.0")
    same = diff_runs(merge([write_results(tmp_path / "a.jsonl", _ran(base, "a" * 64))]),
                     merge([write_results(tmp_path / "a2.jsonl", _ran(base, "a" * 64))]))
    assert "different corpora" not in render_text(same)
    other = diff_runs(merge([write_results(tmp_path / "a.jsonl", _ran(base, "a" * 64))]),
                      merge([write_results(tmp_path / "b.jsonl", _ran(base, "b" * 64, ))]))
    text = render_text(other)
    assert text.startswith("the two sides ran different corpora"), text
    assert "sha256 aaaaaaaaaaaa" in text and "sha256 bbbbbbbbbbbb" in text


def test_a_bundled_case_file_is_read_from_the_package_where_the_working_folder_has_no_cases(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site" / "conformance"
    case = package / "corpus" / "mutation_epilogue" / "a.yaml"
    case.parent.mkdir(parents=True)
    case.write_text("the case as it was run\n")
    (package / "corpus" / "CORPUS.json").write_text("{}")
    monkeypatch.setattr(corpus, "PACKAGE_DIR", package)
    monkeypatch.delenv("TORCH_CONFORMANCE_CASES", raising=False)
    work = tmp_path / "empty"
    work.mkdir()
    monkeypatch.chdir(work)
    made = hashlib.sha256(case.read_bytes()).hexdigest()
    (r,) = full_build("2.13.0")[:1]
    results = write_results(tmp_path / "r.jsonl", [changed(r, case_file="cases/mutation_epilogue/a.yaml",
                                                           case_sha256=made)])
    assert merge([results]).changed_cases() == []
    case.write_text("edited since\n")
    assert merge([results]).changed_cases() == ["cases/mutation_epilogue/a.yaml"]
