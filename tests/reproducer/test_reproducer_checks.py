"""A short reproducer compares every check the harness applies to its program, with the core's own
judges and allowances carried as their source, not only the check of the record's first mismatch:
one that says MATCHES on a build where another check fails cannot be trusted there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from conformance.core import checks
from conformance.core.checks import CHECKS
from conformance.data.loader import load_all
from conformance.data.variants import variants_of
from conformance.reproducer import carried
from conformance.reproducer.short import _plain, render_short
from conformance.results import ResultRecord

ROOT = Path(__file__).parents[2]
CORPUS = {c.id: c for c in load_all([ROOT / "cases"], ROOT / "cases")[0]}
CASE = "mutation_epilogue/explored/data_assign_after_mutation_grad"
# what 2.15.0 recorded for it: the version counter only (2.13.0 also halves the leaf's gradient)
VERSION: dict[str, object] = {"check": "_version moved", "where": "input a", "path": "input a", "role": "input",
                              "subject": "a", "expected": "True (delta 1)", "actual": "False (delta 0)"}


def _script(case_id: str, backend: str, mode: str, *mismatches: dict[str, object]) -> str:
    lc = CORPUS[case_id]
    variant = variants_of(lc.case, devices=["cpu"], backends=[backend], modes=[mode])[0]
    rec = ResultRecord.model_validate({"case_id": lc.id, "variant": variant.label, "status": "xfail",
                                       "mismatches": list(mismatches)})
    text = render_short(lc, variant, rec)
    assert text is not None
    compile(text, "repro.py", "exec")
    return text


def test_the_script_reads_every_check_not_only_the_recorded_one() -> None:
    text = _script(CASE, "inductor", "training", VERSION)
    assert "'_version moved': a._version - version_before['a']" in text, text
    grad = next(line for line in text.splitlines() if "seen['grad of a.leaf']" in line)
    assert "'.grad'" in grad and ("a_leaf.grad, 'type', 'dtype', 'device', 'layout', 'conjugate bit', 'negative bit', "
                                   "'inference tensor', 'shape', 'values'") in grad, grad
    for where in ("'out[0]'", "'outputs'", "'after the call'", "'backward'", "'call'"):
        assert f"seen[{where}]" in text, (where, text)


def test_the_script_judges_with_the_cores_functions_and_reads_as_the_checks_declare() -> None:
    text = _script(CASE, "inductor", "training", VERSION)
    for judge in (checks.close, checks.moved, checks.same_base, checks.equal, checks.one_raised):
        assert _plain(judge) in text, judge.__name__
    assert f"    'stride': lambda t: {CHECKS['stride'].observe}," in text
    assert "'values': close" in text and "'_version moved': moved" in text and "'view of (_base)': same_base" in text


def _accepts_list_for_tuple(actual: str, expected: str) -> bool:
    return actual == "list" + expected.removeprefix("tuple")


def test_a_difference_the_cores_allowance_accepts_is_no_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    allowance = SimpleNamespace(check=checks.C.STRUCTURE, entry=lambda backend: backend.startswith("aot_function"),
                                accepts=_accepts_list_for_tuple)
    monkeypatch.setattr(checks, "ALLOWANCES", (allowance,), raising=False)
    case = "mutation_epilogue/meta_transpose_aot_function"
    text = _script(case, "aot_function", "inference")
    assert "ALLOWED = {'structure': (_accepts_list_for_tuple,)}" in text and "SHOW = {'structure': str}" in text
    assert _plain(_accepts_list_for_tuple) in text
    assert "ALLOWED, SHOW = {}, {}" in _script(CASE, "inductor", "training", VERSION)  # not that entry point's
    # the carried judge, as the script runs it
    monkeypatch.setattr(carried, "JUDGES", {"structure": checks.equal})
    monkeypatch.setattr(carried, "ALLOWED", {"structure": (_accepts_list_for_tuple,)})
    monkeypatch.setattr(carried, "SHOW", {"structure": str})
    assert carried.judged("structure", "list(*, *)", "tuple(*, *)") is None
    assert carried.judged("structure", "list(*)", "tuple(*, *)") == ""


def test_an_output_compiled_lacks_is_one_mismatch_not_a_crash(capsys: pytest.CaptureFixture[str]) -> None:
    eager: list[dict[str, dict[str, Any]]] = [
        {"call": {"exception": None}, "out[1]": {"dtype": "torch.float32", "values": 1}}]
    outs = [torch.zeros(1)]  # the one output compiled returned
    compiled = [{"call": {"exception": None}, "out[1]": carried.observed(lambda: {"dtype": outs[1].dtype})}]
    judges = {"exception": checks.one_raised, "dtype": checks.equal, "values": checks.equal}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(carried, "JUDGES", judges)
        assert carried.differences(eager, compiled) == 1
    assert "MISMATCH: out[1]: compiled has none (IndexError: list index out of range), but eager does" in (
        capsys.readouterr().out)


def test_the_published_case_says_mismatch_on_this_build(tmp_path: Path) -> None:
    """The reviewer's item: its 2.15.0 script checked `_version` only and said MATCHES on 2.13.0, where
    the harness records a known failure (the leaf's gradient is half of eager's)."""
    path = tmp_path / "repro.py"
    path.write_text(_script(CASE, "inductor", "training", VERSION))
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "MISMATCH: grad of a.leaf: values is " in proc.stdout, proc.stdout


def test_a_reproducer_prints_the_innermost_exception_whole() -> None:
    from conformance.reproducer.carried import raised

    try:
        try:
            raise AssertionError("Node mul_3 was invalid, but is output\nsecond line")
        except AssertionError as inner:
            raise RuntimeError("backend='inductor' raised:") from inner
    except RuntimeError as exc:
        text = raised(exc)
    assert text == ("RuntimeError: backend='inductor' raised: (caused by AssertionError: Node mul_3 was invalid, "
                    "but is output\nsecond line)")


def test_the_script_reads_the_type_of_a_non_tensor_output_as_the_harness_judges_it() -> None:
    """A NumPy scalar that comes back as a 0-d array (pytorch/pytorch#141258): the harness fails the item
    on the output's type; the script must too (it said MATCHES when it read the value alone)."""
    text = _script("scalar_recompile/upstream/numpy_int_sweep_no_recompile", "aot_eager", "inference")
    line = next(line for line in text.splitlines() if "seen['out[1]']" in line)
    assert "'type'" in line and "'value'" in line, line
