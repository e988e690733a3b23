"""A NumPy array among a program's outputs is compared as a value: its dtype, shape and values (floats
within the case's tolerance, as a tensor of its dtype), never by its truth value (which raises for more
than one element); unequal arrays give a `value` mismatch showing both sides."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.checks import CHECKS, EXACT
from conformance.core.compare import compare_plain
from conformance.core.mismatch import Tolerance
from conformance.data.loader import load_case
from conformance.data.variants import variants_of
from conformance.run.runner import run_variant

np = pytest.importorskip("numpy")

CASE = """\
behavior: scalar_recompile
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
backends: [eager]
inputs: {x: {tensor: {values: [[1.0, 2.0], [3.0, 4.0]], dtype: float64}}}
program: |
  def f(x):
      n = x.numpy()
      return {"a": n + n, "b": [n[0], x + 1]}, x * 2
"""


def test_a_program_returning_a_numpy_array_in_a_dict_passes(tmp_path: Path) -> None:
    path = tmp_path / "scalar_recompile" / "c.yaml"
    path.parent.mkdir()
    path.write_text(CASE)
    lc = load_case(path, tmp_path)
    ((variant),) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == "pass", record.reason


def test_equal_arrays_agree_and_unequal_ones_name_both_sides() -> None:
    e = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert compare_plain("out[0]", e.copy(), e, EXACT) == []
    (m,) = compare_plain("out[0]", e + 1, e, EXACT)
    assert m.check == "value"
    assert m.actual == "array([[2., 3.], [4., 5.]]) (dtype float64, shape (2, 2))"
    assert m.expected == "array([[1., 2.], [3., 4.]]) (dtype float64, shape (2, 2))"
    assert "Mismatched elements: 4 / 4" in m.detail


@pytest.mark.parametrize(("actual", "expected", "detail"), [
    (np.zeros(3, dtype=np.float32), np.zeros(3), "dtype float32, but eager's is float64"),
    (np.zeros((3, 1)), np.zeros(3), "shape (3, 1), but eager's is (3,)"),
    (np.array(["a", "b"]), np.array(["a", "c"]), "element 1 is np.str_('b'), but eager's is np.str_('c')"),
    (np.array([1, None], dtype=object), np.array([1, 2], dtype=object), "element 1 is None, but eager's is 2"),
])
def test_dtype_shape_and_arrays_torch_cannot_hold_are_judged_too(actual: object, expected: object,
                                                                   detail: str) -> None:
    assert CHECKS["value"].judge(actual, expected, EXACT) == detail


def test_float_arrays_are_close_within_the_case_tolerance_and_nan_equals_nan() -> None:
    e = np.array([1.0, np.nan])
    assert CHECKS["value"].judge(e + np.array([1e-3, 0.0]), e, Tolerance(rtol=0.0, atol=1e-2)) is None
    assert CHECKS["value"].judge(e + np.array([1e-3, 0.0]), e, EXACT) is not None  # float64's defaults
    assert CHECKS["value"].judge(np.array([1, 2]), np.array([1, 3]), EXACT) is not None  # integers exactly


def test_a_reproducer_carries_the_judge_and_it_judges_arrays_as_the_core_does() -> None:
    from conformance.reproducer.short import _carry, _Script

    script = _Script()
    _carry(CHECKS["value"].judge, script)  # every helper it calls, once (no carried function recurses forever)
    namespace: dict[str, object] = {}
    exec("import math, sys\n" + "\n".join(script.helper_source()), namespace)  # the harness's own source
    judge = namespace["close_number"]
    assert callable(judge)
    e = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert judge(e.copy(), e, EXACT) is None
    assert judge(e + 1, e, EXACT) == CHECKS["value"].judge(e + 1, e, EXACT)
