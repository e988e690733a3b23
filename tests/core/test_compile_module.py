"""`compile.module`: the entry compiles the module argument itself, as upstream's torch.compile(mod),
aot_module_simplified(mod, ...) and aot_export_module(mod, ...) do, and its reproducer does the same."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from conformance.core.loop import REPRO_DIFFERS, REPRO_MATCHES
from conformance.data.loader import CaseLoadError, load_case
from conformance.data.variants import variants_of
from conformance.reproducer.short import render_short
from conformance.run.runner import run_variant

HEAD = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
"""
MODULE = """\
classes: |
  class M(torch.nn.Module):
      def __init__(self):
          super().__init__()
          self.lin = torch.nn.Linear(3, 2)
          self.register_buffer("b", torch.zeros(2))
      def forward(self, x):
          self.b.add_(1)
          return (self.lin(x) + self.b,)
compile: {module: m}
inputs:
  x: {tensor: {shape: [4, 3], requires_grad: true}}
  m: {module: {class: M}, persist: true}
program: |
  def f(x, m):
      return m(x)
calls:
  - {x: {tensor: {shape: [4, 3]}}}
"""
ENTRIES = ("aot_eager", "aot_module_simplified", "aot_module", "aot_export_module")
# what each entry is handed, by the name the harness calls it through
SPIED = {"aot_eager": (torch, "compile"),
         "aot_module_simplified": ("torch._functorch.aot_autograd", "aot_module_simplified"),
         "aot_module": ("functorch.compile", "aot_module"),
         "aot_export_module": ("torch._functorch.aot_autograd", "aot_export_module"),
         "make_fx": ("torch.fx.experimental.proxy_tensor", "make_fx")}


def _case(tmp_path: Path, body: str) -> Any:
    path = tmp_path / "mutation_epilogue" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(body))
    return load_case(path, tmp_path)


@pytest.mark.parametrize("entry", [*ENTRIES, "make_fx"])
def test_the_entry_is_handed_the_module_itself_and_the_caller_sees_what_the_call_did(
        tmp_path: Path, entry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    owner, name = SPIED[entry]
    module = importlib.import_module(owner) if isinstance(owner, str) else owner
    real, handed = getattr(module, name), []

    def spy(first: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(type(first).__name__)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    # make_fx traces with the real buffer (upstream's real weights), so its trace adds to it once more: no buffer
    body = MODULE.replace("self.b.add_(1)", "pass") if entry == "make_fx" else MODULE
    lc = _case(tmp_path, f"backends: [{entry}]\nmodes: [inference, training]\n" + body)
    for variant in variants_of(lc.case, devices=["cpu"]):
        r = run_variant(lc, variant)
        assert r.status == "pass", (variant.label, r.reason, [m.message() for m in r.mismatches])
    assert handed and set(handed) == {"M"}, handed  # never the program wrapped as a module


def test_without_it_the_entry_compiles_the_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch._functorch.aot_autograd as aot

    real, handed = aot.aot_module_simplified, []
    monkeypatch.setattr(aot, "aot_module_simplified",
                        lambda mod, *a, **k: handed.append(type(mod).__name__) or real(mod, *a, **k))
    lc = _case(tmp_path, "backends: [aot_module_simplified]\n" + MODULE.replace("compile: {module: m}\n", ""))
    (variant,) = variants_of(lc.case, devices=["cpu"])
    assert run_variant(lc, variant).status == "pass"
    assert handed == ["_ProgramModule"]


def test_a_later_call_with_another_module_is_a_case_error(tmp_path: Path) -> None:
    lc = _case(tmp_path, "backends: [aot_eager, aot_module_simplified]\n" + MODULE.replace(
        "persist: true}", "persist: false}").replace(
        "  - {x: {tensor: {shape: [4, 3]}}}", "  - {m: {module: {class: M}}}"))
    for variant in variants_of(lc.case, devices=["cpu"]):
        r = run_variant(lc, variant)
        assert r.status == "error" and "a later call must pass the same one" in r.reason, (variant.label, r.reason)


@pytest.mark.parametrize(("change", "said"), [
    ("compile: {module: x}", "'x' is not a module input the program takes (module inputs: m)"),
    ("compile: {module: n}", "'n' is not a module input the program takes"),
    ("      return m(x)", "the program must be `return m(x)` and nothing else"),
    ("backends: [aot_function]", "aot_function compile(s) a function of tensors, not a module"),
])
def test_a_program_that_is_not_the_modules_call_is_refused_at_its_line(tmp_path: Path, change: str,
                                                                       said: str) -> None:
    body = "backends: [aot_eager]\n" + MODULE
    if change.startswith("compile"):
        body = body.replace("compile: {module: m}", change)
    elif change.startswith("backends"):
        body = body.replace("backends: [aot_eager]", change)
    else:
        body = body.replace(change, "      y = m(x)\n      return y")
    with pytest.raises(CaseLoadError) as err:
        _case(tmp_path, body)
    assert said in str(err.value) and "c.yaml:" in str(err.value), str(err.value)


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_short_reproducer_compiles_the_module_itself_and_finds_what_the_harness_found(
        tmp_path: Path, entry: str) -> None:
    """The module branches on a shape: upstream's entries without dynamo trace once, without guards, so a later call
    of another shape runs the first call's branch (a mismatch the script must show); torch.compile guards (a
    match the script must show too)."""
    lc = _case(tmp_path, f"""\
        backends: [{entry}]
        classes: |
          class M(torch.nn.Module):
              def forward(self, x):
                  return (x * 2,) if x.shape[0] > 3 else (x * 3,)
        compile: {{module: m}}
        inputs:
          m: {{module: {{class: M}}, persist: true}}
          x: {{tensor: {{shape: [3]}}}}
        program: |
          def f(m, x):
              return m(x)
        calls:
          - {{x: {{tensor: {{shape: [5]}}}}}}
        """)
    (variant,) = variants_of(lc.case, devices=["cpu"])
    record = run_variant(lc, variant)
    guarded = entry == "aot_eager"
    assert record.status == ("pass" if guarded else "fail"), (record.reason, record.mismatches)
    # a reproducer is written for a failure; the guarded entry's must say it matches
    text = render_short(lc, variant, record.model_copy(update={"status": "fail"}))
    assert text is not None and "args[0]" in text and "Program(" not in text, text
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == (REPRO_MATCHES if guarded else REPRO_DIFFERS), proc.stdout + proc.stderr
