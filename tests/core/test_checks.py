"""Every check's judge shown to fail: for each declared check, a pair of observations it must
call the same and a pair it must call different (the table must cover every check)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from conformance.core.checks import CHECKS, EXACT, About
from conformance.core.mismatch import Tolerance

NAN = float("nan")
T = torch.tensor([1.0, 2.0, NAN])
ERR = RuntimeError("boom")

# check id: ((compiled, eager) that agree, (compiled, eager) that differ)
PAIRS: dict[str, tuple[tuple[Any, Any], tuple[Any, Any]]] = {
    "type": (("torch.Tensor", "torch.Tensor"), ("torch.Tensor", "TwoTensor")),
    "dtype": (("torch.float32", "torch.float32"), ("torch.float32", "torch.float64")),
    "device": (("cpu", "cpu"), ("cuda:0", "cpu")),
    "layout": (("torch.strided", "torch.strided"), ("torch.sparse_coo", "torch.strided")),
    "conjugate bit": ((True, True), (False, True)),
    "negative bit": ((False, False), (False, True)),
    "inference tensor": ((True, True), (False, True)),
    "shape": (((2, 3), (2, 3)), ((3, 2), (2, 3))),
    "stride": (((3, 1), (3, 1)), ((1, 2), (3, 1))),
    "stride (every dim)": (((4, 1), (4, 1)), ((4, 4), (4, 1))),
    "storage_offset": ((0, 0), (1, 0)),
    "requires_grad": ((True, True), (False, True)),
    "is_leaf": ((False, False), (True, False)),
    "retains_grad": ((True, True), (False, True)),
    "values": ((T, T.clone()), (T, torch.tensor([1.0, 2.5, NAN]))),
    "storage size": (((6,), (6,)), ((8,), (6,))),
    "storage contents": ((T, T + 0), (T, torch.tensor([1.0, 2.0, 3.0]))),
    "inner tensors": ((["a", "b"], ["a", "b"]), (["a"], ["a", "b"])),
    "value": ((0.1 + 0.2, 0.3), (0.31, 0.3)),
    "_version moved": ((3, 1), (0, 1)),
    "_version delta": ((1, 1), (2, 1)),
    "storage swapped (set_)": ((False, False), (True, False)),
    "shares storage with": ((["y"], ["y"]), ([], ["y"])),
    "is the input object": ((None, None), ("x", None)),
    "view of (_base)": (("<intermediate>", "x"), (None, "x")),
    "exists": ((True, True), (False, True)),
    ".grad": ((True, True), (False, True)),
    "grad mode": ((True, True), (False, True)),
    "inference mode": ((False, False), (True, False)),
    "autocast": (((False, False), (False, False)), ((True, False), (False, False))),
    "dispatch keys": (((("BackendSelect",), ()), (("BackendSelect",), ())),
                      ((("BackendSelect", "Python"), ()), (("BackendSelect",), ()))),
    "structure": (("tuple(*, *)", "tuple(*, *)"), ("list(*, *)", "tuple(*, *)")),
    "number of outputs": ((2, 2), (1, 2)),
    "exception": ((ERR, ValueError("other words")), (ERR, None)),
    "in-place write through outputs": ((["out[0]: ok"], ["out[0]: ok"]), (["out[0]: raises"], ["out[0]: ok"])),
    "graphs compiled": ((2, 2), (3, 2)),
    "internals probe": (("conforms", "conforms"), ("diverges", "conforms")),
}


def test_the_table_covers_every_declared_check() -> None:
    assert set(PAIRS) == set(CHECKS)


@pytest.mark.parametrize("check_id", sorted(PAIRS))
def test_each_judge_agrees_on_the_same_and_finds_the_difference(check_id: str) -> None:
    (a, e), (da, de) = PAIRS[check_id]
    check = CHECKS[check_id]
    assert check.judged("out[0]", a, e) is None
    found = check.judged("out[0]", da, de, of=About("output", "out[0]"))
    assert found is not None and found.check == check_id and (found.role, found.subject) == ("output", "out[0]")


def test_values_are_judged_within_the_case_tolerance_and_say_how_they_differ() -> None:
    a, e = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.05])
    found = CHECKS["values"].judged("out[0]", a, e, EXACT)
    assert found is not None and "Mismatched elements: 1 / 2" in found.detail
    assert CHECKS["values"].judged("out[0]", a, e, Tolerance(rtol=0.0, atol=0.1)) is None
    assert CHECKS["value"].judged("out[0]", 1.0, 1.05, Tolerance(rtol=0.0, atol=0.1)) is None


def test_strides_are_compared_only_where_a_dim_is_longer_than_one() -> None:
    """A size-1 dim's stride reaches one element whatever it is (#116433): no layout, no verdict;
    a stride of a longer dim is one. The reproducer's observation is the same function."""
    from conformance.core.checks import significant_strides
    from conformance.core.compare import compare_state
    from conformance.core.state import tensor_state

    base = torch.arange(8.0).reshape(1, 2, 4)
    same_layout = torch.empty_strided((1, 2, 4), (4, 4, 1)).copy_(base)  # eager's is (8, 4, 1)
    assert compare_state("out[0]", tensor_state(same_layout), tensor_state(base), EXACT, storage=False) == []
    transposed = torch.arange(8.0).reshape(4, 2).t().unsqueeze(0)  # (1, 2, 4) laid out column-major
    (m,) = compare_state("out[0]", tensor_state(transposed), tensor_state(base), EXACT, storage=False)
    assert (m.check, m.actual, m.expected) == ("stride", "(None, 1, 2)", "(None, 4, 1)")
    assert significant_strides((0, 3), (3, 1)) == () and significant_strides((2, 3), "error") == "error"


def test_a_jagged_dim_compares_by_its_form_and_its_lengths_by_the_offsets() -> None:
    """Eager and compiled each make their own nested int (j1, j2) for one jagged shape; the number
    is a process-wide counter, so it is dropped, and the ragged lengths are compared as offsets."""
    from conformance.core.checks import dims, significant_strides
    from conformance.core.compare import compare_plain, compare_state
    from conformance.core.state import tensor_state

    def njt(lengths: list[int]) -> torch.Tensor:
        values = torch.arange(sum(lengths) * 5, dtype=torch.float64).reshape(-1, 5)
        offsets = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()])
        return torch.nested.nested_tensor_from_jagged(values, offsets)

    a, b = njt([2, 3, 4]), njt([2, 3, 4])
    assert str(a.shape[1]) != str(b.shape[1])  # two nested ints, as eager and compiled make
    assert dims(a.shape) == (3, "j", 5) and dims(a.stride()) == ("5*j", 5, 1)
    assert significant_strides(dims(a.shape), dims(a.stride())) == ("5*j", 5, 1)
    assert compare_state("out", tensor_state(a), tensor_state(b), Tolerance()) == []
    assert compare_plain("out[1]", a.shape[1], b.shape[1], Tolerance()) == []
    other = compare_state("out", tensor_state(njt([3, 2, 4])), tensor_state(a), Tolerance())
    assert [(m.check, m.where) for m in other] == [("values", "out._offsets")]
    assert dims((2, 3)) == (2, 3)


def test_a_tensor_whose_storage_was_resized_away_is_unreadable_not_a_crash() -> None:
    """resize_storage_bytes_(x, 0) (FSDP's way of freeing a parameter) leaves x's geometry over an
    empty storage: reading its values would read past the end of memory (a segfault, not an error)."""
    from conformance.core.compare import compare_state
    from conformance.core.state import fits_storage, tensor_state
    from reference_impl.observe import snapshot

    freed = torch.arange(8.0)
    freed.untyped_storage().resize_(0)
    assert not fits_storage(freed) and fits_storage(torch.arange(8.0)) and fits_storage(torch.empty(0))
    state = tensor_state(freed)
    assert state.values is None and state.storage_values is not None and state.storage_values.numel() == 0
    (m,) = compare_state("x", state, tensor_state(torch.arange(8.0)), Tolerance(), storage=False)
    assert (m.check, m.expected, m.actual) == ("values", "readable", "unreadable")
    assert snapshot(freed).values[0].numel() == 0
    grown = torch.empty(0)
    grown.untyped_storage().resize_(32)  # storage back, geometry still empty: readable
    assert fits_storage(grown)


def test_values_that_are_identical_skip_assert_close_and_nothing_else_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """close()'s shortcut for equal tensors can only say "same" where assert_close would: a different
    dtype, one differing element, NaN and a subclass all still go to assert_close."""
    from torch.testing._internal.two_tensor import TwoTensor

    from conformance.core.checks import close

    calls: list[int] = []
    real = torch.testing.assert_close

    def counted(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        real(*args, **kwargs)

    monkeypatch.setattr(torch.testing, "assert_close", counted)
    x = torch.arange(1000, dtype=torch.float32)
    assert close(x, x.clone(), EXACT) is None and calls == []  # the shortcut
    assert close(torch.tensor([0.0]), torch.tensor([-0.0]), EXACT) is None and calls == []
    y = x.clone()
    y[-1] += 1
    assert close(y, x, EXACT) is not None and len(calls) == 1
    assert close(x, x.double(), EXACT) is not None and len(calls) == 2  # equal values, another dtype
    assert close(x[:999], x, EXACT) is not None and len(calls) == 3  # another shape
    assert close(T, T.clone(), EXACT) is None and len(calls) == 4  # NaN: assert_close's equal_nan decides
    assert close(TwoTensor(x, x), TwoTensor(x, x.clone()), EXACT) is None and len(calls) == 5
