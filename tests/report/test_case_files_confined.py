"""`report` reads a record's case file only inside the corpus it is given (--cases, default `run`'s), bounded,
never following `..`, an absolute path or a symbolic link out of it (issue: nothing lost, round 4)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.report import merge
from tests.helpers.records import changed, record, write_results


def _corpus(tmp_path: Path) -> tuple[Path, str]:
    case = tmp_path / "cases" / "mutation_epilogue" / "a.yaml"
    case.parent.mkdir(parents=True)
    case.write_text("the case as it was run\n")
    return tmp_path / "cases", hashlib.sha256(case.read_bytes()).hexdigest()


@pytest.mark.parametrize("named", ["../../../../proc/self/pagemap", "/etc/passwd", "cases/../../outside.yaml",
                                   "cases/mutation_epilogue/../../../outside.yaml", "cases/link/a.yaml"])
def test_a_path_out_of_the_corpus_is_said_so_and_never_read(tmp_path: Path, named: str) -> None:
    root, made = _corpus(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.yaml").write_text("the case as it was run\n")
    (root / "link").symlink_to(outside)  # a link in the corpus to a folder outside it
    (tmp_path / "outside.yaml").write_text("x")
    results = write_results(tmp_path / "r.jsonl", [changed(record("mutation_epilogue/a"), case_file=named,
                                                           case_sha256=made)])
    assert merge([results]).changed_cases(root) == [f"{named} (not in the corpus {root}: not read)"]


def test_a_file_in_the_corpus_is_read_bounded_and_a_pipe_never_blocks(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.data import corpus

    root, made = _corpus(tmp_path)
    os.mkfifo(root / "mutation_epilogue" / "pipe.yaml")
    (root / "mutation_epilogue" / "big.yaml").write_text("the case as it was run\n" + "#" * 100)
    monkeypatch.setattr(corpus, "CASE_FILE_LIMIT", 50)
    results = write_results(tmp_path / "r.jsonl", [
        changed(record(f"mutation_epilogue/{n}"), case_file=f"cases/mutation_epilogue/{n}.yaml", case_sha256=made)
        for n in ("a", "pipe", "big")])
    assert merge([results]).changed_cases(root) == ["cases/mutation_epilogue/big.yaml",
                                                    "cases/mutation_epilogue/pipe.yaml (gone)"]


def test_run_from_another_folder_the_corpus_named_is_the_one_read(tmp_path: Path) -> None:
    root, made = _corpus(tmp_path)
    results = write_results(tmp_path / "r.jsonl", [changed(record("mutation_epilogue/a"),
                                                           case_file="cases/mutation_epilogue/a.yaml",
                                                           case_sha256=made)])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([sys.executable, "-m", "conformance", "report", str(results), "-o", str(tmp_path / "out"),
                           "--cases", str(root), "--exit-zero"], cwd=elsewhere, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "stale:" not in done.stderr, done.stderr  # the case file is found, and is the one run
    (root / "mutation_epilogue" / "a.yaml").write_text("edited\n")
    done = subprocess.run([sys.executable, "-m", "conformance", "report", str(results), "-o", str(tmp_path / "out"),
                           "--cases", str(root), "--exit-zero"], cwd=elsewhere, capture_output=True, text=True,
                          timeout=300, check=False)
    assert "stale: 1 case file(s) changed" in done.stderr and "(gone)" not in done.stderr, done.stderr
