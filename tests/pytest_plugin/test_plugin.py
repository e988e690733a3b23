"""The real plugin, run by pytester on fixture case files (valid and broken).

Inner sessions run in subprocesses: pytester's in-process mode restores sys.modules after each
run, and torch cannot be imported a second time into the same process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.templates import case_text

RESOURCES = Path(__file__).parent.parent / "resources" / "cases"
BASE = ["--conformance", "--conformance-cases=cases", "-p", "no:cacheprovider", "-p", "no:logging"]



def add_case(pytester: pytest.Pytester, name: str, body: str = "    return x.sin()", extra: str = "",
             behavior: str = "runtime_wrapper", summary: str = "s") -> None:
    path = pytester.path / "cases" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    # the body is indented by 4 here, 6 under the template's "  def f(x):"
    program = "  def f(x):\n" + "\n".join(f"  {line}" for line in body.splitlines())
    path.write_text(case_text(behavior=behavior, summary=summary, program=program, extra=extra))


def run(pytester: pytest.Pytester, *args: str, base: bool = True) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*(BASE if base else []), *args, timeout=600)


def copy_fixtures(pytester: pytest.Pytester, *groups: str) -> None:
    for group in groups:
        shutil.copytree(RESOURCES / group, pytester.path / "cases" / group)


def records(pytester: pytest.Pytester) -> list[dict[str, object]]:
    path = pytester.path / "results" / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def statuses(pytester: pytest.Pytester) -> dict[tuple[str, str], str]:
    return {(str(r["case_id"]), str(r["variant"])): str(r["status"]) for r in records(pytester)}


def test_plugin_is_inert_without_the_flag(pytester: pytest.Pytester) -> None:
    copy_fixtures(pytester, "valid")
    result = run(pytester, "-p", "no:cacheprovider", "cases", base=False)
    result.assert_outcomes()
    assert not (pytester.path / "results").exists()


def test_valid_and_broken_files_one_record_per_item(pytester: pytest.Pytester) -> None:
    copy_fixtures(pytester, "valid", "broken")
    result = run(pytester, "-rA")
    # valid: mutation (cpu: inference, training) + alias (cpu and cuda: inference, training)
    # broken: three files, one error item each, while every valid item still runs
    result.assert_outcomes(passed=4, skipped=2, failed=3)
    result.stdout.fnmatch_lines([
        "*torch-conformance*torch 2.*",
        "*bad_indent.yaml:3: <yaml>: invalid YAML: mapping values are not allowed*",
        "*unknown_key.yaml:6: inputs.x.tensor.colour: unknown key 'colour'; valid keys: shape, *",
        "*wrong_type.yaml:7: inputs.x.tensor.shape[[]1[]]: Input should be a valid integer*",
        "SKIPPED [[]2[]] cases/valid/alias.yaml:1: device cuda: *",
    ])
    result.stdout.fnmatch_lines(["*slowest 9 items (seconds*", "*valid/* [[]cpu-aot_eager-*[]]  *compile *"])
    recs = records(pytester)
    assert len(recs) == 9
    by = statuses(pytester)
    assert by[("valid/mutation", "cpu-aot_eager-training")] == "pass"
    assert by[("valid/alias", "cuda-aot_eager-inference")] == "skip"
    assert by[("broken/unknown_key", "schema")] == "error"
    fp = next(r for r in recs if r["status"] == "pass")["fingerprint"]
    assert isinstance(fp, dict) and {"torch_version", "torch_git", "python", "platform", "date"} <= set(fp)


def test_ids_are_built_from_case_data_and_k_selects(pytester: pytest.Pytester) -> None:
    copy_fixtures(pytester, "valid")
    result = run(pytester, "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "cases/valid/alias.yaml::alias[[]cpu-aot_eager-inference[]]",
        "cases/valid/alias.yaml::alias[[]cuda-aot_eager-training[]]",
        "cases/valid/mutation.yaml::mutation[[]cpu-aot_eager-training[]]",
    ])
    result = run(pytester, "--collect-only", "-q", "-k", "runtime_wrapper and training and cpu")
    result.stdout.fnmatch_lines(["cases/valid/alias.yaml::alias[[]cpu-aot_eager-training[]]", "*1/6 tests collected*"])


def test_failure_message_shows_actual_vs_expected_and_how_to_rerun(pytester: pytest.Pytester) -> None:
    add_case(pytester, "runtime_wrapper/miscount.yaml", extra="expect: {compiles: 3}\n")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "FAIL runtime_wrapper/miscount [[]cpu-aot_eager-inference[]]: s",
        "  cold pass over 1 call(s): graphs compiled is 1, but expect.compiles gives 3",
        "  rerun: torch-conformance run cases/runtime_wrapper/miscount.yaml -k 'cpu-aot_eager-inference'",
    ])


def test_a_keyboard_interrupt_the_program_raises_is_its_own_error_and_the_run_goes_on(
        pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/first.yaml")
    add_case(pytester, "b/interrupt.yaml", body="    raise KeyboardInterrupt")
    add_case(pytester, "c/after.yaml")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert {k[0]: v for k, v in statuses(pytester).items()} == {"a/first": "pass", "b/interrupt": "error",
                                                                 "c/after": "pass"}
    (rec,) = [r for r in records(pytester) if r["case_id"] == "b/interrupt"]
    assert "eager raised KeyboardInterrupt" in str(rec["reason"]) and "interrupt.yaml:10" in str(rec["reason"])


def test_a_real_interrupt_stops_the_run_and_every_item_still_has_a_record(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/first.yaml")
    # a SIGINT really delivered, as Ctrl-C delivers it
    add_case(pytester, "b/interrupt.yaml", body="    import os, signal\n    os.kill(os.getpid(), signal.SIGINT)")
    add_case(pytester, "c/never.yaml")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    by = {k[0]: v for k, v in statuses(pytester).items()}
    assert by == {"a/first": "pass", "b/interrupt": "error", "c/never": "error"}
    never = next(r for r in records(pytester) if r["case_id"] == "c/never")
    assert str(never["reason"]).startswith("not run: the run was stopped")
    manifest = json.loads((pytester.path / "results" / "results.manifest.json").read_text())
    assert manifest["finished"] and manifest["exit_status"] == 2 and len(manifest["items"]) == 3


def test_hung_compile_is_an_error_for_that_item_only(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/hang.yaml", body="    import time\n    time.sleep(600)\n    return x")
    add_case(pytester, "b/fine.yaml")
    result = run(pytester, "--conformance-timeout=20")
    result.assert_outcomes(passed=1, failed=1)
    by = {k[0]: v for k, v in statuses(pytester).items()}
    assert by == {"a/hang": "error", "b/fine": "pass"}
    assert "timeout" in str(next(r for r in records(pytester) if r["case_id"] == "a/hang")["reason"]).lower()
    # the report is the record's reason, not a traceback whose frame locals pytest would repr
    result.stdout.fnmatch_lines(["a/hang [[]cpu-aot_eager-inference[]]: timeout*"])
    assert not [line for line in result.outlines if "runner.py:" in line], result.outlines


def test_crashed_worker_costs_only_its_item(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/crash.yaml", body="    import os\n    os._exit(3)")
    for name in ("b/one.yaml", "c/two.yaml"):
        add_case(pytester, name)
    result = run(pytester, "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    by = {k[0]: v for k, v in statuses(pytester).items()}
    assert by == {"a/crash": "error", "b/one": "pass", "c/two": "pass"}
    crash = next(r for r in records(pytester) if r["case_id"] == "a/crash")
    assert crash["variant"] == "cpu-aot_eager-inference"
    assert "the worker process ended while running this item" in str(crash["reason"])
    # its reproducer runs the case as the worker did, and ends as the worker ended
    script = pytester.path / str(crash["reproducer"])
    assert script.is_file(), crash
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 3, done.stdout + done.stderr


def test_xdist_gives_the_same_verdicts_as_serial(pytester: pytest.Pytester) -> None:
    copy_fixtures(pytester, "valid", "broken")
    add_case(pytester, "runtime_wrapper/miscount.yaml", extra="expect: {compiles: 3}\n")
    run(pytester)
    serial = statuses(pytester)
    run(pytester, "-n", "2")
    assert statuses(pytester) == serial
    assert set(serial.values()) == {"pass", "skip", "fail", "error"}


def test_shards_partition_the_cases_stably(pytester: pytest.Pytester) -> None:
    for i in range(6):
        add_case(pytester, f"s/case{i}.yaml")
    seen: dict[str, int] = {}
    for shard in (1, 2, 3):
        result = run(pytester, f"--conformance-shard={shard}/3", "--collect-only", "-q")
        for line in result.stdout.lines:
            if "::" in line:
                assert line not in seen, f"{line} in two shards"
                seen[line] = shard
    assert len(seen) == 6
    again = run(pytester, "--conformance-shard=2/3", "--collect-only", "-q")
    assert {ln for ln in again.stdout.lines if "::" in ln} == {k for k, v in seen.items() if v == 2}


def test_bad_shard_is_a_usage_error_naming_the_flag(pytester: pytest.Pytester) -> None:
    add_case(pytester, "s/one.yaml")
    result = run(pytester, "--conformance-shard=4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--conformance-shard '4/3': I must be between 1 and N*"])


def test_env_var_twin_sets_the_option(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_fixtures(pytester, "valid")
    monkeypatch.setenv("TORCH_CONFORMANCE_DEVICES", "cpu")
    result = run(pytester, "--collect-only", "-q")
    assert not any("cuda" in line for line in result.stdout.lines)
    result.stdout.fnmatch_lines(["*4 tests collected*"])


def test_duplicate_ids_make_the_second_file_an_error(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/one.yaml", extra="id: same\n")
    add_case(pytester, "b/two.yaml", extra="id: same\n")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*b/two.yaml:11: id: id 'same' is also used by cases/a/one.yaml*"])


def test_case_with_script_in_summary_is_plain_data(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/xss.yaml", summary="'<script>alert(1)</script>'")
    run(pytester)
    (rec,) = records(pytester)
    assert rec["summary"] == "<script>alert(1)</script>"


def test_plugin_options_are_in_one_group_with_env_twins(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help", base=False)
    text = textwrap.dedent("\n".join(result.stdout.lines))
    assert "torch-conformance: YAML conformance cases:" in text
    for name in ("cases", "devices", "backends", "modes", "shard", "results", "timeout", "strict-internals"):
        assert f"--conformance-{name}" in text
        assert f"TORCH_CONFORMANCE_{name.upper().replace('-', '_')}" in text


EXPECTATIONS = """\
version: 1
entries:
  - case: runtime_wrapper/miscount
    when: {backend: [aot_eager]}
    reason: a vendor's known failure
    link: https://github.com/pytorch/pytorch/issues/1
    covers: [{check: graphs compiled}]
  - case: "nothing/*"
    reason: matches no case
    link: https://github.com/pytorch/pytorch/issues/2
    covers: [{check: values}]
"""


def test_external_expectations_xfail_and_report_stale_entries(pytester: pytest.Pytester) -> None:
    add_case(pytester, "runtime_wrapper/miscount.yaml", extra="expect: {compiles: 3}\n")
    pytester.path.joinpath("vendor.yaml").write_text(EXPECTATIONS)
    result = run(pytester, "--conformance-expectations=vendor.yaml")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines([
        "*stale expectations*",
        "vendor.yaml:8: nothing/* matched no item of this run; retire or fix it (*issues/2)",
    ])
    (rec,) = records(pytester)
    assert rec["status"] == "xfail" and rec["known_failures"][0]["source"] == "vendor.yaml:3"  # type: ignore[index]


def test_broken_expectations_file_is_a_usage_error_with_its_line(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/one.yaml")
    pytester.path.joinpath("vendor.yaml").write_text(EXPECTATIONS.replace("reason: matches", "reasn: matches"))
    result = run(pytester, "--conformance-expectations=vendor.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*vendor.yaml:9: entries[[]1[]].reasn: unknown key 'reasn'; valid keys: when, reason, link, kind, "
         "evidence, covers, mismatch, searched, case*"]
    )


def test_the_builds_warnings_are_never_errors_even_under_filterwarnings_error(pytester: pytest.Pytester) -> None:
    # A build that warns while the cases are collected (a CUDA wheel without numpy warns on
    # `import torch`) in a project whose pytest config says filterwarnings = error.
    add_case(pytester, "a/one.yaml")
    pytester.makeini("[pytest]\nfilterwarnings = error\npythonpath = .\n")
    pytester.makepyfile(warner=(
        "import warnings\n"
        "def pytest_collect_file(file_path, parent):\n"
        "    warnings.warn('the build warns on import', UserWarning)\n"
    ))
    result = run(pytester, "-p", "warner")
    result.assert_outcomes(passed=1)
    assert statuses(pytester) == {("a/one", "cpu-aot_eager-inference"): "pass"}


def test_a_filter_value_that_selects_nothing_is_a_usage_error_under_pytest_too(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/one.yaml")
    result = run(pytester, "--conformance-backends=indcutor")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--backends indcutor: not a torch.compile backend registered on this build*"])


def test_a_failing_run_prints_no_trace_records_and_one_line_per_skip_reason(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/fails.yaml", body="    if torch.compiler.is_compiling():\n        return x + 1\n"
             "    return x")
    for name in ("b/cuda.yaml", "c/cuda.yaml"):
        add_case(pytester, name)
        path = pytester.path / "cases" / name
        path.write_text(path.read_text().replace("devices: [cpu]", "devices: [cuda]"))
    # pytest's own log capture stays on here (BASE turns it off): it must not show torch's trace records
    result = pytester.runpytest_subprocess("--conformance", "--conformance-cases=cases", "-p", "no:cacheprovider",
                                           "-rfE", timeout=600)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not [line for line in result.outlines if "torch.__trace" in line], result.outlines
    if not torch_cuda_available():
        result.stdout.fnmatch_lines(["*skipped 2 items*", "     2  device cuda: *"])
        assert not [line for line in result.outlines if line.startswith("SKIPPED")]


def torch_cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


VENDOR = '''\
import pytest
import torch._dynamo

@pytest.hookimpl
def pytest_conformance_backends(config):
    @torch._dynamo.register_backend(name="vendor_backend")
    def vendor_backend(gm, example_inputs):
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    return ["vendor_backend"]

@pytest.hookimpl
def pytest_conformance_devices(config):
    return ["meta"]

@pytest.hookimpl
def pytest_conformance_expectations(config):
    return [config.rootpath / "vendor.yaml"]
'''


def test_a_vendor_plugin_adds_backends_devices_and_expectations(pytester: pytest.Pytester) -> None:
    add_case(pytester, "a/default.yaml")
    path = pytester.path / "cases" / "a" / "default.yaml"
    path.write_text(path.read_text().replace("backends: [aot_eager]\n", "").replace("devices: [cpu]\n", ""))
    add_case(pytester, "b/pinned.yaml")  # names its devices and backends: left as declared
    pytester.makepyfile(vendor=VENDOR)
    pytester.path.joinpath("vendor.yaml").write_text(
        "version: 1\nentries:\n  - case: a/default\n    when: {backend: [inductor]}\n    reason: r\n"
        "    link: https://github.com/pytorch/pytorch/issues/1\n    covers: [{check: values}]\n")
    pytester.makeini("[pytest]\npythonpath = .\n")
    result = run(pytester, "-p", "vendor", "--conformance-devices=cpu", "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "cases/a/default.yaml::default[[]cpu-aot_eager-inference[]]",
        "cases/a/default.yaml::default[[]cpu-inductor-inference[]]",
        "cases/a/default.yaml::default[[]cpu-vendor_backend-inference[]]",
        "cases/b/pinned.yaml::pinned[[]cpu-aot_eager-inference[]]",
        "*4 tests collected*",
    ])
    all_devices = run(pytester, "-p", "vendor", "--conformance-backends=vendor_backend", "--collect-only", "-q")
    all_devices.stdout.fnmatch_lines(["*default[[]meta-vendor_backend-inference[]]*"])
    ran = run(pytester, "-p", "vendor", "--conformance-devices=cpu", "--conformance-backends=vendor_backend")
    ran.assert_outcomes(passed=1)
    stale = run(pytester, "-p", "vendor", "--conformance-devices=cpu", "--conformance-backends=aot_eager")
    stale.stdout.fnmatch_lines(["*stale expectations*", "*vendor.yaml:3: a/default matched no item of this run*"])


@pytest.mark.parametrize("quiet", [False, True])
def test_a_worker_s_exit_time_noise_is_kept_out_after_its_heap_is_frozen(quiet: bool) -> None:
    """An extension's exit-time report (nanobind's leak list, from triton) runs after the plugin's
    handler, as atexit runs handlers in reverse order; the plugin's silences it, and only it."""
    script = "\n".join([
        "import atexit, gc, sys",
        "atexit.register(lambda: sys.stderr.write('nanobind: leaked 514 functions!\\n'))",
        "print('last record sent', flush=True)",
        "gc.freeze()",
        *(["from conformance.pytest_plugin.plugin import _quiet_exit", "atexit.register(_quiet_exit)"]
          if quiet else []),
    ])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0 and done.stdout == "last record sent\n"
    assert ("leaked" in done.stderr) is not quiet, done.stderr
