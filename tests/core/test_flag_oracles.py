"""The checks on a tensor's bits and flags (layout, conjugate and negative bits, inference tensor,
retains_grad) and on the thread's dispatch keys after the call.

Bits and flags: each passes on the real build and fails on a build that changes that one property
of an output (and what follows from it: an inference tensor refuses the write-through, a
sparse or resolved copy has other strides)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any

import pytest
import torch

from conformance.core.state import dispatch_keys
from conformance.data.variants import Variant
from conformance.run.extensions import Compiled
from conformance.run.runner import RunOptions, run_variant
from conformance.selftest.faults import contract_fault
from tests.helpers.cases import CaseFactory

HEAD = """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager]
"""

COMPLEX = HEAD + """\
inputs:
  x: {tensor: {shape: [4], dtype: complex64}}
program: |
  def f(x):
      return (x + 1).conj(), (x * 3).conj().imag, x * 2
"""

PLAIN = HEAD + """\
inputs:
  x: {tensor: {shape: [4], requires_grad: true}}
program: |
  def f(x):
      return x * 2, x.sin()
modes: [inference, training]
"""


def outputs_changed(change: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[Compiled], Compiled]:
    """A build that returns `change(output)` for every tensor output."""
    def wrap(compiled: Compiled) -> Compiled:
        @functools.wraps(compiled)
        def call(*args: Any) -> Any:
            out = compiled(*args)
            return tuple(change(o) if isinstance(o, torch.Tensor) else o for o in out)
        return call
    return wrap


def retained(t: torch.Tensor) -> torch.Tensor:
    if t.requires_grad:
        t.retain_grad()
    return t


def inference(t: torch.Tensor) -> torch.Tensor:
    with torch.inference_mode():
        return t.clone()


# check: (case, mode, what the broken build does to each output)
BROKEN: dict[str, tuple[str, str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "conjugate bit": (COMPLEX, "inference", torch.Tensor.resolve_conj),
    "negative bit": (COMPLEX, "inference", torch.Tensor.resolve_neg),
    "layout": (PLAIN, "inference", lambda t: t.detach().to_sparse()),
    "inference tensor": (PLAIN, "inference", inference),
    "retains_grad": (PLAIN, "training", retained),
}


@pytest.mark.parametrize("check_id", sorted(BROKEN))
def test_the_check_passes_on_the_build_and_fails_where_the_property_changed(make_case: CaseFactory,
                                                                           check_id: str) -> None:
    body, mode, change = BROKEN[check_id]
    lc = make_case(body)
    variant = Variant("cpu", "aot_eager", mode)
    clean = run_variant(lc, variant, RunOptions())
    assert clean.status == "pass", clean.reason
    fault = contract_fault("changed", "runtime_wrapper", check_id, outputs_changed(change))
    broken = run_variant(lc, variant, RunOptions(extensions=(fault.extension(),)))
    assert broken.status == "fail"
    assert check_id in {m.check for m in broken.mismatches}, broken.reason


def test_an_inference_tensor_made_inside_the_program_is_judged_as_the_build_returns_it(
        make_case: CaseFactory) -> None:
    """Eager's output made under inference_mode inside the program is an inference tensor; the
    record passes exactly where the build's compiled output is one too (observed here directly)."""
    def f(x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return x * 2

    torch._dynamo.reset()
    build_keeps_it = bool(torch.compile(f, backend="aot_eager")(torch.ones(4)).is_inference())
    lc = make_case(HEAD + """\
inputs:
  x: {tensor: {shape: [4]}}
program: |
  def f(x):
      with torch.inference_mode():
          y = x * 2
      return y
""")
    record = run_variant(lc, Variant("cpu", "aot_eager", "inference"), RunOptions())
    assert (record.status == "pass") == build_keeps_it, record.reason
    if not build_keeps_it:
        assert "inference tensor" in {m.check for m in record.mismatches}, record.reason
        assert "inference tensor is False, but eager gives True" in record.reason


def leave_functionalize_excluded(compiled: Compiled) -> Compiled:
    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        out = compiled(*args)
        torch._C._dispatch_tls_set_dispatch_key_excluded(torch._C.DispatchKey.Functionalize, True)
        return out
    return call


def test_a_dispatch_key_left_behind_fails_the_item_and_the_worker_gets_its_keys_back(make_case: CaseFactory) -> None:
    before = dispatch_keys()
    fault = contract_fault("leak", "runtime_wrapper", "dispatch keys", leave_functionalize_excluded)
    record = run_variant(make_case(PLAIN), Variant("cpu", "aot_eager", "inference"),
                         RunOptions(extensions=(fault.extension(),)))
    assert record.status == "fail"
    assert [m.check for m in record.mismatches] == ["dispatch keys"], record.reason
    assert "Functionalize" in record.mismatches[0].actual and "Functionalize" not in record.mismatches[0].expected
    assert dispatch_keys() == before


POISON = HEAD + """\
inputs:
  a: {tensor: {shape: [4], requires_grad: true, leaf: false}}
modes: [inference, training]
program: |
  def f(a):
      a.data = a
      with torch.inference_mode():
          a.sub_(2)
      return a
"""


def test_a_compile_that_fails_leaving_dispatch_keys_set_does_not_poison_the_next_item(make_case: CaseFactory) -> None:
    """A failed compile under inference_mode leaves C++ guards in the frames of its exception that set
    dispatch keys (PythonDispatcher...) when garbage collection destroys them (2.13.0, 2.15.0): the
    worker's keys are the same after a collection, and the next item still compiles (before the fix
    every later compile in the worker failed)."""
    before = dispatch_keys()
    variant = Variant("cpu", "aot_eager", "inference")
    record = run_variant(make_case(POISON), variant, RunOptions())
    assert record.status in {"fail", "pass"}, record.reason  # judged, never a harness error
    gc.collect()
    assert dispatch_keys() == before
    clean = run_variant(make_case(PLAIN), variant, RunOptions())
    assert clean.status == "pass", clean.reason
