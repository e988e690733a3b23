"""Reproducers: the standalone builders match conformance.inputs bit for bit on the whole corpus,
and a generated script, run with plain `python`, prints the mismatch and exits 1, or exits 0."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from conformance import inputs as harness
from conformance.loader import LoadedCase, load_all, load_case
from conformance.report import standalone
from conformance.reproducer import case_data, render, script_name, wanted
from conformance.results import ResultRecord
from conformance.runner import variants_of

ROOT = Path(__file__).parents[2]
CORPUS, _ = load_all([ROOT / "cases", ROOT / "tests" / "resources" / "cases" / "valid"], ROOT / "cases")


def _storage_bytes(t: torch.Tensor) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage())


def _same_tensor(where: str, a: torch.Tensor, b: torch.Tensor) -> None:
    assert type(a) is type(b), where
    facts = lambda t: (t.dtype, t.device, t.shape, t.requires_grad, t.is_leaf, type(t.grad_fn).__name__,  # noqa: E731
                       t._base is not None)
    assert facts(a) == facts(b), where
    if hasattr(type(a), "__tensor_flatten__") and type(a) is not torch.Tensor:
        names, _ = type(a).__tensor_flatten__(a)
        for n in names:
            _same_tensor(f"{where}.{n}", getattr(a, n), getattr(b, n))
        return
    assert (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset()), where
    assert torch.equal(_storage_bytes(a), _storage_bytes(b)), f"{where}: storage bytes differ"


def _aliasing(named: dict[str, Any]) -> list[list[str]]:
    groups: dict[int, list[str]] = {}
    for name, t in harness.tensors_of(named).items():
        if type(t) is torch.Tensor:
            groups.setdefault(t.untyped_storage().data_ptr(), []).append(name)
    return sorted(groups.values())


def _cpu_buildable(lc: LoadedCase) -> bool:
    return "device:" not in lc.case.model_dump_json() or '"device":null' in lc.case.model_dump_json()


@pytest.mark.parametrize("lc", [c for c in CORPUS if _cpu_buildable(c)], ids=lambda c: c.id)
def test_standalone_builders_match_the_harness_bit_for_bit(lc: LoadedCase) -> None:
    data = case_data(lc)
    points = harness.call_points(lc.case)
    mine = standalone.call_points(data)
    assert [p.label for p in points] == [p[2] for p in mine]
    for mode in lc.case.modes:
        for point, my_point in zip(points, mine, strict=True):
            try:
                ref = harness.build_inputs(lc.case, "cpu", mode, point)
            except Exception as exc:  # the harness cannot build it either: the copy must fail alike
                with pytest.raises(type(exc)):
                    standalone.build_inputs(data, "cpu", mode, my_point)
                continue
            got = standalone.build_inputs(data, "cpu", mode, my_point)
            assert list(ref.named) == list(got.named)
            for name, value in ref.named.items():
                other = got.named[name]
                if isinstance(value, torch.nn.Module):
                    assert isinstance(other, torch.nn.Module)
                    for (pn, p), (qn, q) in zip((*value.named_parameters(), *value.named_buffers()),
                                                (*other.named_parameters(), *other.named_buffers()), strict=True):
                        assert pn == qn
                        _same_tensor(f"{mode} {point.label} {name}.{pn}", p, q)
                elif isinstance(value, torch.Tensor):
                    _same_tensor(f"{mode} {point.label} {name}", value, other)
                else:
                    assert (type(value), value) == (type(other), other)
            assert [list(ref.named).index(next(n for n, v in ref.named.items() if v is a)) for a in ref.args] == [
                list(got.named).index(next(n for n, v in got.named.items() if v is a)) for a in got.args]
            assert _aliasing(ref.named) == _aliasing(got.named)
            assert list(ref.grad_leaves) == list(got.grad_leaves)
            assert ref.dynamic_dims == got.dynamic_dims


# ----------------------------------------------------------------------------- generated scripts

# Run a script with the harness and its dependencies made unimportable: it must need only torch.
ONLY_TORCH = (
    "import runpy, sys\n"
    "for name in ('conformance', 'reference_impl', 'pydantic', 'yaml', 'pytest', 'jinja2', 'packaging'):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = [sys.argv[1]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def _records(results: Path) -> dict[str, ResultRecord]:
    return {r.case_id: r for r in (ResultRecord.model_validate_json(line) for line in results.read_text().splitlines())}


def test_the_run_writes_a_reproducer_per_failure_and_links_it(real_run: Path) -> None:
    recs = _records(real_run)
    folder = real_run.parent / "reproducers"
    for case_id, rec in recs.items():
        if rec.status in ("fail", "xpass") or (rec.status == "error" and rec.variant != "schema"):
            assert rec.reproducer == f"out/reproducers/{case_id.replace('/', '__')}__{rec.variant}.py"
            assert (real_run.parent.parent / rec.reproducer).is_file()
        else:
            assert rec.reproducer is None, case_id
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        script_name(r.case_id, r.variant) for r in recs.values() if wanted(r))
    assert not wanted(recs["scalar_recompile/broken"]) and not wanted(recs["mutation_epilogue/ok"])


@pytest.fixture(scope="module")
def script_outputs(real_run: Path) -> dict[str, tuple[int, str]]:
    """Every reproducer of the real run, run at once (each is a fresh process importing torch)."""
    procs = {}
    for case_id, rec in _records(real_run).items():
        if rec.reproducer is not None:
            procs[case_id] = subprocess.Popen(
                [sys.executable, "-c", ONLY_TORCH, str(real_run.parent.parent / rec.reproducer)],
                cwd=real_run.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return {case_id: (proc.wait(timeout=300), proc.communicate()[0]) for case_id, proc in procs.items()}


@pytest.mark.parametrize(("case_id", "code", "expected"), [
    ("runtime_wrapper/wrong_compiles", 3, "cold pass over 2 call(s): graphs compiled is 2, but expect.compiles "
                                          "gives 3 (a recompile per value)"),
    ("runtime_wrapper/diverges", 3, "out[0]: values is [2.5409960746765137, 0.706571102142334, -1.178"),
    ("subclass_wrapper/xpass", 0, "MATCHES: compiled behaves like eager"),
    ("backward_unwrap/eager_raises", 4, "CASE ERROR (eager itself fails, so the case is wrong, not the build): "
                                        "eager raised RuntimeError: shape '[3]' is invalid"),
])
def test_a_reproducer_needs_only_torch_and_prints_the_mismatch(real_run: Path, script_outputs: dict[str, tuple[
        int, str]], case_id: str, code: int, expected: str) -> None:
    returncode, out = script_outputs[case_id]
    assert returncode == code, out
    assert expected in out, out
    if code == 3:  # what it prints is what the harness recorded
        first = _records(real_run)[case_id].mismatches[0]
        assert f"{first.where}: {first.check} is {first.actual}" in out.split("MISMATCH")[1]


def test_reproducers_of_passing_corpus_cases_match(tmp_path: Path) -> None:
    """Rendered for passing corpus items (training with subclasses, a scalar sweep under config),
    the script's own comparison finds nothing: it judges as the runner does."""
    chosen = {c.id: c for c in CORPUS}
    picks = [("backward_unwrap/module_subclass_params", "aot_eager", "training"),
             ("scalar_recompile/optimizer_step", "aot_eager", "inference"),
             ("mutation_epilogue/meta_transpose_aot_function", "aot_function", "inference")]
    procs = []
    for case_id, backend, mode in picks:
        lc = chosen[case_id]  # renamed in the corpus? pick another case of the same kind
        variant = variants_of(lc.case, devices=["cpu"], backends=[backend], modes=[mode])[0]
        rec = ResultRecord(case_id=lc.id, variant=variant.label, status="fail", reason="pretend")
        path = tmp_path / script_name(lc.id, variant.label)
        path.write_text(render(lc, variant, rec))
        procs.append((lc.id, subprocess.Popen([sys.executable, "-c", ONLY_TORCH, str(path)], cwd=tmp_path,
                                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    for case_id, proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{case_id}:\n{out}"
        assert "MATCHES" in out


@pytest.mark.parametrize("value", [
    (torch.ones(1), [torch.ones(1), 2]),
    [torch.ones(1)],
    {"b": torch.ones(1), "a": (1.5, torch.ones(2))},
    torch.ones(3),
])
def test_standalone_structure_and_sharing_match_the_harness(value: Any) -> None:
    from conformance import snapshot

    assert standalone.output_structure(value) == snapshot.output_structure(value)
    base = torch.arange(6.0)
    tensors = {"x": base, "v": base[2:], "y": torch.ones(2), "z": torch.empty(0)}
    assert standalone.storage_sharing(tensors) == snapshot.storage_sharing(tensors)
    assert snapshot.output_structure((value,)) != snapshot.output_structure([value])


def test_a_reproducer_compiles_whatever_text_the_case_and_record_hold(tmp_path: Path) -> None:
    """Quotes, backslash escapes and NULs in the summary, links, file name and recorded reason."""
    hostile = 'ends with a quote" and """triple""" and \\N{BULLET} \\x00 \\u00e9 C:\\\\path\\\\'
    folder = tmp_path / "cases" / "runtime_wrapper"
    folder.mkdir(parents=True)
    path = folder / 'odd"""name.yaml'
    path.write_text(
        "behavior: runtime_wrapper\n"
        f"summary: {json.dumps(hostile)}\n"
        f"upstream: [{json.dumps('https://github.com/pytorch/pytorch/issues/1?q=' + hostile)}]\n"
        "devices: [cpu]\nbackends: [aot_eager]\n"
        "inputs:\n  x: {tensor: {shape: [2]}}\n"
        "program: |\n  def f(x):\n      return x.sin()  # ''' and \\\n")
    lc = load_case(path, tmp_path / "cases")
    variant = variants_of(lc.case)[0]
    rec = ResultRecord(case_id=lc.id, variant=variant.label, status="fail", reason=hostile + "\nsecond line")
    text = render(lc, variant, rec)
    compile(text, "repro.py", "exec")
    doc = ast.get_docstring(ast.parse(text))
    assert doc is not None and hostile.replace("\x00", "\\x00") in doc.replace("\x00", "\\x00")
    script = tmp_path / "repro.py"
    script.write_text(text)
    proc = subprocess.run([sys.executable, "-c", ONLY_TORCH, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0 and "MATCHES" in proc.stdout, proc.stdout + proc.stderr
