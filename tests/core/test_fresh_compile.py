"""A call with `fresh: true` compiles the program afresh on the compiled side: a compiled side that is wrong
only once compiled anew fails there, a stale compile (no guards) that fresh replaces passes, the fresh compile's
graphs count in expect.compiles (a fresh call is no recompile), and the reproducer compiles afresh at the same
call."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.core.loop import REPRO_DIFFERS, LoopCallbacks, Target, recompile_note, run_passes
from conformance.data.loader import LoadedCase
from conformance.data.variants import Variant
from conformance.reproducer.short import render_short
from conformance.run.runner import run_variant
from tests.helpers.cases import CaseFactory, case_factory

HEAD = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
"""
DOUBLED = (
    HEAD
    + """\
backends: [aot_eager, aot_function, aot_module_simplified, aot_module, make_fx, aot_export_module]
inputs: {x: {tensor: {shape: [4]}}}
program: |
  def f(x):
      return x * 2
"""
)
# what the program reads when it is traced: aot_function has no guards, so its first trace is kept
STALE = (
    HEAD
    + """\
backends: [aot_function]
classes: |
  scale = {"k": 1.0}
inputs: {x: {tensor: {shape: [4]}}}
program: |
  def f(x):
      return x * scale["k"]
calls:
  - before: scale["k"] = 2.0
    after: scale["k"] = 1.0
"""
)


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    return case_factory(tmp_path)


def _target(lc: LoadedCase, backend: str) -> Target:
    return Target(
        program=lc.program_source,
        function=lc.case.function_name,
        filename=lc.program_filename,
        device="cpu",
        backend=backend,
        mode="inference",
        classes=lc.classes_source,
        classes_filename=lc.classes_filename,
    )


class _WrongOnceCompiledAnew(LoopCallbacks):
    """A fake entry: the second compiled function the loop is handed (a fresh compile) adds one."""

    def __init__(self) -> None:
        self.made = 0

    def compiled(self, compiled: Callable[..., Any]) -> Callable[..., Any]:
        self.made += 1
        if self.made == 1:
            return compiled
        return lambda *args: compiled(*args) + 1


@pytest.mark.parametrize(
    "backend", ["aot_eager", "aot_function", "aot_module_simplified", "aot_module", "make_fx", "aot_export_module"]
)
def test_a_compiled_side_wrong_only_when_compiled_anew_fails_at_the_fresh_call(
    make_case: CaseFactory, backend: str
) -> None:
    fresh = make_case(DOUBLED + "calls: [{}, {fresh: true}, {}]\n")
    outcome = run_passes(fresh.data, _target(fresh, backend), _WrongOnceCompiledAnew())
    assert sorted({(m.check, m.call) for m in outcome.mismatches}) == [("values", 3), ("values", 4)]
    same = make_case(DOUBLED + "calls: [{}, {}, {}]\n", name="same.yaml")
    assert run_passes(same.data, _target(same, backend), _WrongOnceCompiledAnew()).mismatches == []


def test_a_stale_compile_fails_and_a_fresh_one_sees_what_the_trace_reads(make_case: CaseFactory) -> None:
    stale = run_variant(make_case(STALE), Variant("cpu", "aot_function", "inference"))
    assert stale.status == "fail" and "call 2" in stale.reason and "values" in stale.reason
    fresh = run_variant(
        make_case(STALE + "    fresh: true\n", name="fresh.yaml"), Variant("cpu", "aot_function", "inference")
    )
    assert fresh.status == "pass", fresh.reason


def test_the_fresh_compile_s_graphs_count_in_expect_compiles(make_case: CaseFactory) -> None:
    body = HEAD + "backends: [aot_eager]\n" + DOUBLED.split("\n", 5)[5] + "calls: [{fresh: true}]\n"
    counted = run_variant(make_case(body + "expect: {compiles: 2}\n"), Variant("cpu", "aot_eager", "inference"))
    assert counted.status == "pass", counted.reason
    assert counted.compile_counts["cold_graphs"] == 2 and counted.recompiles is None
    one = run_variant(
        make_case(body + "expect: {compiles: 1}\n", name="one.yaml"), Variant("cpu", "aot_eager", "inference")
    )
    assert one.status == "fail"
    assert "cold pass over 2 call(s): graphs compiled is 2, but expect.compiles gives 1" in one.reason


def test_a_fresh_call_s_graphs_are_no_recompile() -> None:
    target = Target("", "f", "<p>", "cpu", "aot_eager", "inference")
    unset: dict[str, Any] = {"expect": {"compiles": None, "compiles_at_most": None}}
    assert recompile_note(unset, target, [1, 1], (False, True)) is None
    assert recompile_note(unset, target, [1, 1, 1], (False, True, False)) == (
        "3 graph(s) over 3 calls, 1 of them after the first call; expect.compiles is not set"
    )


def test_the_reproducer_compiles_afresh_at_the_same_call(make_case: CaseFactory, tmp_path: Path) -> None:
    variant = Variant("cpu", "aot_function", "inference")
    for name, text, code in (("stale.yaml", STALE, 3), ("fresh.yaml", STALE + "    fresh: true\n", 0)):
        lc = make_case(text, name=name)
        script = render_short(lc, variant, run_variant(lc, variant))
        assert script is not None
        assert ("fn = compiled_anew()" in script) == (code == 0)
        path = tmp_path / f"repro_{name}.py"
        path.write_text(script)
        done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == code, done.stdout + done.stderr


def test_a_torch_compile_reproducer_resets_dynamo_before_the_fresh_compile(make_case: CaseFactory) -> None:
    lc = make_case(DOUBLED + "calls: [{fresh: true}]\n")
    variant = Variant("cpu", "aot_eager", "inference")
    script = render_short(lc, variant, run_variant(lc, variant))
    assert script is not None
    anew = script.split("def compiled_anew(reset=True, new_backend=False):", 1)[1].split("\n\n", 1)[0]
    assert "torch._dynamo.reset()" in anew and "return torch.compile(f, backend=chosen)" in anew
    assert "chosen = 'aot_eager'" in anew


# automatic dynamic: the second shape recompiles the code with a dynamic size, which a later shape reuses while
# dynamo keeps its cache; after a reset the later shape compiles static again
DOUBLED_ON_AOT_EAGER = HEAD + """\
backends: [aot_eager]
inputs: {x: {tensor: {shape: [3]}}}
program: |
  def f(x):
      return x * 2
"""
GROWING = DOUBLED_ON_AOT_EAGER + """\
calls:
  - {x: {tensor: {shape: [4]}}}
  - {x: {tensor: {shape: [5]}}, fresh: FRESH}
"""


@pytest.mark.parametrize(("fresh", "graphs"), [("keep_cache", 2), ("true", 3)])
def test_keep_cache_compiles_anew_without_resetting_dynamo(make_case: CaseFactory, tmp_path: Path, fresh: str,
                                                           graphs: int) -> None:
    """Upstream's new torch.compile of a closure of one function keeps dynamo's cache and automatic-dynamic state
    (fresh: keep_cache); fresh: true resets them. The reproducer does the same at the same call."""
    lc = make_case(GROWING.replace("FRESH", fresh), name=f"{fresh}.yaml")
    variant = Variant("cpu", "aot_eager", "inference")
    record = run_variant(lc, variant)
    assert record.status == "pass" and record.compile_counts["cold_graphs"] == graphs, record.compile_counts
    said = make_case(GROWING.replace("FRESH", fresh) + f"expect: {{compiles: {graphs}}}\n", name=f"said_{fresh}.yaml")
    record = run_variant(said, variant)
    assert record.status == "pass", record.reason
    script = render_short(said, variant, record.model_copy(update={"status": "fail"}))
    assert script is not None and ("compiled_anew(reset=False)" in script) == (fresh == "keep_cache")
    path = tmp_path / f"repro_{fresh}.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr  # the script counts the same graphs: it matches


REPEATED = DOUBLED_ON_AOT_EAGER + """\
calls:
  - {fresh: FRESH}
expect: {compiles: GRAPHS}
"""


@pytest.mark.parametrize(("fresh", "graphs"), [("keep_cache", 1), ("new_backend", 2)])
def test_a_new_backend_object_compiles_again_where_the_kept_cache_would_serve(
        make_case: CaseFactory, tmp_path: Path, fresh: str, graphs: int) -> None:
    """Upstream's new CompileCounter per torch.compile is another backend: dynamo reuses no frame compiled with the
    first, so the same call compiles again (fresh: new_backend), where the same backend would be served from the
    kept cache (keep_cache). The reproducer makes another backend object at the same call and counts the same."""
    lc = make_case(REPEATED.replace("FRESH", fresh).replace("GRAPHS", str(graphs)), name=f"{fresh}.yaml")
    variant = Variant("cpu", "aot_eager", "inference")
    record = run_variant(lc, variant)
    assert record.status == "pass" and record.compile_counts["cold_graphs"] == graphs, record.compile_counts
    wrong = make_case(REPEATED.replace("FRESH", fresh).replace("GRAPHS", str(3 - graphs)), name=f"w_{fresh}.yaml")
    record = run_variant(wrong, variant)
    assert record.status == "fail", record.reason
    script = render_short(wrong, variant, record)
    assert script is not None and ("new_backend=True" in script) == (fresh == "new_backend")
    path = tmp_path / f"repro_{fresh}.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == REPRO_DIFFERS and "graphs compiled" in done.stdout, done.stdout + done.stderr
