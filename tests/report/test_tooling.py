"""The build-matrix tooling: nox's torch choice and report step, the CLI's --shard, the CI workflow."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import noxfile

ROOT = Path(__file__).parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "conformance.yml"


@pytest.mark.parametrize(("choice", "index", "expected"), [
    ("installed", None, None),
    ("auto", None, None),
    ("default", None, ["torch"]),
    ("stable", None, ["--upgrade", "torch"]),
    ("2.13.0", None, ["torch==2.13.0"]),
    ("2.16.0.dev20261120", None, ["torch==2.16.0.dev20261120"]),
    (">=2.12,<2.14", None, ["torch>=2.12,<2.14"]),
    ("nightly", "https://nightly.invalid/whl/", ["--pre", "--upgrade", "torch", "--index-url",
                                                 "https://nightly.invalid/whl/cpu"]),
    ("nightly-cu128", "https://nightly.invalid/whl", ["--pre", "--upgrade", "torch", "--index-url",
                                                      "https://nightly.invalid/whl/cu128"]),
])
def test_torch_choice_gives_the_pip_command(choice: str, index: str | None, expected: list[str] | None) -> None:
    assert noxfile.torch_install_args(choice, index) == expected


def test_nightly_needs_its_index_and_names_the_variable() -> None:
    with pytest.raises(noxfile.ChoiceError, match="set TORCH_CONFORMANCE_NIGHTLY_INDEX to its URL"):
        noxfile.torch_install_args("nightly-cu128", None)
    with pytest.raises(noxfile.ChoiceError, match="write auto, installed, default, stable, nightly"):
        noxfile.torch_install_args("tomorrow's", None)
    for not_pep440 in ("2.x", "2.13.0-", "=>2.12", ""):
        with pytest.raises(noxfile.ChoiceError, match="is not a torch choice"):
            noxfile.torch_install_args(not_pep440, None)


def test_the_noxfile_names_no_package_host() -> None:
    text = (ROOT / "noxfile.py").read_text()
    assert "download.pytorch" not in text and "pypi.org" not in text and "://" not in text


def test_torch_flag_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(noxfile.TORCH_ENV, raising=False)
    assert noxfile.split_torch_arg(["-k", "x"]) == ("auto", ["-k", "x"])
    assert noxfile.split_torch_arg(["--torch", "nightly", "-n", "2"]) == ("nightly", ["-n", "2"])
    monkeypatch.setenv(noxfile.TORCH_ENV, "2.14.1")
    assert noxfile.split_torch_arg(["--devices", "cpu"]) == ("2.14.1", ["--devices", "cpu"])
    assert noxfile.split_torch_arg(["--torch=stable"])[0] == "stable"  # the flag wins over the env


def test_conformance_session_reports_on_the_run_s_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Your report goes to results/report/ (git ignores results/), apart from the published ones in reports/."""
    monkeypatch.delenv("TORCH_CONFORMANCE_RESULTS", raising=False)
    assert noxfile.report_args(["-n", "auto"]) == [
        "report", "results/results.jsonl", "-o", "results/report", "--exit-zero"]
    assert noxfile.report_args(["--results", "r/a.jsonl", "--expectations=v.yaml"]) == [
        "report", "r/a.jsonl", "-o", "results/report", "--exit-zero", "--expectations", "v.yaml"]
    monkeypatch.setenv("TORCH_CONFORMANCE_RESULTS", "env.jsonl")
    assert noxfile.report_args([])[1] == "env.jsonl"
    assert "/results/" in (ROOT / ".gitignore").read_text().splitlines()


class _Quit(Exception):
    pass


class _Recorder:
    """A nox session that records what a session function asks of it; `error` ends it, as nox's does."""

    def __init__(self, name: str, posargs: list[str]) -> None:
        self.name, self.posargs = name, posargs
        self.calls: list[tuple[str, ...]] = []
        self.bin_dir: str | None = None

    @property
    def bin(self) -> str:
        if self.bin_dir is None:
            raise ValueError("The environment does not have a bin directory.")  # nox --no-venv
        return self.bin_dir

    def install(self, *args: str) -> None:
        self.calls.append(("install", *args))

    def run(self, *args: str, **kwargs: object) -> None:
        self.calls.append(("run", *args))

    def log(self, message: str) -> None:
        pass

    def error(self, *args: object) -> None:
        raise _Quit(" ".join(map(str, args)))


TORCH_SESSIONS = ["conformance", "matrix", "tests", "selftest", "explore", "bench", "typecheck"]


@pytest.mark.parametrize("name", TORCH_SESSIONS)
@pytest.mark.parametrize(("posargs", "says"), [
    (["--torch", "bogus"], "--torch 'bogus' is not a torch choice: write auto, installed, default, stable, "
                           "nightly[-VARIANT], a version (2.13.0) or a specifier (>=2.12,<2.14)"),
    (["--torch=2.x", "-k", "x"], "--torch '2.x' is not a torch choice: write auto, installed"),
    (["--torch", "nightly"], "--torch nightly needs the nightly index: set TORCH_CONFORMANCE_NIGHTLY_INDEX"),
    (["--torch"], "--torch needs a value: auto, installed, default, stable, nightly[-VARIANT]"),
])
def test_a_bad_torch_choice_is_a_usage_error_before_anything_is_installed(
        name: str, posargs: list[str], says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(noxfile.NIGHTLY_ENV, raising=False)
    monkeypatch.delenv(noxfile.TORCH_ENV, raising=False)
    session = _Recorder(name, posargs)
    with pytest.raises(_Quit) as quit_:
        getattr(noxfile, name)(session)
    assert says in str(quit_.value) and "\n" not in str(quit_.value)
    assert session.calls == []


def test_a_bad_choice_from_the_environment_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(noxfile.TORCH_ENV, "tomorrow")
    session = _Recorder("tests", ["-k", "x"])
    with pytest.raises(_Quit, match=r"'tomorrow' is not a torch choice: .* \(the choice came from "
                                    r"TORCH_CONFORMANCE_TORCH\)"):
        noxfile.tests(session)
    assert session.calls == []


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_the_torch_choices_and_the_run_s_options_and_installs_nothing(
        flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    session = _Recorder("conformance", ["--torch", "bogus", flag])  # help first, as argparse does
    noxfile.conformance(session)
    shown = capsys.readouterr().out
    assert shown.startswith("usage: nox -s conformance -- [--torch CHOICE]")
    for word in ("--torch CHOICE", "auto", "installed", "default", "stable", "nightly-VARIANT", "2.13.0",
                 noxfile.TORCH_ENV, noxfile.PYTHON_ENV, noxfile.CPU_INDEX_ENV, noxfile.NIGHTLY_ENV,
                 "usage: torch-conformance run", "--devices LIST", "results/report/"):
        assert word in shown, word
    assert session.calls == []  # the Python running the tests imports the package: nothing to install


def test_help_without_the_package_installs_it_and_never_torch(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Where the Python running nox cannot import the package (a fresh `pip install nox`), the session's
    environment gets the package, not torch, and prints the help."""
    monkeypatch.setattr(noxfile.sys, "executable", "/nonexistent/python")
    session = _Recorder("selftest", ["--help"])
    noxfile.selftest(session)
    assert session.calls == [("install", "-e", "."), ("run", "python", "-m", "conformance", "selftest", "--help")]
    assert noxfile.CPU_INDEX_ENV in capsys.readouterr().out


def test_help_is_asked_only_before_the_arguments_that_go_to_pytest() -> None:
    assert noxfile.wants_help(["-k", "x", "-h"]) and noxfile.wants_help(["--help", "--", "-x"])
    assert not noxfile.wants_help(["-k", "x", "--", "--help"])
    assert not noxfile.wants_help(["--torch", "2.13.0", "-k", "help"])


def _nox(*args: str) -> subprocess.CompletedProcess[str]:
    """nox on this noxfile in this Python, without environments of its own (nothing installed)."""
    return subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--no-venv", *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)


def test_through_nox_help_is_quick_and_a_bad_choice_is_one_line() -> None:
    done = _nox("-s", "conformance", "--", "--help")
    assert done.returncode == 0, done.stderr
    assert "--torch CHOICE" in done.stdout and "usage: torch-conformance run" in done.stdout
    assert "selected no item" not in done.stdout + done.stderr
    done = _nox("-s", "conformance", "--", "--torch", "bogus")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert "Session conformance aborted: --torch 'bogus' is not a torch choice: write auto," in done.stderr


def test_nox_list_shows_each_session_s_description_as_a_whole_sentence() -> None:
    """`nox -l` shows a docstring's first line only: it must be a sentence of its own."""
    import nox

    sessions = {name: func for name, func in nox.registry.get().items() if func.__module__ == "noxfile"}
    assert set(TORCH_SESSIONS) | {"report", "lint"} <= set(sessions)
    for name, func in sessions.items():
        first = (func.__doc__ or "").strip().split("\n")[0]  # as nox's Session.description reads it
        assert first.endswith(".") and first[0].isupper(), f"{name}: {first!r}"
        assert first.count("`") % 2 == 0 and first.count("(") == first.count(")"), f"{name}: {first!r}"
        assert len(first) <= 110, f"{name}: {len(first)} characters"


def test_shard_through_the_cli_partitions_stably(tmp_path: Path) -> None:
    cases = tmp_path / "cases" / "runtime_wrapper"
    cases.mkdir(parents=True)
    for i in range(8):
        (cases / f"c{i}.yaml").write_text(
            "behavior: runtime_wrapper\nsummary: s\nupstream: [https://github.com/pytorch/pytorch/pull/1]\n"
            "devices: [cpu]\nbackends: [aot_eager]\ninputs:\n  x: {tensor: {shape: [2]}}\n"
            "program: |\n  def f(x):\n      return x + 1\n")

    def start(shard: str, results: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "conformance", "run", "--cases", "cases", "--shard", shard,
                                 "--results", results, "--", "--collect-only", "-q", "-p", "no:logging"],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    procs = [start("1/2", "a.jsonl"), start("2/2", "b.jsonl"), start("2/2", "c.jsonl")]
    one, two, again = ({line for line in p.communicate(timeout=300)[0].splitlines() if "::" in line} for p in procs)
    assert len(one | two) == 8 and not one & two and one and two
    assert again == two  # a case always lands in the same shard


def test_workflow_passes_the_github_workflow_schema() -> None:
    tool = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    proc = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_runs_the_matrix_and_gates_on_the_merged_report() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    run, merge_job = wf["jobs"]["run"], wf["jobs"]["merge"]
    matrix = run["strategy"]["matrix"]
    assert set(matrix["device"]) == {"cpu", "cuda"} and len(matrix["shard"]) >= 2
    # the builds are derived from the index, not written here
    assert matrix["torch"] == "${{ fromJSON(needs.releases.outputs.torch) }}" and run["needs"] == "releases"
    assert "scripts/torch_releases.py" in "\n".join(str(s.get("run", "")) for s in wf["jobs"]["releases"]["steps"])
    gpu = next(i for i in matrix["include"] if i.get("device") == "cuda" and "runner" in i)
    assert "gpu" in gpu["runner"]
    steps = "\n".join(str(s.get("run", "")) for s in run["steps"])
    assert "nox -s conformance" in steps and "--shard ${{ matrix.shard }}/${{ env.SHARDS }}" in steps
    assert "-n auto" in steps
    assert any(s.get("uses", "").startswith("actions/upload-artifact") and s.get("if") == "always()"
               for s in run["steps"])
    assert merge_job["needs"] == "run" and merge_job["if"] == "always()"
    merged = "\n".join(str(s.get("run", "")) for s in merge_job["steps"])
    assert "python -m conformance.report artifacts/ -o reports" in merged
    assert "python -m conformance.report diff baseline/compat.json reports/compat.json" in merged
    gate = merge_job["steps"][-1]
    assert "steps.report.outcome != 'success'" in gate["if"] and "exit 1" in gate["run"]
    assert "://" not in WORKFLOW.read_text()  # no package host: the nightly index is a repository variable


def test_workflow_explores_in_shards_merges_them_and_fails_on_a_finding_of_the_control(tmp_path: Path) -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    explore, merged = wf["jobs"]["explore"], wf["jobs"]["explore-merge"]
    rows = explore["strategy"]["matrix"]["include"]
    shards = [r for r in rows if "--shard" in r["args"]]
    assert {r["args"].split("--shard ")[1] for r in shards} == {"1/2", "2/2"}
    assert any("--backends none" in r["args"] for r in rows)
    steps = "\n".join(str(s.get("run", "")) for s in explore["steps"])
    assert "nox -s explore -- --seed 0 --time-budget 60" in steps
    assert merged["needs"] == "explore" and "--merge artifacts/shard-1 artifacts/shard-2" in str(merged["steps"])
    gate = next(s for s in explore["steps"] if s.get("if") == "matrix.dir == 'control'")
    folder = tmp_path / "results" / "explore" / "control"
    folder.mkdir(parents=True)
    codes = []
    for found in ([], [{"signature": "x"}]):
        (folder / "findings.json").write_text(json.dumps({"findings": found, "crashes": []}))
        codes.append(subprocess.run(["bash", "-c", gate["run"].replace("python ", f"{sys.executable} ", 1)],
                                    cwd=tmp_path, capture_output=True, timeout=60, check=False).returncode)
    assert codes == [0, 1]


def test_the_matrix_takes_a_list_of_builds_and_refuses_a_bad_one_before_installing() -> None:
    assert noxfile.matrix_choices("2.10.0,2.15.0") == ["2.10.0", "2.15.0"]
    with pytest.raises(noxfile.ChoiceError, match="tomorrow"):
        noxfile.matrix_choices("2.13.0,tomorrow's")


def _matrix_build(tmp_path: Path, *, finished: bool = True) -> tuple[Path, Path]:
    """A cases folder of two files and a build's results covering both, as `run` writes them."""
    import hashlib
    import json
    import os

    cases = tmp_path / "cases"
    (cases / "mutation_epilogue").mkdir(parents=True)
    records = []
    for name in ("a", "b"):
        case = cases / "mutation_epilogue" / f"{name}.yaml"
        case.write_text(f"id: mutation_epilogue/{name}\n")
        os.utime(case, (1_700_000_000, 1_700_000_000))  # older than the run
        records.append({"case_id": f"mutation_epilogue/{name}", "variant": "cpu-aot_eager-inference",
                        "case_file": f"cases/mutation_epilogue/{name}.yaml",
                        "case_sha256": hashlib.sha256(case.read_bytes()).hexdigest()})
    (cases / "UPSTREAM.yaml").write_text("files: []\n")
    results = tmp_path / "results" / "results.jsonl"
    results.parent.mkdir()
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    manifest = {"started": "2024-01-01T00:00:00+00:00", "finished": "2024-01-01T00:09:00+00:00" if finished else None,
                "items": [{"case_id": r["case_id"], "variant": r["variant"]} for r in records]}
    (results.parent / "results.manifest.json").write_text(json.dumps(manifest))
    return results, cases


def test_resume_keeps_a_build_only_while_its_results_match_every_case_file(tmp_path: Path) -> None:
    results, cases = _matrix_build(tmp_path)
    assert noxfile.results_current(results, cases)
    (cases / "mutation_epilogue" / "a.yaml").write_text("id: mutation_epilogue/a\n# edited\n")
    assert not noxfile.results_current(results, cases)  # a case changed since it ran


def test_resume_reruns_a_build_with_a_new_case_or_an_unfinished_run(tmp_path: Path) -> None:
    results, cases = _matrix_build(tmp_path)
    old = cases / "mutation_epilogue" / "old_cuda_only.yaml"  # there before the run, not selected by it
    old.write_text("id: mutation_epilogue/old_cuda_only\n")
    import os

    os.utime(old, (1_700_000_000, 1_700_000_000))
    assert noxfile.results_current(results, cases)
    (cases / "mutation_epilogue" / "new.yaml").write_text("id: mutation_epilogue/new\n")
    assert not noxfile.results_current(results, cases)
    unfinished, cases2 = _matrix_build(tmp_path / "cut", finished=False)
    assert not noxfile.results_current(unfinished, cases2)
    for garbage in ("[]", '{"items": "x", "finished": "y"}', "{", '{"items": [], "finished": "y"}'):
        results.with_name("results.manifest.json").write_text(garbage)  # no crash, never kept
        assert not noxfile.results_current(results, cases)
    results.with_name("results.manifest.json").unlink()
    assert not noxfile.results_current(results, cases)


NIGHTLY = "2.16.0.dev20261124+cpu"


def _folder_index(root: Path) -> Path:
    """A package index that is a folder (`<index>/<variant>/torch/<wheel>`), holding a wheel named
    and tagged like a nightly CPU build; importing it gives its version and nothing else."""
    import zipfile

    folder = root / "index" / "cpu" / "torch"
    folder.mkdir(parents=True)
    dist = f"torch-{NIGHTLY}.dist-info"
    files = {
        "torch/__init__.py": f"__version__ = {NIGHTLY!r}\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {NIGHTLY}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: torch-conformance-test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
    }
    files[f"{dist}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{dist}/RECORD"])
    wheel = f"torch-{NIGHTLY}-py3-none-any.whl"
    with zipfile.ZipFile(folder / wheel, "w") as whl:
        for name, text in files.items():
            whl.writestr(name, text)
    (folder / "index.html").write_text(f'<html><body><a href="{wheel}">{wheel}</a></body></html>\n')  # PEP 503
    return root / "index"


class _Session:
    """What the noxfile's environment helpers use of a nox session."""

    def log(self, message: str) -> None:
        pass

    def run(self, *args: str, external: bool = False) -> None:
        subprocess.run(list(args), check=True, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_nightly_choice_installs_from_the_configured_index_into_its_own_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _folder_index(tmp_path)
    monkeypatch.setattr(noxfile, "TORCH_ENVS", tmp_path / "envs")
    # only the configured nightly index: the machine's own indexes and wheel folders left out
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "no-pip.conf"))
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    args = noxfile.torch_install_args("nightly", index.as_uri())
    assert args is not None and args[-1] == f"{index.as_uri()}/cpu"
    site = noxfile._torch_env(_Session(), "nightly", args)  # the step every session runs for its torch
    env = noxfile.torch_env_dir("nightly")
    assert env == tmp_path / "envs" / "nightly" and Path(site).is_relative_to(env)
    version = subprocess.run([str(env / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == NIGHTLY
    # the nightly's results go beside the releases' and it sorts after the release it precedes
    from conformance.versions import torch_release

    assert str(torch_release(version)) == "2.16.0"


def test_one_version_order_everywhere_whatever_the_local_tag() -> None:
    """The report's builds, the bench's releases and the history read a version one way: 2.12.1+cu130
    comes before 2.13.0+cpu, a nightly before its release, a wheel variant never decides."""
    from conformance.versions import version_key

    versions = ["2.13.0+cpu", "2.12.1+cu130@7269437", "2.16.0.dev20261120+cpu", "2.16.0", "2.13.0+cu130", "junk"]
    ordered = sorted(versions, key=lambda v: (version_key(v), v))
    assert ordered == ["2.12.1+cu130@7269437", "2.13.0+cpu", "2.13.0+cu130", "2.16.0.dev20261120+cpu", "2.16.0", "junk"]
    assert version_key("2.13.0+cpu") == version_key("2.13.0+cu130")
