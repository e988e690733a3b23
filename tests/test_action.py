"""The composite GitHub Action (action.yml): its declaration, and its scripts run as a runner runs them.

`run_action` plays the part of the runner for the action's own steps: the inputs (action.yml's
defaults unless given), each step's `env:` and `if:` evaluated from the inputs and the earlier steps'
outputs, each script run with `bash --noprofile --norc -eo pipefail` from the workspace. Two steps
are not run: the pip install (the harness under test is installed already; the step's output, the
command it found, is a fake `torch-conformance` that records its arguments and writes what the real
one writes) and the upload (an action of its own; what it would upload is returned).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).parents[1]
ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / ".github" / "workflows" / "conformance.yml"


def _action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text())


# --- the declaration ------------------------------------------------------------------------------


def test_the_action_is_composite_and_declares_every_input_and_output() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert {"python", "devices", "select", "cases", "expectations", "workers", "args", "results", "report",
            "artifact-name", "fail-on"} <= set(inputs)
    for name, spec in inputs.items():
        assert spec.get("description", "").strip(), f"input {name} has no description"
        assert "default" in spec, f"input {name} has no default"
    assert inputs["results"]["default"] == "torch-conformance/results.jsonl"
    assert inputs["report"]["default"] == "torch-conformance/report"
    assert inputs["fail-on"]["default"] == "report" and inputs["workers"]["default"] == "auto"
    assert {"results", "report", "status"} <= set(action["outputs"])
    assert action["outputs"]["status"]["value"] == "${{ steps.run.outputs.status }}"


def test_no_expression_reaches_a_script_and_torch_is_never_installed() -> None:
    steps = _action()["runs"]["steps"]
    scripts = [s for s in steps if "run" in s]
    assert len(scripts) >= 5
    for step in scripts:
        # inputs reach the shell only as environment variables: `${{ }}` in a script is code injection
        assert "${{" not in step["run"], f"step {step['id']} interpolates an expression into its script"
        assert step["shell"] == "bash"
    text = "\n".join(s["run"] for s in scripts)
    assert '-m pip install --disable-pip-version-check "$GITHUB_ACTION_PATH"' in text
    assert not re.search(r"pip install[^\n]*\btorch\b(?!-conformance)", text)
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["uses"] == "actions/upload-artifact@v4" and upload["if"].startswith("always()")


def _check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    # as tests/report/test_tooling.py lints the workflow: check-jsonschema's vendored schemas, offline
    tool = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    return subprocess.run([tool, "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_action_passes_the_github_action_schema_which_catches_a_broken_one(tmp_path: Path) -> None:
    proc = _check_jsonschema("vendor.github-actions", ACTION)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = _action()
    del broken["runs"]["steps"][0]["shell"]  # a composite run step must name its shell
    (tmp_path / "action.yml").write_text(yaml.safe_dump(broken))
    assert _check_jsonschema("vendor.github-actions", tmp_path / "action.yml").returncode != 0


def test_the_workflow_runs_the_action_after_installing_a_torch() -> None:
    # the workflow as a whole passes its schema in tests/report/test_tooling.py
    wf = yaml.safe_load(WORKFLOW.read_text())
    job = wf["jobs"]["action"]
    steps = job["steps"]
    at = next(i for i, s in enumerate(steps) if s.get("uses") == "./")
    assert any("pip install" in str(s.get("run", "")) and "torch==" in str(s.get("run", "")) for s in steps[:at])
    assert set(steps[at]["with"]) <= set(_action()["inputs"])  # every `with:` key is an input
    assert steps[at]["with"]["devices"] == "cpu" and steps[at]["with"]["select"]
    # its artifact is not one of the matrix's, which the merge job gathers by pattern
    assert not steps[at]["with"]["artifact-name"].startswith("results-")
    after = "\n".join(str(s.get("run", "")) for s in steps[at + 1:])
    assert "artifact/results.jsonl" in after and "case_id" in after and "compat.md" in after
    assert "://" not in WORKFLOW.read_text()


def test_the_workflow_s_record_check_fails_on_a_record_without_its_case(tmp_path: Path) -> None:
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["action"]["steps"]
    script = steps[-1]["run"]
    line = next(li for li in script.splitlines() if "case_id" in li and "python -c" in li)
    (tmp_path / "artifact").mkdir()
    codes = []
    bundled = {"fingerprint": {"corpus": {"origin": "bundled"}}}
    for records in ([{"case_id": "mutation_epilogue/a", **bundled}],
                    [{"case_id": "mutation_epilogue/a", **bundled}, {"case_id": "", **bundled}], [],
                    [{"case_id": "mutation_epilogue/a", "fingerprint": {"corpus": {"origin": "checkout"}}}],
                    [{"case_id": "mutation_epilogue/a"}]):
        (tmp_path / "artifact" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        codes.append(subprocess.run(["bash", "-c", line.replace("python ", f"{sys.executable} ", 1)], cwd=tmp_path,
                                    capture_output=True, timeout=60, check=False).returncode)
    assert codes == [0, 1, 1, 1, 1]



def test_the_readme_s_table_lists_every_input_with_its_default() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use it in your CI (GitHub Actions)\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([\w-]+)` \| ([^|]*) \|", section, flags=re.MULTILINE))
    inputs = _action()["inputs"]
    assert set(rows) == set(inputs)
    for name, spec in inputs.items():
        shown = rows[name].strip()
        assert shown == f"`{spec['default']}`" if spec["default"] else shown.startswith("(empty"), (name, shown)
    assert "uses: OWNER/torch-conformance@v0.1.0" in section

# --- the scripts, run as a runner runs them --------------------------------------------------------

FAKE_CLI = r'''#!{python}
"""torch-conformance as the action's steps see it: records its arguments and working folder, and
writes what `run` and `report` write; FAKE_RUN_STATUS and FAKE_REPORT_STATUS say how each ends,
FAKE_COMPAT_FILE what compat.md holds."""
import json, os, sys
from pathlib import Path

log = Path(os.environ["FAKE_LOG"])
with log.open("a") as out:
    out.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd()}}) + "\n")
if sys.argv[1] == "run":
    status = int(os.environ.get("FAKE_RUN_STATUS", "0"))
    if status not in (2, 5):  # a usage error or an empty selection writes nothing
        results = Path(sys.argv[sys.argv.index("--results") + 1])
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps({{"case_id": "mutation_epilogue/a", "status": "fail"}}) + "\n")
        results.with_name(results.stem + ".manifest.json").write_text("{{}}")
        (results.parent / "reproducers").mkdir(exist_ok=True)
        (results.parent / "reproducers" / "mutation_epilogue__a.py").write_text("import torch\n")
    sys.exit(status)
if sys.argv[1] == "report":
    folder = Path(sys.argv[sys.argv.index("-o") + 1])
    folder.mkdir(parents=True, exist_ok=True)
    given = os.environ.get("FAKE_COMPAT_FILE")
    (folder / "compat.md").write_text(Path(given).read_text() if given else "# Conformance\n\nfake report\n")
    sys.exit(int(os.environ.get("FAKE_REPORT_STATUS", "0")))
sys.exit(99)
'''

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Ran:
    """What the action did: each step's outcome, its outputs, the fake CLI's calls, the summary."""

    outcomes: dict[str, str]
    outputs: dict[str, dict[str, str]]
    calls: list[dict[str, Any]]
    summary: str
    logs: dict[str, str]
    action_outputs: dict[str, str]
    uploaded: list[str] = field(default_factory=list)

    def call(self, command: str) -> dict[str, Any]:
        return next(c for c in self.calls if c["argv"][0] == command)

    @property
    def failed(self) -> bool:
        return "failure" in self.outcomes.values()


def _value(expr: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    if m := re.fullmatch(r"inputs\.([\w-]+)", expr):
        return inputs[m[1]]
    if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
        return outputs.get(m[1], {}).get(m[2], "")
    raise AssertionError(f"the test's runner does not know the expression {expr!r}")


def _render(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    return EXPR.sub(lambda m: _value(m[1], inputs, outputs), text)


def _should_run(cond: str | None, failed: bool, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> bool:
    """The `if:` forms the action uses: none (success()), always(), and `&&` of comparisons with a literal."""
    if cond is None:
        return not failed
    result = True
    for term in (t.strip() for t in cond.split("&&")):
        if term == "always()":
            continue
        m = re.fullmatch(r"(\S+)\s*(==|!=)\s*'([^']*)'", term)
        assert m, f"the test's runner does not know the condition {term!r}"
        equal = _value(m[1], inputs, outputs) == m[3]
        result = result and (equal if m[2] == "==" else not equal)
    return result and ("always()" in cond or not failed)


def _outputs(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        assert "<<" not in line.split("=", 1)[0], "multi-line outputs are not expected"
        name, _, value = line.partition("=")
        out[name] = value
    return out


def run_action(tmp_path: Path, inputs: dict[str, str] | None = None, env: dict[str, str] | None = None) -> Ran:
    action = _action()
    given = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    for name in inputs or {}:
        assert name in given, f"no input {name}"
    given.update(inputs or {})
    workspace, temp = tmp_path / "workspace", tmp_path / "runner-temp"
    workspace.mkdir(parents=True, exist_ok=True)
    temp.mkdir(parents=True, exist_ok=True)
    fake = tmp_path / "bin" / "torch-conformance"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(FAKE_CLI.format(python=sys.executable))
    fake.chmod(0o755)
    summary, log = tmp_path / "summary.md", tmp_path / "calls.jsonl"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "TORCH_CONFORMANCE_"))}
    base.update({"GITHUB_ACTION_PATH": str(ROOT), "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(temp),
                 "FAKE_LOG": str(log), **(env or {})})
    outcomes: dict[str, str] = {}
    outputs: dict[str, dict[str, str]] = {}
    logs: dict[str, str] = {}
    uploaded: list[str] = []
    for step in action["runs"]["steps"]:
        sid = step["id"]
        if not _should_run(step.get("if"), "failure" in outcomes.values(), given, outputs):
            outcomes[sid] = "skipped"
            continue
        if "uses" in step:  # the upload: what it would take
            uploaded = [p for p in _render(step["with"]["path"], given, outputs).splitlines() if p.strip()]
            outcomes[sid] = "success"
            continue
        if sid == "install":  # pip install of this tree, which the tests' environment has; the command it finds
            outputs[sid] = {"cli": str(fake)}
            outcomes[sid] = "success"
            continue
        output = tmp_path / f"output-{sid}"
        step_env = {**base, "GITHUB_OUTPUT": str(output),
                    **{k: _render(str(v), given, outputs) for k, v in step.get("env", {}).items()}}
        script = tmp_path / f"{sid}.sh"
        script.write_text(step["run"])
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env=step_env, capture_output=True, text=True, timeout=300, check=False)
        logs[sid] = proc.stdout + proc.stderr
        outcomes[sid] = "success" if proc.returncode == 0 else "failure"
        outputs[sid] = _outputs(output)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return Ran(outcomes, outputs, calls, summary.read_text() if summary.exists() else "", logs,
               {name: _render(spec["value"], given, outputs) for name, spec in action["outputs"].items()}, uploaded)


def test_the_install_step_finds_the_command_pip_installed_for_that_python(tmp_path: Path) -> None:
    step = next(s for s in _action()["runs"]["steps"] if s["id"] == "install")
    pip = '"$PYTHON" -m pip install --disable-pip-version-check "$GITHUB_ACTION_PATH"'
    assert step["run"].count(pip) == 1
    script = step["run"].replace(pip, 'echo "pip would install $GITHUB_ACTION_PATH"')  # this tree is installed here
    (tmp_path / "torch-conformance").mkdir()
    env = {**os.environ, "PYTHON": sys.executable, "RUNNER_TEMP": str(tmp_path), "GITHUB_ACTION_PATH": str(ROOT),
           "GITHUB_OUTPUT": str(tmp_path / "out")}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _outputs(tmp_path / "out") == {"cli": str(Path(sys.executable).parent / "torch-conformance")}


def test_inputs_reach_the_command_lines_as_single_arguments(tmp_path: Path) -> None:
    ran = run_action(tmp_path, {
        "python": sys.executable,
        "devices": "cpu",
        "select": "mutation_epilogue and not (inductor or training)",
        "cases": "vendor cases",
        "expectations": "known/a.yaml, known/b.yaml\nknown/c.yaml",
        "workers": "3",
        "args": "--backends aot_eager --timeout 900 -- -x -k 'it s'",
        "results": "out/r.jsonl",
        "report": "out/html",
    })
    assert not ran.failed, ran.logs
    ws = tmp_path / "workspace"
    expectations = f"{ws}/known/a.yaml,{ws}/known/b.yaml,{ws}/known/c.yaml"
    assert ran.call("run")["argv"] == [
        "run", "-q", "--results", f"{ws}/out/r.jsonl", "-n", "3", "--devices", "cpu",
        "-k", "mutation_epilogue and not (inductor or training)", "--cases", f"{ws}/vendor cases",
        "--expectations", expectations, "--backends", "aot_eager", "--timeout", "900", "--", "-x", "-k", "it s"]
    assert ran.call("report")["argv"] == ["report", f"{ws}/out/r.jsonl", "-o", f"{ws}/out/html",
                                          "--expectations", expectations]
    assert ran.action_outputs["results"] == f"{ws}/out/r.jsonl" and ran.action_outputs["report"] == f"{ws}/out/html"
    assert ran.action_outputs["status"] == "0" and ran.action_outputs["report-status"] == "0"
    assert sorted(ran.uploaded) == sorted([f"{ws}/out/r.jsonl", f"{ws}/out/r.manifest.json", f"{ws}/out/reproducers",
                                           f"{ws}/out/html"])
    assert all(Path(p).exists() for p in ran.uploaded)
    assert "fake report" in ran.summary


def test_defaults_run_the_bundled_corpus_from_a_folder_apart_from_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "workspace" / "cases").mkdir(parents=True)  # the caller's own folder of that name
    (tmp_path / "workspace" / "torch").mkdir()  # a source tree must not stand in for the installed torch
    (tmp_path / "workspace" / "torch" / "__init__.py").write_text("raise ImportError('the source tree')\n")
    ran = run_action(tmp_path, {"python": sys.executable})
    assert not ran.failed, ran.logs
    ws = tmp_path / "workspace"
    run = ran.call("run")
    assert run["argv"] == ["run", "-q", "--results", f"{ws}/torch-conformance/results.jsonl", "-n", "auto"]
    assert not (Path(run["cwd"]) / "cases").exists() and not Path(run["cwd"]).is_relative_to(ws)
    assert ran.call("report")["argv"] == ["report", f"{ws}/torch-conformance/results.jsonl",
                                          "-o", f"{ws}/torch-conformance/report"]
    assert "testing torch" in ran.logs["check"]


@pytest.mark.parametrize(("fail_on", "report_status", "fails"), [
    ("report", "1", True), ("never", "1", False), ("report", "0", False), ("never", "3", True)])
def test_the_report_runs_after_a_failed_run_and_fail_on_decides(
        tmp_path: Path, fail_on: str, report_status: str, fails: bool) -> None:
    ran = run_action(tmp_path, {"python": sys.executable, "fail-on": fail_on},
                     {"FAKE_RUN_STATUS": "1", "FAKE_REPORT_STATUS": report_status})
    assert [c["argv"][0] for c in ran.calls] == ["run", "report"]
    assert ran.outcomes["run"] == ran.outcomes["report"] == "success"  # their statuses are outputs
    assert ran.action_outputs["status"] == "1" and ran.action_outputs["report-status"] == report_status
    assert (ran.outcomes["gate"] == "failure") is fails
    if fails and report_status == "1":
        assert "::error title=torch-conformance::the report says an item failed, errored or xpassed" in ran.logs["gate"]
    assert ran.outcomes["upload"] == "success"


@pytest.mark.parametrize(("status", "says"), [("5", "the selection matched no item"), ("2", "refused its arguments")])
def test_a_run_that_wrote_nothing_is_not_reported_and_fails_even_with_fail_on_never(
        tmp_path: Path, status: str, says: str) -> None:
    ws = tmp_path / "workspace" / "torch-conformance"
    ws.mkdir(parents=True)
    (ws / "results.jsonl").write_text('{"case_id": "old"}\n')  # an earlier run's, not this one's to report
    (ws / "results.manifest.json").write_text("{}")
    ran = run_action(tmp_path, {"python": sys.executable, "fail-on": "never"}, {"FAKE_RUN_STATUS": status})
    assert [c["argv"][0] for c in ran.calls] == ["run"]
    assert ran.outputs["run"]["ran"] == "false" and ran.action_outputs["report-status"] == ""
    assert ran.outcomes["gate"] == "failure" and says in ran.logs["gate"]
    assert "no report (run exit status: " + status in ran.summary


def test_without_torch_the_action_stops_first_and_says_what_to_do(tmp_path: Path) -> None:
    shadow = tmp_path / "no-torch"
    (shadow / "torch").mkdir(parents=True)
    (shadow / "torch" / "__init__.py").write_text("raise ImportError(\"No module named 'torch'\")\n")
    ran = run_action(tmp_path, {"python": sys.executable}, {"PYTHONPATH": str(shadow)})
    assert ran.outcomes["check"] == "failure" and ran.calls == []
    assert "::error title=torch-conformance::" in ran.logs["check"]
    assert "cannot import torch (ImportError: No module named 'torch')" in ran.logs["check"]
    assert "never installs one" in ran.logs["check"]
    assert ran.outcomes["install"] == ran.outcomes["run"] == ran.outcomes["gate"] == "skipped"
    assert ran.outcomes["upload"] == "skipped"  # nothing to upload: the path input would be empty


@pytest.mark.parametrize(("inputs", "says"), [
    ({"fail-on": "always"}, "fail-on: 'always' is not a choice: write report (the default) or never"),
    ({"python": "no-such-python-3.99"}, "python: 'no-such-python-3.99' is not found"),
    ({"args": "--backends 'aot_eager"}, "args: No closing quotation"),
])
def test_a_bad_input_is_an_error_that_names_it(tmp_path: Path, inputs: dict[str, str], says: str) -> None:
    ran = run_action(tmp_path, {"python": sys.executable, **inputs})
    assert ran.failed and ran.calls == []
    assert says in "\n".join(ran.logs.values())


def test_a_summary_over_the_limit_is_cut_at_a_line_and_says_where_the_rest_is(tmp_path: Path) -> None:
    big = "# Conformance\n" + "".join(f"| row {i} | fail |\n" for i in range(80_000))  # about 1.5 MB
    (tmp_path / "compat.md").write_text(big)
    ran = run_action(tmp_path, {"python": sys.executable, "artifact-name": "vendor-x"},
                     {"FAKE_COMPAT_FILE": str(tmp_path / "compat.md")})
    summary = ran.summary.encode()
    assert len(big.encode()) > 1_000_000 >= len(summary) - 300 and len(summary) < 1024 * 1024
    head, _, note = ran.summary.partition("\n\n**The summary stops here**")
    assert big.startswith(head) and head.endswith("| fail |\n")  # whole lines
    assert f"compat.md has {len(big.encode())} bytes" in note and "the artifact `vendor-x`" in note
    small = run_action(tmp_path / "small", {"python": sys.executable})
    assert small.summary == "# Conformance\n\nfake report\n"
