"""Reproducers: written per failure during the run, torch as their only import; the short one
shows the first mismatch in a few dozen lines, the full one embeds the harness's core and
judges as the runner does (Note [One core])."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.data.loader import load_all, load_case
from conformance.data.variants import variants_of
from conformance.reproducer import script_name, wanted
from conformance.reproducer.full import render_full
from conformance.reproducer.short import render_short
from conformance.results import ResultRecord

ROOT = Path(__file__).parents[2]
CORPUS, _ = load_all([ROOT / "cases"], ROOT / "cases")

# Run a script with the harness and its dependencies made unimportable: it must need only torch.
ONLY_TORCH = (
    "import runpy, sys\n"
    "for name in ('conformance', 'reference_impl', 'pydantic', 'yaml', 'pytest', 'jinja2', 'packaging'):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = [sys.argv[1]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


FULL_LINES = 1000  # a full reproducer embeds the core (some 2000 lines); a short one is a few hundred


def _records(results: Path) -> dict[str, ResultRecord]:
    return {r.case_id: r for r in (ResultRecord.model_validate_json(line) for line in results.read_text().splitlines())}


def _run(script: Path, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", ONLY_TORCH, str(script)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_the_run_writes_a_reproducer_per_failure_and_links_it(real_run: Path) -> None:
    recs = _records(real_run)
    folder = real_run.parent / "reproducers"
    for case_id, rec in recs.items():
        if rec.status in ("fail", "xfail", "xpass") or (rec.status == "error" and rec.variant != "schema"):
            assert rec.reproducer == f"out/reproducers/{case_id.replace('/', '__')}__{rec.variant}.py"
            assert (real_run.parent.parent / rec.reproducer).is_file()
        else:
            assert rec.reproducer is None, case_id
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        script_name(r.case_id, r.variant) for r in recs.values() if wanted(r))
    assert not wanted(recs["scalar_recompile/broken"]) and not wanted(recs["mutation_epilogue/ok"])


@pytest.fixture(scope="module")
def script_outputs(real_run: Path) -> dict[str, tuple[int, str, int]]:
    """Every reproducer of the real run, run at once: (exit status, output, lines)."""
    procs = {}
    for case_id, rec in _records(real_run).items():
        if rec.reproducer is not None:
            procs[case_id] = _run(real_run.parent.parent / rec.reproducer, real_run.parent)
    lines = {case_id: len((real_run.parent.parent / rec.reproducer).read_text().splitlines())
             for case_id, rec in _records(real_run).items() if rec.reproducer is not None}
    return {case_id: (proc.wait(timeout=300), proc.communicate()[0], lines[case_id]) for case_id, proc in procs.items()}


@pytest.mark.parametrize(("case_id", "code", "expected", "short"), [
    ("runtime_wrapper/wrong_compiles", 3, "MISMATCH: cold pass over 2 call(s): graphs compiled is 2, but "
                                          "expect.compiles gives 3", True),
    ("runtime_wrapper/diverges", 3, "MISMATCH: out[0]: values is ", True),
    ("subclass_wrapper/xpass", 0, "MATCHES: compiled behaves like eager", True),  # every check: none differs
    ("backward_unwrap/eager_raises", 4, "CASE ERROR (eager itself fails, so the case is wrong, not the build): "
                                        "eager raised RuntimeError: shape '[3]' is invalid", False),
])
def test_a_reproducer_needs_only_torch_and_says_what_it_found(
        script_outputs: dict[str, tuple[int, str, int]], case_id: str, code: int, expected: str, short: bool) -> None:
    returncode, out, lines = script_outputs[case_id]
    assert returncode == code, out
    assert expected in out, out
    assert (lines < FULL_LINES) == short, lines  # the short form where plain torch shows the record, else the full one


def test_full_reproducers_are_written_beside_on_request(tmp_path: Path) -> None:
    case = ROOT / "tests" / "resources" / "cases" / "valid" / "mutation.yaml"
    folder = tmp_path / "cases" / "mutation_epilogue"
    folder.mkdir(parents=True)
    text = case.read_text().replace("x.mul_(2)", "x.mul_(2)\n      if torch.compiler.is_compiling():\n"
                                                 "          x.add_(1)")
    (folder / "wrong.yaml").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "conformance", "run", "-q", "--cases", "cases", "--full-reproducers",
                           "--backends", "aot_eager", "--modes", "inference", "--results", "out/r.jsonl"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 1, proc.stdout[-3000:]
    (rec,) = _records(tmp_path / "out" / "r.jsonl").values()
    short = tmp_path / rec.reproducer  # type: ignore[operator]  # a failure has one
    full = short.with_name(script_name(rec.case_id, rec.variant, full=True))
    assert full.is_file() and len(short.read_text().splitlines()) < FULL_LINES
    outputs = {p.name: _run(p, tmp_path) for p in (short, full)}
    for name, p in outputs.items():
        out = p.communicate(timeout=300)[0]
        assert p.returncode == 3, (name, out)
        assert "out[0]: values" in out and "MISMATCH" in out, (name, out)


def test_full_reproducers_of_passing_corpus_items_find_nothing(tmp_path: Path) -> None:
    """The full script's embedded core judges as the runner does: on passing items, nothing."""
    chosen = {c.id: c for c in CORPUS}
    picks = [("backward_unwrap/module_subclass_params", "aot_eager", "training"),
             ("scalar_recompile/optimizer_step", "aot_eager", "inference"),
             ("mutation_epilogue/meta_transpose_aot_function", "aot_function", "inference")]
    procs = []
    for case_id, backend, mode in picks:
        lc = chosen[case_id]  # renamed in the corpus? pick another case of the same kind
        variant = variants_of(lc.case, devices=["cpu"], backends=[backend], modes=[mode])[0]
        rec = ResultRecord(case_id=lc.id, variant=variant.label, status="fail", reason="pretend")
        path = tmp_path / script_name(lc.id, variant.label, full=True)
        path.write_text(render_full(lc, variant, rec))
        procs.append((lc.id, _run(path, tmp_path)))
    for case_id, proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{case_id}:\n{out}"
        assert "MATCHES" in out


def test_a_reproducer_compiles_whatever_text_the_case_and_record_hold(tmp_path: Path) -> None:
    """Quotes, backslash escapes and NULs in the summary, links, file name and recorded reason."""
    hostile = 'ends with a quote" and """triple""" and \\N{BULLET} \\x00 \\u00e9 C:\\\\path\\\\'
    folder = tmp_path / "cases" / "runtime_wrapper"
    folder.mkdir(parents=True)
    path = folder / 'odd"""name.yaml'
    path.write_text(  # a file name no id may be (an `id:` then says which case it is)
        "id: runtime_wrapper/odd_name\nbehavior: runtime_wrapper\n"
        f"summary: {json.dumps(hostile)}\n"
        f"upstream: [{json.dumps('https://github.com/pytorch/pytorch/issues/1?q=' + hostile)}]\n"
        "devices: [cpu]\nbackends: [aot_eager]\n"
        "inputs:\n  x: {tensor: {shape: [2]}}\n"
        "program: |\n  def f(x):\n      return x.sin()  # ''' and \\\n")
    lc = load_case(path, tmp_path / "cases")
    variant = variants_of(lc.case)[0]
    recorded = {"check": "values", "where": "out[0]", "path": "out[0]", "role": "output", "subject": "out[0]",
                "expected": hostile, "actual": "[1.0]", "detail": hostile}
    rec = ResultRecord.model_validate({"case_id": lc.id, "variant": variant.label, "status": "fail",
                                       "reason": hostile + "\nsecond line", "mismatches": [recorded]})
    for render in (render_short, render_full):
        text = render(lc, variant, rec)
        assert text is not None
        compile(text, "repro.py", "exec")
        doc = ast.get_docstring(ast.parse(text))
        assert doc is not None and hostile.splitlines()[0] in doc
        script = tmp_path / f"{render.__name__}.py"
        script.write_text(text)
        proc = subprocess.run([sys.executable, "-c", ONLY_TORCH, str(script)], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300, check=False)
        assert proc.returncode == 0 and "MATCHES" in proc.stdout, proc.stdout + proc.stderr


# Corpus cases that fail as declared on the releases the suite runs on, one per kind of check:
# a graph count, an autograd field of an output, a backward exception, the output structure.
KNOWN_FAILING = [
    ("scalar_recompile/clamp_op_argument", "aot_eager", "inference"),
    ("runtime_wrapper/grad_mode_disabled_then_view", "aot_eager", "training"),
    ("mutation_epilogue/aliased_inputs_disjoint_views", "aot_eager", "training"),
    ("runtime_wrapper/upstream/first_and_third_scaled_views_of_second_and_third", "aot_eager", "training"),
    ("mutation_epilogue/explored/data_assign_after_mutation_grad", "aot_eager", "training"),
]


@pytest.mark.slow
def test_short_reproducers_of_known_failing_corpus_items_are_short_and_reproduce(tmp_path: Path) -> None:
    from conformance.run.runner import run_variant

    chosen = {c.id: c for c in CORPUS}
    procs = []
    for case_id, backend, mode in KNOWN_FAILING:
        lc = chosen[case_id]
        variant = variants_of(lc.case, devices=["cpu"], backends=[backend], modes=[mode])[0]
        record = run_variant(lc, variant)
        if record.status not in ("fail", "xfail"):
            continue  # fixed on this build: nothing to reproduce
        text = render_short(lc, variant, record)
        assert text is not None, f"{case_id}: no short form for {record.mismatches[0].message()}"
        path = tmp_path / script_name(lc.id, variant.label)
        path.write_text(text)
        procs.append((case_id, record.mismatches[0], _run(path, tmp_path)))
    outs = [(case_id, first, proc, proc.communicate(timeout=300)[0]) for case_id, first, proc in procs]
    assert len(procs) >= 3, "most of these known failures must fail on any supported release"
    for case_id, first, proc, out in outs:  # every process waited for before a first assertion can fail
        assert proc.returncode == 3, f"{case_id}:\n{out}"
        shown = out.replace("compiled has none", first.check)  # an output or inner tensor it lacks: one line
        assert "MISMATCH: " in out and f"{first.path}: {first.check}" in shown, (case_id, out)


def test_calls_that_differ_only_in_a_swept_value_become_one_loop_and_no_others_do() -> None:
    from conformance.reproducer.short import _loop, _runs

    def call(i: int, lr: str, shape: str = "(3,)") -> list[str]:
        return [f"# call {i}: lr={lr}", "g = torch.Generator().manual_seed(0)",
                f"x = torch.randn({shape}, generator=g)", f"lr = {lr}", "out = fn(x, lr)"]

    calls = [call(1, "0.1"), call(2, "float('nan')"), call(3, "0.1"), call(4, "0.2", shape="(4,)"), call(5, "0.3")]
    runs = _runs(calls)
    assert [(first, len(run)) for first, run in runs] == [(0, 3), (3, 1), (4, 1)]  # another shape: not folded
    assert _loop(*runs[0]) == ["for lr in [0.1, float('nan'), 0.1]:  # calls 1 to 3",
                               "    g = torch.Generator().manual_seed(0)", "    x = torch.randn((3,), generator=g)",
                               "    out = fn(x, lr)"]
    other_code = [call(1, "0.1"), [*call(2, "0.2")[:-1], "out = fn(x, lr); x.add_(1)"]]
    assert [len(run) for _, run in _runs(other_code)] == [1, 1]
    computed = [call(1, "0.1"), call(2, "x.sum().item()")]  # a value computed from the inputs stays in place
    assert [len(run) for _, run in _runs(computed)] == [1, 1]


def test_a_program_that_returns_one_tensor_is_backwarded_through_it_without_the_general_helpers() -> None:
    """One plain tensor out (seen by calling the program eagerly): `out.backward(tangent)`, the tangent
    the harness draws; a program that returns several keeps backward_outputs (the test above)."""
    lc = next(c for c in CORPUS if c.id == "mutation_epilogue/upstream/custom_op_backward_zeroes_input")
    lc = dataclasses.replace(lc, case=lc.case.model_copy(update={"backward": "seeded"}))  # the seeded tangent's form
    variant = variants_of(lc.case, devices=["cpu"], backends=["aot_eager"], modes=["training"])[0]
    m = {"check": "values", "where": "out[0]", "path": "out[0]", "role": "output", "subject": "out[0]",
         "expected": "[1.0]", "actual": "[2.0]"}
    rec = ResultRecord.model_validate({"case_id": lc.id, "variant": variant.label, "status": "fail",
                                       "mismatches": [m]})
    text = render_short(lc, variant, rec)
    assert text is not None
    compile(text, "repro.py", "exec")
    assert "out.backward(tangent(out, torch.Generator().manual_seed(" in text, text
    assert "def backward_outputs" not in text, text
    assert "look(out, " in text, text  # the subject is the output itself


def test_a_script_of_plain_tensors_carries_the_tangent_without_its_subclass_branch() -> None:
    """The same function either way: the branch left out is the one only a subclass takes."""
    import torch

    from conformance.core import call
    from conformance.reproducer.short import _plain

    plain, full = _plain(call.tangent, plain=True), _plain(call.tangent)
    assert "__tensor_flatten__" not in plain and "__tensor_flatten__" in full, (plain, full)
    scope: dict[str, object] = {"torch": torch}
    exec(plain, scope)  # the harness's own function, as a script carries it
    for x in (torch.randn(3, 2, dtype=torch.float64), torch.randn(2, dtype=torch.complex64)):
        ours = scope["tangent"](x, torch.Generator().manual_seed(5))  # type: ignore[operator]  # exec'd above
        torch.testing.assert_close(ours, call.tangent(x, torch.Generator().manual_seed(5)))


def _short(case_id: str, backend: str, mode: str, m: dict[str, object]) -> str:
    lc = next(c for c in CORPUS if c.id == case_id)
    variant = variants_of(lc.case, devices=["cpu"], backends=[backend], modes=[mode])[0]
    rec = ResultRecord.model_validate({"case_id": lc.id, "variant": variant.label, "status": "fail", "mismatches": [m]})
    text = render_short(lc, variant, rec)
    assert text is not None
    compile(text, "repro.py", "exec")
    return text


def test_the_subclass_branch_and_the_previous_out_are_carried_only_where_a_case_needs_them() -> None:
    grad: dict[str, object] = {"check": "values", "where": "grad of x", "path": "grad of x", "role": "grad",
                               "subject": "x", "expected": "[1.0]", "actual": "[2.0]"}
    plain = _short("mutation_epilogue/upstream/custom_op_backward_zeroes_input", "aot_eager", "training", grad)
    assert "type(out).__tensor_flatten__" not in plain, plain  # tangent's subclass branch
    create = _short("runtime_wrapper/client/eval_train_toggle", "aot_eager", "inference",
                    {"check": "exception", "where": "call", "path": "call", "role": "", "subject": "",
                     "expected": "no exception", "actual": "RuntimeError: x", "call": 2})
    assert "# the caller, before the call" in create and "out = None" not in create, create  # no action reads it
    two = _short("subclass_wrapper/dynamic_views", "aot_eager", "training",
                 {**grad, "where": "grad of x", "path": "grad of x", "subject": "x"})
    assert "type(out).__tensor_flatten__" in two, two
    caller = _short("runtime_wrapper/client/caller_writes_returned_view", "aot_eager", "inference",
                    {"check": "values", "where": "input x", "path": "input x", "role": "input", "subject": "x",
                     "expected": "[1.0]", "actual": "[2.0]", "call": 2})
    assert "out = None" in caller, caller  # its first `before` reads the previous call's out


def test_a_program_that_returns_no_tensor_gets_no_backward() -> None:
    """backward_outputs of no tensor does nothing, so the script writes none (and none of its helpers)."""
    m = {"check": "exception", "where": "call", "path": "call", "role": "", "subject": "", "call": 2,
         "expected": "no exception", "actual": "BackendCompilerFailed: x"}
    text = _short("subclass_wrapper/explored/twotensor_mutated_then_transposed_call", "inductor", "training", m)
    assert "backward" not in text and "def tangent" not in text, text
    assert "out = fn(a, b)" in text, text


def test_a_leaf_named_only_to_make_a_non_leaf_is_built_in_place_and_a_read_leaf_keeps_its_name() -> None:
    from conformance.reproducer.short import _unnamed_leaves

    call = ["b_leaf = torch.randn((3,), generator=g).requires_grad_()", "b = non_leaf(b_leaf)", "out = fn(b)"]
    assert _unnamed_leaves([call, call]) == [
        ["b = non_leaf(torch.randn((3,), generator=g).requires_grad_())", "out = fn(b)"]] * 2
    read = [*call, "return b_leaf.grad.detach()"]
    assert _unnamed_leaves([read]) == [read]  # the check reads the leaf
    assert _unnamed_leaves([call, ["out = fn(b)", "return b_leaf.grad"]])[0] == call  # a later call reads it
