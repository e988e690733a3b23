"""Note [The corpus]: where the case files are found without a checkout, the corpus's identity, and
no silent zero for a folder without case files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.data import corpus
from conformance.data.corpus_files import MANIFEST_NAME, corpus_digest, corpus_files, manifest_text

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "tests" / "resources" / "cases" / "valid"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package as a wheel installs it: conformance/corpus/ with its manifest, and no source tree."""
    package = tmp_path / "site" / "conformance"
    shutil.copytree(VALID, package / "corpus")
    (package / "corpus" / MANIFEST_NAME).write_text(manifest_text("9.9.9", corpus_files(package / "corpus")))
    monkeypatch.setattr(corpus, "PACKAGE_DIR", package)
    monkeypatch.delenv("TORCH_CONFORMANCE_CASES", raising=False)
    corpus.identity.cache_clear()
    return package / "corpus"


def test_without_cases_given_the_working_folder_s_cases_come_first_then_the_package_s(
        installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert corpus.root_of() == installed
    (work / "cases").mkdir()
    assert corpus.root_of() == Path("cases")
    monkeypatch.setenv("TORCH_CONFORMANCE_CASES", "elsewhere")
    assert corpus.root_of() == Path("elsewhere")
    assert corpus.root_of("given") == Path("given")


def test_a_record_s_bundled_case_file_resolves_in_an_empty_folder(installed: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case = next(installed.glob("*.yaml"))
    assert corpus.display(case, installed) == f"cases/{case.name}"
    assert corpus.resolve(f"cases/{case.name}", installed) == installed / case.name
    assert corpus.display(case, tmp_path) is None  # a folder of one's own: the working folder names it


def test_the_bundled_corpus_has_one_digest_and_no_local_change(installed: Path) -> None:
    ref, changes = corpus.identity(installed)
    assert (ref.origin, ref.version, ref.local_changes, changes) == ("bundled", "9.9.9", 0, ())
    assert ref.digest == corpus_digest(corpus_files(installed)) == json.loads(
        (installed / MANIFEST_NAME).read_text())["digest"]
    assert "as in the bundled corpus of torch-conformance 9.9.9" in ref.describe()


def test_a_folder_s_changes_to_the_bundled_corpus_are_named_file_by_file(installed: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(installed, mine)
    first, second = sorted(mine.glob("*.yaml"))[:2]
    first.write_text(first.read_text() + "\n# a local note\n")
    second.unlink()
    (mine / "sub").mkdir()
    (mine / "sub" / "own.yaml").write_text("behavior: x\n")
    ref, changes = corpus.identity(mine)
    assert (ref.origin, ref.version, ref.added, ref.changed, ref.removed) == ("folder", None, 1, 1, 1)
    assert changes == ("added sub/own.yaml", f"changed {first.name}", f"removed {second.name}")
    assert ref.digest != corpus.identity(installed)[0].digest
    assert "1 added, 1 changed, 1 removed" in ref.describe()


def test_a_hidden_file_is_no_part_of_the_corpus(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("x: 1\n")
    before = corpus_digest(corpus_files(tmp_path))
    (tmp_path / ".draft.yaml").write_text("x: 2\n")
    (tmp_path / "notes.txt").write_text("not a case\n")
    assert corpus_digest(corpus_files(tmp_path)) == before
    (tmp_path / "a.yaml").write_text("x: 3\n")
    assert corpus_digest(corpus_files(tmp_path)) != before


def test_a_checkout_s_changes_are_told_against_git_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(VALID, tree / "cases")
    (tree / "cases" / "schema.json").write_text("{}")
    (tree / "pyproject.toml").write_text("")
    (tree / "conformance").mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(tree)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "corpus"], check=True)
    monkeypatch.setattr(corpus, "PACKAGE_DIR", tree / "conformance")
    corpus.identity.cache_clear()
    assert corpus.identity(tree / "cases")[0].local_changes == 0
    (tree / "cases" / "new.yaml").write_text("behavior: x\n")
    corpus.identity.cache_clear()
    ref, changes = corpus.identity(tree / "cases")
    assert (ref.origin, ref.base, ref.added, changes) == ("checkout", "checkout's git HEAD", 1, ("added new.yaml",))


@pytest.mark.parametrize("command", [["list", "--summary"], ["list"], ["validate"], ["run", "--dry-run"]])
def test_a_folder_without_case_files_is_a_usage_error_naming_it(command: list[str], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no case here\n")
    assert main([*command, "--cases", str(empty)]) == 2
    assert f"no case files (*.yaml) under {empty}" in capsys.readouterr().err
    assert main([*command, "--cases", str(tmp_path / "missing")]) == 2
    assert str(tmp_path / "missing") in capsys.readouterr().err


def test_the_corpus_is_named_by_every_record_and_the_manifest(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "-q", f"--cases={VALID}", "--devices=cpu", "--backends=aot_eager",
         "--modes=inference", f"--results={results}"],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    corpus.identity.cache_clear()
    expected = corpus.identity(VALID.resolve())[0].model_dump(mode="json")
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert records and all(r["fingerprint"]["corpus"] == expected for r in records)
    manifest = json.loads(results.with_name("r.manifest.json").read_text())
    assert manifest["corpus"] == expected and expected["origin"] == "folder"


def test_pytest_conformance_with_no_path_runs_the_package_s_corpus_from_an_empty_folder(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--conformance", "-p", "no:cacheprovider", "--conformance-devices=cpu",
         "--conformance-backends=aot_eager", "--conformance-modes=inference", "--conformance-results=r.jsonl",
         "-k", "data_mutation_nonleaf"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (record,) = (json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines())
    assert (record["case_id"], record["case_file"]) == (
        "mutation_epilogue/data_mutation_nonleaf", "cases/mutation_epilogue/data_mutation_nonleaf.yaml")
    assert record["fingerprint"]["corpus"]["origin"] in ("bundled", "checkout")
