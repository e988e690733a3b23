"""Every oracle passes on the real build and fails on a build broken in its one way.

The broken builds are the self-check's faults (conformance/selftest/faults.py), applied as run
extensions around the real compiled callable, so each
test shows the same case going from pass to fail with the check that names the contract.
"""

from __future__ import annotations

import pytest
import torch

from conformance.data.loader import LoadedCase
from conformance.data.variants import Variant
from conformance.results import ResultRecord
from conformance.run.runner import RunOptions, run_variant
from conformance.selftest.faults import FAULTS, contract_fault
from tests.helpers.cases import CaseFactory

HEAD = """\
behavior: {behavior}
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [{backend}]
"""


def case(
    make_case: CaseFactory, body: str, behavior: str = "mutation_epilogue", backend: str = "aot_eager"
) -> LoadedCase:
    return make_case(HEAD.format(behavior=behavior, backend=backend) + body)


def run(lc: LoadedCase, mode: str = "inference", fault: str | None = None, backend: str | None = None,
        kiim: bool = False) -> ResultRecord:
    variant = Variant("cpu", backend or lc.case.backends[0], mode, kiim)
    return run_variant(lc, variant, RunOptions(extensions=(FAULTS[fault].extension(),) if fault else ()))


def checks(record: ResultRecord) -> set[str]:
    return {m.check for m in record.mismatches}


MUTATION = """\
inputs:
  x: {tensor: {shape: [6], requires_grad: true, leaf: false}}
program: |
  def f(x):
      x.mul_(2)
      return x.cos()
modes: [inference, training]
"""

ALIAS = """\
inputs:
  x: {tensor: {shape: [2, 3], requires_grad: true}}
program: |
  def f(x):
      return x.view(-1), x * 2
modes: [inference, training]
"""


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_clean_build_passes(make_case: CaseFactory, mode: str) -> None:
    for body in (MUTATION, ALIAS):
        record = run(case(make_case, body), mode)
        assert record.status == "pass", record.reason


def test_output_values_oracle(make_case: CaseFactory) -> None:
    record = run(case(make_case, MUTATION), fault="output_perturbed")
    assert record.status == "fail"
    assert record.mismatches[0].where == "out[0]" and record.mismatches[0].check == "values"
    assert "but eager gives" in record.reason


def test_output_just_beyond_default_tolerance_fails_and_a_declared_tolerance_admits_it(make_case: CaseFactory) -> None:
    assert run(case(make_case, MUTATION), fault="output_just_beyond_tolerance").status == "fail"
    loose = MUTATION + "expect: {rtol: 0.01, atol: 0.01}\n"
    assert run(case(make_case, loose), fault="output_just_beyond_tolerance").status == "pass"


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_input_mutation_oracle(make_case: CaseFactory, mode: str) -> None:
    record = run(case(make_case, MUTATION), mode, fault="input_mutation_dropped")
    assert record.status == "fail"
    if mode == "inference":
        assert {"values", "_version moved"} <= checks(record)
        assert any(m.where == "input x" for m in record.mismatches)


def test_alias_oracle_catches_a_copy(make_case: CaseFactory) -> None:
    record = run(case(make_case, ALIAS), fault="alias_returned_as_copy")
    assert record.status == "fail"
    assert "shares storage with" in checks(record)
    # the write-through pass proves it: writing out[0] changed x in eager only
    assert any(m.where.startswith("after writing through the outputs: x") for m in record.mismatches)


def test_alias_oracle_catches_lost_view_in_training(make_case: CaseFactory) -> None:
    record = run(case(make_case, ALIAS), "training", fault="alias_returned_as_copy")
    assert record.status == "fail"
    assert {"view of (_base)", "shares storage with"} <= checks(record)


def test_grad_mode_oracle(make_case: CaseFactory) -> None:
    record = run(case(make_case, ALIAS, "runtime_wrapper"), fault="grad_mode_left_changed")
    assert record.status == "fail" and checks(record) == {"grad mode"}
    assert torch.is_grad_enabled(), "the runner must restore grad mode even after a broken call"


def test_grad_mode_set_inside_region_is_matched_not_flagged(make_case: CaseFactory) -> None:
    body = """\
inputs:
  x: {tensor: {shape: [4]}}
program: |
  def f(x):
      torch.set_grad_enabled(False)
      return x + 1
"""
    record = run(case(make_case, body, "runtime_wrapper"))
    assert record.status == "pass", record.reason
    assert torch.is_grad_enabled()


METADATA = """\
inputs:
  x: {tensor: {shape: [3, 5]}}
program: |
  def f(x):
      x.t_()
      return x * 2
"""


@pytest.mark.parametrize("kiim", [False, True])
def test_metadata_mutation_oracle(make_case: CaseFactory, kiim: bool) -> None:
    lc = case(make_case, METADATA, backend="aot_function")
    assert run(lc, kiim=kiim).status == "pass"
    record = run(lc, kiim=kiim, fault="metadata_not_restored")
    assert record.status == "fail" and "shape" in checks(record)


def test_storage_swap_oracle(make_case: CaseFactory) -> None:
    body = """\
inputs:
  x: {tensor: {shape: [4]}}
  y: {tensor: {shape: [4]}}
program: |
  def f(x, y):
      x.set_(y)
      return x + 1
"""
    lc = case(make_case, body)
    assert run(lc).status == "pass"
    record = run(lc, fault="storage_not_swapped")
    assert record.status == "fail"
    assert "storage swapped (set_)" in checks(record) or "shares storage with" in checks(record)


def test_version_counter_oracle(make_case: CaseFactory) -> None:
    record = run(case(make_case, MUTATION), fault="version_not_bumped")
    assert record.status == "fail" and checks(record) == {"_version moved"}


def test_exact_version_delta_only_where_asked(make_case: CaseFactory) -> None:
    thrice = MUTATION.replace("x.mul_(2)", "x.mul_(2)\n      x.add_(1)\n      x.sub_(3)")
    assert run(case(make_case, thrice)).status == "pass"
    record = run(case(make_case, thrice + "expect: {version: exact}\n"))
    # eager bumps once per op, the compiled epilogue fewer times: compared only on request
    assert record.status == "fail" and checks(record) == {"_version delta"}


def test_gradient_oracle(make_case: CaseFactory) -> None:
    record = run(case(make_case, ALIAS), "training", fault="gradient_perturbed")
    assert record.status == "fail"
    assert any(m.where == "grad of x" and m.check == "values" for m in record.mismatches)



VIEW_LEAVES = """\
classes: |
  from torch.testing._internal.two_tensor import TwoTensor
inputs:
  a: {tensor: {shape: [4]}, hidden: true}
  b: {tensor: {shape: [4]}, hidden: true}
  x: {view: "TwoTensor(a, b).requires_grad_()"}
  y: {view: "a.detach().clone().requires_grad_()"}
program: |
  def f(x, y):
      return x * 2, y.sin()
"""
CALLER_BACKWARD = """\
inputs:
  a: {tensor: {shape: [4]}, hidden: true}
  y: {view: "a.detach().clone().requires_grad_()"}
program: |
  def f(y):
      return y.sin()
calls:
  - after: |
      out.sum().backward()
"""


@pytest.mark.parametrize(("body", "mode", "leaves"), [
    (VIEW_LEAVES, "training", {"grad of x.a", "grad of x.b", "grad of y"}),
    (CALLER_BACKWARD, "inference", {"grad of y"}),
])
def test_a_gradient_reaching_a_leaf_built_by_a_view_expression_is_compared(
        make_case: CaseFactory, body: str, mode: str, leaves: set[str]) -> None:
    """A TwoTensor over leaves, or a detached copy, is a leaf of its own: its gradient, from the harness's
    backward (training) or a caller's (an `after:` action), is held to eager's."""
    lc = case(make_case, body, behavior="backward_unwrap")
    assert run(lc, mode).status == "pass"
    record = run(lc, mode, fault="gradient_perturbed")
    assert record.status == "fail", record.reason
    assert {m.where.split(": ")[-1] for m in record.mismatches if m.check == "values"} >= leaves, record.mismatches


SWEEP = """\
config:
  torch._dynamo.config.specialize_float: false
compile: {dynamic: true}
inputs:
  x: {tensor: {shape: [8]}}
  lr: {scalar: {values: [0.1, 0.2, 0.3, 0.4, 0.5]}}
program: |
  def f(x, lr):
      x.mul_(lr)
      return x * lr
expect: {compiles: 1}
"""


def test_sweep_values_oracle(make_case: CaseFactory) -> None:
    lc = case(make_case, SWEEP, "scalar_recompile")
    assert run(lc).status == "pass"
    record = run(lc, fault="sweep_reuses_first_value")
    assert record.status == "fail"
    assert record.mismatches[0].where.startswith("call 2 (lr=0.2): ")


def test_compile_count_oracle(make_case: CaseFactory) -> None:
    record = run(case(make_case, SWEEP, "scalar_recompile"), fault="recompile_every_value")
    assert record.status == "fail"
    (m,) = record.mismatches
    assert (m.check, m.expected, m.actual, m.source) == ("graphs compiled", "1", "5", "expect.compiles")
    assert m.detail == "a recompile per value"


def test_no_compiler_no_compile_count(make_case: CaseFactory) -> None:
    """`none` runs both sides eagerly: a case's expect.compiles says nothing about it (0 graphs is
    no failure of a count it never had), while the same case under a compiler is held to it."""
    lc = case(make_case, SWEEP, "scalar_recompile", backend="none")
    assert run(lc).status == "pass", run(lc).reason
    assert run(lc, fault="recompile_every_value", backend="aot_eager").status == "fail"


def test_warm_rerun_is_a_second_pass(make_case: CaseFactory) -> None:
    record = run(case(make_case, SWEEP.replace("{compiles: 1}", "{compiles: 1, warm_rerun: true}"), "scalar_recompile"))
    assert record.status == "pass", record.reason
    assert record.compile_counts == {"cold_graphs": 1, "warm_graphs": 1, "cold_first_call": 1,
                                     "cold_backend_calls": 1, "warm_backend_calls": 1}
    assert record.calls == 10


def test_eager_failure_is_a_case_error_not_a_build_failure(make_case: CaseFactory) -> None:
    body = MUTATION.replace("x.mul_(2)", "x.view(2, 4)")
    record = run(case(make_case, body))
    assert record.status == "error"
    assert record.reason.startswith("case error: eager raised RuntimeError")


def test_compiled_only_exception_is_a_failure(make_case: CaseFactory) -> None:
    def explode(compiled):  # type: ignore[no-untyped-def]  # a throwaway fault
        def call(*args):  # type: ignore[no-untyped-def]
            raise RuntimeError("compiled side broke")
        return call

    lc = case(make_case, MUTATION)
    extension = contract_fault("x", "b", "c", explode).extension()
    record = run_variant(lc, Variant("cpu", "aot_eager", "inference"), RunOptions(extensions=(extension,)))
    assert record.status == "fail"
    assert record.mismatches[0].actual == "RuntimeError: compiled side broke"


def test_negative_case_expects_the_same_exception(make_case: CaseFactory) -> None:
    body = """\
inputs:
  x: {tensor: {shape: [4]}}
program: |
  def f(x):
      return x.view(3)
expect:
  raises: {type: RuntimeError, match: "shape '\\\\[3\\\\]' is invalid"}
"""
    assert run(case(make_case, body)).status == "pass"
    record = run(case(make_case, body.replace("x.view(3)", "x.view(4)")))
    assert record.status == "error" and "but the case expects RuntimeError" in record.reason


def test_known_failure_turns_fail_into_xfail_and_pass_into_xpass(make_case: CaseFactory) -> None:
    kf = """\
known_failures:
  - when: {torch: ">=2.0", backend: [aot_eager]}
    reason: demo
    link: https://github.com/pytorch/pytorch/issues/1
    kind: bug
    evidence: demo
    covers: [{check: values, place: output}]
"""
    lc = case(make_case, MUTATION + kf)
    xfail = run(lc, fault="output_perturbed")
    assert xfail.status == "xfail" and xfail.known_failure is not None
    assert xfail.known_failure.link.endswith("/issues/1") and xfail.known_failure.source.endswith("case.yaml:14")
    assert all(m.known == 0 for m in xfail.mismatches)
    xpass = run(lc)
    assert xpass.status == "xpass" and "retire or narrow the expectation at" in xpass.reason
    other = kf.replace("backend: [aot_eager]", "backend: [inductor]")
    assert run(case(make_case, MUTATION + other), fault="output_perturbed").status == "fail"


def test_config_overrides_never_leak(make_case: CaseFactory) -> None:
    import torch._dynamo

    before = torch._dynamo.config.specialize_float
    lc = case(make_case, SWEEP.replace("specialize_float: false", f"specialize_float: {str(not before).lower()}"))
    run(lc)
    assert torch._dynamo.config.specialize_float == before


def test_a_config_flag_this_build_lacks_is_a_skip_with_its_reason(make_case: CaseFactory) -> None:
    body = MUTATION + "config:\n  torch._dynamo.config.no_such_knob: 1\n"
    record = run(case(make_case, body))
    assert (record.status, record.skip_kind) == ("skip", "feature")  # another release may have it
    assert record.reason.startswith("config: torch._dynamo.config.no_such_knob: no such flag in this build (torch ")


def test_unavailable_device_is_a_skip_with_reason(make_case: CaseFactory) -> None:
    lc = case(make_case, MUTATION)
    record = run_variant(lc, Variant("nosuchdev", "aot_eager", "inference"))
    assert record.status == "skip"
    assert "not known to this torch build" in record.reason


def test_record_carries_fingerprint_and_time_split(make_case: CaseFactory) -> None:
    record = run(case(make_case, MUTATION), "training")
    fp = record.fingerprint
    assert fp.torch_version == torch.__version__ and fp.device == "cpu"
    assert fp.python and fp.platform and fp.date and fp.harness_version
    assert {"build_inputs", "eager", "compile", "oracles", "total"} <= set(record.durations)
    assert record.case_sha256 and record.case_file.endswith("case.yaml")


def test_views_that_refuse_autograd_queries_after_the_write_are_compared_not_crashed(make_case: CaseFactory) -> None:
    body = """\
inputs:
  x: {tensor: {shape: [4, 6], requires_grad: true}}
program: |
  def f(x):
      return x.unbind(0)
modes: [training]
"""
    lc = case(make_case, body, "runtime_wrapper")
    record = run(lc, "training")
    assert record.status == "pass", record.reason
    assert run(lc, "training", fault="alias_returned_as_copy").status == "fail"


def test_known_failure_still_fails_on_mismatches_it_does_not_cover(make_case: CaseFactory) -> None:
    kf = """\
known_failures:
  - reason: the count is known to be off
    link: https://github.com/pytorch/pytorch/issues/1
    kind: bug
    evidence: demo
    covers: [{check: graphs compiled}]
"""
    lc = case(make_case, SWEEP.replace("{compiles: 1}", "{compiles: 2}") + kf, "scalar_recompile")
    assert run(lc).status == "xfail"
    record = run(lc, fault="sweep_reuses_first_value")
    assert record.status == "fail"
    assert "no known failure covers it" in record.reason and record.mismatches[0].check == "values"
    assert record.mismatches[0].known is None and record.mismatches[-1].known == 0


def test_strict_internals_fails_an_item_whose_probe_diverges(make_case: CaseFactory,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.probe import PROBES
    from conformance.probe.judge import ProbeResult

    lc = case(make_case, MUTATION)
    variant = Variant("cpu", "aot_eager", "inference")
    assert run_variant(lc, variant, RunOptions(strict_internals=True)).status == "pass"
    monkeypatch.setitem(PROBES, "mutation_epilogue", lambda *_: ProbeResult("mutation_epilogue", "diverges",
                                                                           diff="-one statement\n+another"))
    relaxed = run_variant(lc, variant, RunOptions())
    assert relaxed.status == "pass" and relaxed.probes.statuses()["mutation_epilogue"] == "diverges"
    strict = run_variant(lc, variant, RunOptions(strict_internals=True))
    assert strict.status == "fail"
    assert strict.reason == ("mutation_epilogue: internals probe is diverges, but --strict-internals gives conforms "
                             "(-one statement)")
