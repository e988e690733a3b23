"""A call's `raises` with `at: after` (Note [A raise after the call] in conformance/core/loop.py): the call's
`after:` action must raise as declared on the listed sides and not on the others; the item then compares what
the call left, before the action. Shown holding, and failing each way, in the run, the parity column and the
short reproducer. Beside test_entries.py's tests of a call's own `raises`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from conformance.core.cause import normalise, place_of
from conformance.data.loader import LoadedCase, load_case
from conformance.data.parity import FAILS, HOLDS, asserted
from conformance.data.variants import variants_of
from conformance.reproducer.short import render_short
from conformance.results import ResultRecord
from conformance.run.runner import run_variant
from conformance.schema.calls import CallSpec

# The compiled output's backward node is AOTAutograd's, eager's is the op's: an action that asserts it is not
# raises on the compiled side alone (as upstream's compiled backward raises where eager's runs). After the
# assertion, the action takes a gradient into the hidden `gx`, which a side that raised never does.
CASE = """\
behavior: backward_unwrap
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/176741]
backends: [{backend}]
inputs:
  x: {{tensor: {{shape: [4]}}}}
  gx: {{tensor: {{shape: [4], init: zeros}}, hidden: true}}
program: |
  def f(x):
      return x.sin()
calls:
  - before: |
      x = x.detach().requires_grad_(True)
    after: |
      {check}
      gx = torch.autograd.grad(out.sum(), x)[0]
{raises}modes: [inference]
"""
ON_COMPILED = 'assert type(out.grad_fn).__name__ != "CompiledFunctionBackward", "the compiled backward"'
EVERYWHERE = 'assert False, type(out.grad_fn).__name__'  # the caller's action, raising on both sides


def _raises(type_: str = "AssertionError", match: str = "compiled backward", sides: str = "[compiled]") -> str:
    return f"    raises: {{type: {type_}, match: {match!r}, sides: {sides}, at: after}}\n"


def _item(tmp_path: Path, *, backend: str = "aot_eager", check: str = ON_COMPILED,
          raises: str = "") -> tuple[LoadedCase, ResultRecord]:
    path = tmp_path / "backward_unwrap" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(CASE.format(backend=backend, check=check, raises=raises))
    lc = load_case(path, tmp_path)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    return lc, run_variant(lc, variant)


def _messages(r: ResultRecord) -> list[str]:
    return [m.where for m in r.mismatches]


def _after(r: ResultRecord) -> str:
    """The mismatch of the call's after action, as its sentence reads without the call's label."""
    (m,) = [m for m in r.mismatches if m.path == "calls[0].after"]
    return f"{m.path}: {m.check} is {m.actual}, but {m.source} gives {m.expected}"


def test_the_declared_raise_holds_and_the_item_compares_what_the_call_left(tmp_path: Path) -> None:
    _, r = _item(tmp_path, raises=_raises())
    assert r.status == "pass", (r.reason, _messages(r))  # gx, taken by eager's action alone, is not compared
    assert r.raised == ("call 2 after: AssertionError: the compiled backward",), r.raised
    assert asserted("error AssertionError", [r]) == HOLDS
    assert asserted("runs", [r]) == FAILS  # as for a call's declared raise: upstream's test saw an error


def test_undeclared_the_compiled_sides_raise_in_the_action_is_a_mismatch(tmp_path: Path) -> None:
    _, r = _item(tmp_path)
    assert r.status == "fail", r.reason
    assert _after(r).startswith("calls[0].after: exception is AssertionError: the compiled backward"), _after(r)
    assert any("gx" in w for w in _messages(r)), _messages(r)  # and what the action left differs
    assert not r.raised


def test_no_raise_where_one_is_declared_fails_saying_what_was_declared(tmp_path: Path) -> None:
    _, r = _item(tmp_path, backend="none", raises=_raises())  # `none` compiles nothing: its backward is eager's
    assert r.status == "fail", r.reason
    assert _after(r) == ("calls[0].after: exception is no exception, but calls[0].raises gives AssertionError "
                         "matching 'compiled backward'"), _after(r)
    assert asserted("error AssertionError", [r]) == FAILS


@pytest.mark.parametrize(("type_", "match"), [("ValueError", "compiled backward"), ("AssertionError", "another")])
def test_the_wrong_type_or_message_fails_saying_both(tmp_path: Path, type_: str, match: str) -> None:
    _, r = _item(tmp_path, raises=_raises(type_, match))
    assert r.status == "fail", r.reason
    assert _after(r).startswith("calls[0].after: exception is AssertionError: the compiled backward"), _after(r)
    assert _after(r).endswith(f", but calls[0].raises gives {type_} matching {match!r}"), _after(r)
    assert not r.raised


def test_a_raise_on_a_side_the_declaration_does_not_list_fails(tmp_path: Path) -> None:
    """Eager lists it and raises it; compiled, not listed, raises too: a mismatch. Eager raising unlisted: an
    error (the case is wrong)."""
    _, r = _item(tmp_path, check=EVERYWHERE, raises=_raises(match="Backward", sides="[eager]"))
    assert r.status == "fail", r.reason
    assert _after(r).startswith("calls[0].after: exception is AssertionError: CompiledFunctionBackward"), _after(r)
    assert _after(r).endswith(", but eager gives no exception"), _after(r)
    _, r = _item(tmp_path, check=EVERYWHERE, raises=_raises(match="Backward"))
    assert r.status == "error" and "calls[0].after: eager gives AssertionError" in r.reason, r.reason
    _, r = _item(tmp_path, check=EVERYWHERE, raises=_raises(match="Backward", sides="[eager, compiled]"))
    assert r.status == "pass", (r.reason, _messages(r))


def test_at_after_needs_an_after_action() -> None:
    with pytest.raises(ValidationError, match="the call has no after"):
        CallSpec.model_validate({"raises": {"type": "RuntimeError", "at": "after"}})
    assert CallSpec.model_validate({"raises": {"type": "RuntimeError"}}).raises.at == "call"  # type: ignore[union-attr]


def _script(tmp_path: Path, lc: LoadedCase, r: ResultRecord) -> subprocess.CompletedProcess[str]:
    (variant,) = variants_of(lc.case, devices=["cpu"])
    text = render_short(lc, variant, r)
    assert text is not None and "as_declared(" in text
    script = tmp_path / "repro.py"
    script.write_text(text)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)


def test_the_short_reproducer_checks_the_declaration(tmp_path: Path) -> None:
    lc, r = _item(tmp_path, raises=_raises())
    proc = _script(tmp_path, lc, r)
    assert proc.returncode == 0 and "MATCHES" in proc.stdout, proc.stdout + proc.stderr
    lc, r = _item(tmp_path, raises=_raises("ValueError"))
    proc = _script(tmp_path, lc, r)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert ("MISMATCH: call 2: calls[0].after: exception is AssertionError: the compiled backward (the case "
            "declares ValueError matching 'compiled backward')") in proc.stdout, proc.stdout


# `compiled` in a caller action: an assertion upstream makes on the compiled side alone (what the compiled
# backward was handed, counted by the case's own op) is stated there, and eager's side never runs it.
@pytest.mark.parametrize(("check", "status"), [
    ("assert not compiled or out.sum().item() > 1e9, 'the compiled side only'", "fail"),
    ("assert not compiled or out.sum().item() < 1e9, 'the compiled side only'", "pass"),
    ("assert compiled or out.sum().item() > 1e9, 'the eager side only'", "error"),
])
def test_a_caller_action_knows_which_side_it_acts_on(tmp_path: Path, check: str, status: str) -> None:
    lc, record = _item(tmp_path, check=check)
    assert record.status == status, record.reason
    if status == "fail":
        (m,) = [m for m in record.mismatches if m.check == "exception"]  # and what the block then left undone
        assert m.expected == "no exception" and "the compiled side only" in m.actual
        script = render_short(lc, variants_of(lc.case, devices=["cpu"])[0], record)
        assert script is not None
        path = tmp_path / "repro.py"
        path.write_text(script)
        done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == 3 and "the compiled side only" in done.stdout, done.stdout + done.stderr
    if status == "error":
        assert "eager raised AssertionError: the eager side only" in record.reason


def test_an_input_named_compiled_would_hide_the_side_from_the_actions(tmp_path: Path) -> None:
    path = tmp_path / "backward_unwrap" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(CASE.format(backend="aot_eager", check="pass", raises="").replace("  gx:", "  compiled:"))
    with pytest.raises(Exception, match="an input named compiled hides which side acts"):
        load_case(path, tmp_path)


# `first_call`: the caller's actions around the first call itself (upstream's on its first compiled call), with
# no second call to carry them: an assertion on the compiled side there holds and fails as on a further call.
FIRST = """\
behavior: backward_unwrap
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/176741]
backends: [aot_eager]
inputs:
  x: {{tensor: {{shape: [4]}}}}
  gx: {{tensor: {{shape: [4], init: zeros}}, hidden: true}}
program: |
  def f(x):
      return x.sin()
first_call:
  before: |
    x = x.detach().requires_grad_(True)
  after: |
    assert not compiled or type(out.grad_fn).__name__ == {name!r}, type(out.grad_fn).__name__
    gx = torch.autograd.grad(out.sum(), x)[0]
expect: {{compiles: 1}}
modes: [inference]
"""


@pytest.mark.parametrize(("name", "status"), [("CompiledFunctionBackward", "pass"), ("SinBackward0", "fail")])
def test_the_first_call_carries_the_callers_actions(tmp_path: Path, name: str, status: str) -> None:
    path = tmp_path / "backward_unwrap" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(FIRST.format(name=name))
    lc = load_case(path, tmp_path)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    assert record.status == status, record.reason
    assert record.calls == 1  # no second call carries them
    if status == "fail":
        (m,) = [m for m in record.mismatches if m.check == "exception"]
        assert m.where == "first_call.after" and "CompiledFunctionBackward" in m.actual  # a one-call pass
        assert place_of(m) == "caller action"  # as a further call's action: a known failure's cover says so
        assert normalise(m.actual) == normalise("AssertionError: CompiledFunctionBackward")
        script = render_short(lc, variant, record)
        assert script is not None
        repro = tmp_path / "repro.py"
        repro.write_text(script)
        done = subprocess.run([sys.executable, str(repro)], check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == 3 and "first_call.after: exception is AssertionError" in done.stdout, done.stdout
