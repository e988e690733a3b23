"""The rules of the core (Note [One core]): torch and the standard library only, names unique
across its modules, so that a full reproducer can embed it as one block of source."""

from __future__ import annotations

import ast
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.core import CORE_MODULES
from conformance.reproducer.bundle import core_source

ROOT = Path(__file__).parents[2]
CORE = ROOT / "conformance" / "core"


def _tree(name: str) -> ast.Module:
    return ast.parse((CORE / f"{name}.py").read_text())


def test_every_core_module_is_listed_in_bundle_order() -> None:
    on_disk = {p.stem for p in CORE.glob("*.py")} - {"__init__"}
    assert set(CORE_MODULES) == on_disk
    for k, name in enumerate(CORE_MODULES):
        for node in ast.walk(_tree(name)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("conformance.core."):
                used = node.module.rsplit(".", 1)[1]  # type: ignore[union-attr]  # checked just above
                assert used in CORE_MODULES[:k], f"{name} imports {used}, which the bundle puts after it"


def test_the_core_imports_only_the_standard_library_and_torch() -> None:
    allowed = set(sys.stdlib_module_names) | {"torch", "functorch"}
    for name in CORE_MODULES:
        for node in ast.walk(_tree(name)):
            roots = []
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith("conformance.core"):
                roots = [node.module.split(".")[0]]
            for root in roots:
                assert root in allowed, f"conformance/core/{name}.py imports {root}"


def test_top_level_names_are_unique_across_the_core() -> None:
    seen: dict[str, str] = {}
    for name in CORE_MODULES:
        for node in _tree(name).body:
            defined = []
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                defined = [node.name]
            elif isinstance(node, ast.Assign):
                defined = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined = [node.target.id]
            for d in defined:
                assert d not in seen, f"{d} is defined in core/{seen[d]}.py and core/{name}.py"
                seen[d] = name


def test_the_bundle_is_one_valid_block_without_core_imports() -> None:
    source = core_source()
    tree = ast.parse("from __future__ import annotations\n" + source)
    own = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("conformance")]
    assert not own
    namespace: dict[str, object] = {}
    exec(compile("from __future__ import annotations\n" + source, "<bundle>", "exec"), namespace)
    assert {"run_passes", "Target", "build_inputs", "compare_call", "Mismatch"} <= set(namespace)


def test_a_storage_swapped_twice_is_seen_though_the_allocator_reuses_the_freed_address(tmp_path: Path) -> None:
    """`x.set_(x.clone())` twice frees the original storage after the first swap; the second clone
    is then usually allocated at its address. Found by the explorer's control (both sides eager):
    eager and compiled disagreed on "storage swapped" at random. The call keeps the inputs' old
    storages alive, so the swap is always seen, on both sides alike."""
    import textwrap

    from conformance.data.loader import load_case
    from conformance.data.variants import Variant
    from conformance.run.runner import RunOptions, run_variant

    case = tmp_path / "set_twice.yaml"
    case.write_text(textwrap.dedent("""\
        behavior: mutation_epilogue
        summary: set_ twice under no_grad, both sides eager.
        upstream: [https://github.com/pytorch/pytorch/pull/179600]
        inputs:
          a: {tensor: {shape: [2, 3, 4]}}
        calls: [{a: {tensor: {shape: [2, 3, 4]}}}, {a: {tensor: {shape: [2, 3, 4]}}}]
        program: |
          def f(a):
              with torch.no_grad():
                  a.set_(a.detach().clone())
                  a.set_(a.detach().clone())
              return a
        backends: [none]
        """))
    lc = load_case(case, tmp_path)
    statuses = [run_variant(lc, Variant("cpu", "none", "inference"), RunOptions(probe=False)) for _ in range(5)]
    assert [r.status for r in statuses] == ["pass"] * 5, [m.message() for r in statuses for m in r.mismatches]


def test_an_exception_that_wraps_another_is_summarised_with_its_cause_and_without_addresses() -> None:
    from conformance.core.mismatch import exception_summary

    class Counter:
        pass

    try:
        try:
            raise AssertionError("the real reason")
        except AssertionError as inner:
            raise RuntimeError(f"backend={Counter()!r} raised:\n{inner}") from inner
    except RuntimeError as exc:
        text = exception_summary(exc)
    assert "caused by AssertionError: the real reason" in text, text
    assert " at 0x" not in text.replace(" at 0x...", ""), text
    assert exception_summary(None) == "no exception"


@pytest.mark.parametrize("probe", [True, False])
def test_an_item_leaves_the_workers_modes_as_it_found_them(probe: bool, tmp_path: Path) -> None:
    """A caller action that turns autocast on (its reset left to `after:`, which the probe's replay
    of `before:` does not run, or missing) must not leak into the items after it in the worker."""
    import textwrap

    import torch

    from conformance.data.loader import load_case
    from conformance.data.variants import Variant
    from conformance.run.runner import RunOptions, run_variant

    case = tmp_path / "autocast.yaml"
    case.write_text(textwrap.dedent("""\
        behavior: runtime_wrapper
        summary: autocast turned on by the caller before the call and never reset.
        upstream: [https://github.com/pytorch/pytorch/pull/181271]
        inputs:
          x: {tensor: {shape: [4, 4]}}
        calls:
          - before: |
              torch.set_autocast_enabled(x.device.type, True)
              torch.set_grad_enabled(False)
        program: |
          def f(x):
              return x * 2
        backends: [aot_eager]
        """))
    lc = load_case(case, tmp_path)
    assert not torch.is_autocast_enabled("cpu") and torch.is_grad_enabled()
    run_variant(lc, Variant("cpu", "aot_eager", "inference"), RunOptions(probe=probe))
    assert not torch.is_autocast_enabled("cpu") and torch.is_grad_enabled()


def test_a_storage_is_told_apart_by_its_object_where_its_address_was_reused() -> None:
    """A storage freed during the call (resize_storage_bytes_(x, 0), then set_) hands its memory to
    the next allocation: on CUDA the caching allocator gave the new storage the same data_ptr, and
    "storage swapped" read False for one item in one of two runs. The snapshot holds the storage
    object, so the old one cannot be mistaken for the new one."""
    import torch

    from conformance.core.compare import input_change
    from conformance.core.state import tensor_state

    x = torch.zeros(8)
    before = tensor_state(x)
    with torch.no_grad():
        torch.ops.inductor.resize_storage_bytes_(x, 0)
        x.set_(torch.ones(2))
    after = tensor_state(x)
    assert input_change(before, after).storage_swapped
    # the same storage, seen twice: no swap, whatever its address
    assert not input_change(after, tensor_state(x)).storage_swapped
    # the address alone would have said "not swapped" had the allocator reused it
    reused = replace(after, storage=before.storage)
    assert before.storage == reused.storage
    assert input_change(before, reused).storage_swapped


def test_each_item_compiles_under_a_cache_key_of_its_own() -> None:
    import torch

    from conformance.core.compile import item_cache_key

    tags = []
    for parts in (("case A", "cpu"), ("case A", "cpu"), ("case B", "cpu")):
        with item_cache_key(*parts):
            tags.append(torch.compiler.config.cache_key_tag)
    assert torch.compiler.config.cache_key_tag == ""
    assert tags[0] == tags[1] != tags[2]
    assert all(t.startswith("torch-conformance-") for t in tags)


@pytest.mark.slow
def test_a_verdict_does_not_depend_on_the_item_a_worker_ran_before(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cases alike but for an input's offset (the windows overlap in one, not in the other):
    AOTAutograd's cache key leaves the aliasing out, so with shared caches the second item ran the
    first one's compiled wrapper (wrong values on CPU 2.13; an assertion on CUDA 2.11), in either
    order. Each item compiles under its own cache key now."""
    from conformance.data.loader import load_case
    from conformance.data.variants import Variant
    from conformance.run.runner import RunOptions, run_variant

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    cases = ROOT / "cases"
    overlapping = load_case(cases / "mutation_epilogue/upstream/overlapping_3d_window_then_slice.yaml", cases)
    disjoint = load_case(cases / "mutation_epilogue/upstream/false_aliasing_3d_window_then_slice.yaml", cases)
    variant = Variant("cpu", "inductor", "inference")
    for lc in (disjoint, overlapping, disjoint):
        record = run_variant(lc, variant, RunOptions(probe=False))
        assert record.status == "pass", (lc.id, [m.message() for m in record.mismatches])


def test_a_backend_failure_names_the_backend_the_user_chose_not_our_wrapper() -> None:
    import torch
    from torch._dynamo import register_backend

    from conformance.core.compile import make_compiled
    from conformance.core.mismatch import exception_summary
    from conformance.run.compiles import counting

    @register_backend(name="conformance_test_refuses")
    def refuses(gm: object, example_inputs: object) -> object:
        raise ValueError("this backend refuses every graph")

    spec = {"compile": {"dynamic": None, "fullgraph": False, "module": None}}
    for wrap in (None, counting):
        torch._dynamo.reset()
        args = () if wrap is None else (wrap,)
        compiled, _counter = make_compiled(lambda x: x.sin() + 1, spec, "conformance_test_refuses", False, *args)
        with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as exc:
            compiled(torch.ones(3))
        text = exception_summary(exc.value)
        assert "backend='conformance_test_refuses' raised" in text, text
        assert "caused by ValueError: this backend refuses every graph" in text, text
        assert "conformance." not in text and "object at" not in text, text


def test_every_mismatch_is_made_by_a_declared_check_and_every_check_is_used() -> None:
    from conformance.core.checks import CHECKS, C

    used: set[str] = set()
    for path in ROOT.joinpath("conformance").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Mismatch":
                assert path.name == "checks.py", f"{path}:{node.lineno}: a Mismatch made past the check table"
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "CHECKS"
                    and isinstance(node.slice, ast.Constant)):
                raise AssertionError(f"{path}:{node.lineno}: a check looked up by a string (name it: C.<CHECK>)")
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "C"
                    and path.name != "checks.py"):
                used.add(getattr(C, node.attr).id)  # an AttributeError: a check named but not declared
    assert set(CHECKS) - used == set(), "declared checks nothing judges"
    assert all(c.observe or c.id == "internals probe" for c in CHECKS.values())


@pytest.mark.parametrize("wrap", ["plain", "counting"])
def test_the_compile_count_is_what_dynamo_installed_not_every_backend_call(wrap: str) -> None:
    """A float equality branch under specialize_float=False: the value the branch reads cannot stay a
    tensor, so dynamo aborts that compile (its tensorify restart raises out of the backend) and
    traces the frame again. The count is the graphs dynamo installed, as its own cache holds them;
    the backend calls keep the aborted one."""
    import torch
    import torch._dynamo
    from torch._dynamo import eval_frame

    from conformance.core.compile import make_compiled
    from conformance.run.compiles import counting

    entries = getattr(eval_frame, "_debug_get_cache_entry_list", None)
    if entries is None:
        pytest.skip("this build has no way to list dynamo's cache entries")

    def f(x: torch.Tensor, y: float) -> torch.Tensor:
        if y == 5.0:
            return x + 2
        return x + y

    spec = {"compile": {"dynamic": None, "fullgraph": True, "module": None}}
    torch._dynamo.reset()
    with torch._dynamo.config.patch(specialize_float=False, assume_static_by_default=True):
        compiled, counter = make_compiled(f, spec, "aot_eager", False, *(() if wrap == "plain" else (counting,)))
        for y in (2.0, 3.0, 4.0, 5.0):
            compiled(torch.ones(3), y)
    installed = len(entries(f.__code__))
    assert counter.count == installed, (counter.count, counter.backend_calls, installed)
    assert counter.backend_calls >= counter.count


def test_a_compile_the_backend_aborts_is_not_counted() -> None:
    from conformance.core.compile import CountingBackend

    calls = []

    def inner(gm: object, example_inputs: object) -> object:
        calls.append(gm)
        if len(calls) == 1:
            raise RuntimeError("restart analysis")  # what dynamo's restart raises through the backend
        return gm

    counter = CountingBackend(inner)
    with pytest.raises(RuntimeError):
        counter("graph", [])
    assert counter("graph", []) == "graph"
    assert (counter.count, counter.backend_calls) == (1, 2)


def test_a_refusal_is_compared_by_kind_not_by_the_node_that_made_the_view() -> None:
    from conformance.core.state import refusal

    tail = " is a view and its base or another view of its base has been modified inplace. This view is ..."
    nodes = ((1, "UnbindBackward0"), (0, "CompiledFunctionBackward"), (0, "Select"))
    eager, compiled, inference = (refusal(RuntimeError(f"Output {k} of {node}{tail}")) for k, node in nodes)
    assert eager == compiled == inference
    assert eager.startswith("raises RuntimeError: A view's output is a view and its base")
    assert refusal(RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")) != eager
    assert refusal(ValueError(f"Output 1 of Unbind{tail}")) != eager  # the type is part of the kind


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_an_arange_input_is_a_tensor_of_its_own_not_a_view_of_the_range(dtype: str, tmp_path: Path) -> None:
    """Its values and geometry as declared, in a storage of exactly its elements, with no `_base`
    (a program that mutates it must not write into a hidden range)."""
    import torch

    from conformance.core.build import build_inputs, input_code
    from conformance.data.loader import load_case

    path = tmp_path / "a.yaml"
    path.write_text("behavior: mutation_epilogue\nsummary: s\nupstream: [https://github.com/pytorch/pytorch/pull/179600]\n"
                    "program: |\n  def f(x):\n      return x + 1\n"
                    f"inputs:\n  x: {{tensor: {{shape: [2, 3], init: arange, dtype: {dtype}}}}}\n")
    lc = load_case(path, tmp_path)
    x = build_inputs(lc.data, "cpu", "inference").named["x"]
    assert x._base is None and x.untyped_storage().nbytes() == 6 * x.element_size(), x
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and x.dtype == getattr(torch, dtype)
    code = "\n".join(input_code(lc.data, "cpu", "inference", None, persisted=set(), classes={}).lines)
    assert ("place(" in code) == (dtype == "float64"), code  # only float64's `.to` leaves the view
