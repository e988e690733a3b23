"""Seeded faults: deliberately broken builds that prove every oracle can fail.

Contract-level faults wrap the compiled callable and break one contract (they work on any
build). Internals-level faults rewrite one function the build generates, before the build
logs and executes it (only on builds whose codegen goes through a known exec helper), so the
probe must see `diverges` and, where the change is observable, a contract check must fail.

A fault is applied by passing it in `RunOptions.fault` for one run only: a wrapper touches no
global, and an internals patch is undone when the variant ends (also on error), so a normal
run in the same process is untouched (tests/harness/test_selftest.py shows it).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from conformance.snapshot import flatten_outputs, is_subclass, storage_key

Compiled = Callable[..., Any]


@dataclass(frozen=True)
class Fault:
    name: str
    behavior: str
    contract: str
    wrap: Callable[[Compiled], Compiled] | None = None
    patch: Callable[[Fault], contextlib.AbstractContextManager[None]] | None = None
    level: Literal["contract", "internals"] = "contract"
    hits: list[str] = field(default_factory=list, compare=False)  # generated functions rewritten

    def reset(self) -> None:
        self.hits.clear()


def _float_tensors(args: tuple[Any, ...]) -> list[torch.Tensor]:
    return [a for a in args if isinstance(a, torch.Tensor) and a.dtype.is_floating_point]


def _map_outputs(out: Any, fn: Callable[[torch.Tensor, int], torch.Tensor]) -> Any:
    counter = iter(range(10**9))

    def go(value: Any) -> Any:
        if isinstance(value, tuple | list):
            return type(value)(go(v) for v in value)
        if isinstance(value, torch.Tensor):
            return fn(value, next(counter))
        return value

    return go(out)


def perturb_output(scale: float = 1e-2) -> Callable[[Compiled], Compiled]:
    def wrap(compiled: Compiled) -> Compiled:
        @functools.wraps(compiled)
        def call(*args: Any) -> Any:
            out = compiled(*args)

            def bump(t: torch.Tensor, k: int) -> torch.Tensor:
                if k == 0 and t.dtype.is_floating_point:
                    return t + scale * (t.detach().abs() + 1)
                return t

            return _map_outputs(out, bump)

        return call

    return wrap


def skip_input_mutation(compiled: Compiled) -> Compiled:
    """Run on copies of the tensor inputs: a mutation lands on the copy, not the caller's input."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        copies = [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a
                  for a in args]
        return compiled(*copies)

    return call


def copy_aliased_outputs(compiled: Compiled) -> Compiled:
    """Return a copy where an output shares storage with an input (the alias is lost)."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        keys = {storage_key(a) for a in args if isinstance(a, torch.Tensor)} - {None}
        out = compiled(*args)

        def unalias(t: torch.Tensor, _k: int) -> torch.Tensor:
            if storage_key(t) in keys or any(t is a for a in args):
                return t.clone()
            return t

        return _map_outputs(out, unalias)

    return call


def leave_grad_mode_flipped(compiled: Compiled) -> Compiled:
    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        out = compiled(*args)
        torch.set_grad_enabled(not torch.is_grad_enabled())
        return out

    return call


def undo_metadata_mutation(compiled: Compiled) -> Compiled:
    """Put every input's size/stride/offset back after the call (a metadata mutation is lost)."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        geometry = [(a, a.size(), a.stride(), a.storage_offset()) for a in args
                    if isinstance(a, torch.Tensor) and not is_subclass(a)]
        out = compiled(*args)
        with torch.no_grad():
            for a, size, stride, offset in geometry:
                if (a.size(), a.stride(), a.storage_offset()) != (size, stride, offset):
                    a.as_strided_(size, stride, offset)
        return out

    return call


def copy_instead_of_set(compiled: Compiled) -> Compiled:
    """Where the call swapped an input's storage (set_), copy the values into the old one instead."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        before = [(a, a.untyped_storage()) for a in args if isinstance(a, torch.Tensor) and not is_subclass(a)]
        out = compiled(*args)
        with torch.no_grad():
            for a, storage in before:
                if a.untyped_storage().data_ptr() != storage.data_ptr():
                    # the values arrive, the storage identity does not: a copy into own memory
                    values = a.detach().clone()
                    own = storage if storage.nbytes() >= a.untyped_storage().nbytes() else (
                        torch.empty(a.untyped_storage().nbytes(), dtype=torch.uint8, device=a.device).untyped_storage()
                    )
                    a.set_(own, a.storage_offset(), a.size(), a.stride())
                    a.copy_(values)
        return out

    return call


def keep_version_counter(compiled: Compiled) -> Compiled:
    """Reset inputs' version counters after the call (autograd would miss the mutation)."""
    setter = getattr(torch._C._autograd, "_unsafe_set_version_counter", None)

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        versions = [t._version for t in tensors]
        out = compiled(*args)
        if setter is not None:
            for t, v in zip(tensors, versions, strict=True):
                setter((t,), (v,))
        return out

    return call


def outputs_as_list(compiled: Compiled) -> Compiled:
    """Return a tuple of outputs as a list (values and aliasing intact, the caller's unpacking not)."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        out = compiled(*args)
        return list(out) if type(out) is tuple else out

    return call


def perturb_gradient(compiled: Compiled) -> Compiled:
    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        out = compiled(*args)
        for t in flatten_outputs(out):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                t.register_hook(lambda g: g * 1.05)  # type: ignore[no-untyped-call]  # torch leaves it untyped
        return out

    return call


def reuse_first_scalars(compiled: Compiled) -> Compiled:
    """Every call sees the Python scalars of the first call (a sweep that ignores new values)."""
    first: list[Any] = []

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        if not first:
            first.extend(args)
        fixed = [f if isinstance(a, float | int) and isinstance(f, float | int) else a
                 for a, f in zip(args, first, strict=False)]
        return compiled(*fixed)

    return call


def recompile_every_call(compiled: Compiled) -> Compiled:
    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        import torch._dynamo

        torch._dynamo.reset()
        return compiled(*args)

    return call


FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        Fault("output_perturbed", "runtime_wrapper", "outputs equal eager within tolerance", perturb_output()),
        Fault("output_just_beyond_tolerance", "runtime_wrapper", "outputs equal eager within tolerance",
              perturb_output(1e-4)),
        Fault("input_mutation_dropped", "mutation_epilogue", "mutated inputs end as in eager (copy_)",
              skip_input_mutation),
        Fault("outputs_restructured", "runtime_wrapper", "outputs keep eager's container structure",
              outputs_as_list),
        Fault("alias_returned_as_copy", "runtime_wrapper", "outputs aliasing inputs are real views",
              copy_aliased_outputs),
        Fault("grad_mode_left_changed", "runtime_wrapper", "grad mode restored after the call",
              leave_grad_mode_flipped),
        Fault("metadata_not_restored", "mutation_epilogue", "size/stride/offset end as in eager (as_strided_)",
              undo_metadata_mutation),
        Fault("storage_not_swapped", "mutation_epilogue", "storage identity ends as in eager (set_)",
              copy_instead_of_set),
        Fault("version_not_bumped", "mutation_epilogue", "version counters move as in eager",
              keep_version_counter),
        Fault("gradient_perturbed", "backward_unwrap", "gradients equal eager", perturb_gradient),
        Fault("sweep_reuses_first_value", "scalar_recompile", "every swept value gives eager's result",
              reuse_first_scalars),
        Fault("recompile_every_value", "scalar_recompile", "one compile for the whole sweep",
              recompile_every_call),
    )
}


# --- internals-level faults -------------------------------------------------------------

# Every generated wrapper goes through one helper that logs and execs the source; its home
# moved between releases. A build without it cannot take internals faults (reported as such).
CODEGEN_EXEC = (
    ("torch._functorch._aot_autograd.subclass_codegen", "_compile_and_exec_source"),
    ("torch._functorch._aot_autograd.codegen", "_compile_and_exec_source"),
)
Transform = Callable[[str], str | None]


class FaultNotApplicable(Exception):
    """The build has no place to inject this fault (e.g. it generates no code at all)."""


def codegen_exec_targets() -> list[tuple[Any, str]]:
    found = []
    for module_name, attr in CODEGEN_EXEC:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if callable(getattr(module, attr, None)):
            found.append((module, attr))
    return found


def _rewrite_codegen(artifact: str, transform: Transform) -> Callable[[Fault], contextlib.AbstractContextManager[None]]:
    @contextlib.contextmanager
    def patch(fault: Fault) -> Iterator[None]:
        targets = codegen_exec_targets()
        if not targets:
            raise FaultNotApplicable(
                "this build has no codegen exec helper (" + ", ".join(f"{m}.{a}" for m, a in CODEGEN_EXEC) + ")"
            )
        saved = [(module, attr, getattr(module, attr)) for module, attr in targets]

        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def rewritten(source: str, globals_dict: Any, fn_name: str, artifact_name: str, *a: Any, **k: Any) -> Any:
                if artifact_name == artifact:
                    changed = transform(source)
                    if changed is not None and changed != source:
                        fault.hits.append(artifact_name)
                        source = changed
                return original(source, globals_dict, fn_name, artifact_name, *a, **k)

            return rewritten

        try:
            for module, attr, original in saved:
                setattr(module, attr, make(original))
            yield
        finally:
            for module, attr, original in saved:
                setattr(module, attr, original)

    return patch


def _function(tree: ast.Module) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)


def _edit(source: str, edit: Callable[[ast.FunctionDef], bool]) -> str | None:
    tree = ast.parse(source)
    fn = _function(tree)
    if fn is None or not edit(fn):
        return None
    if not fn.body:
        fn.body = [ast.Pass()]
    return ast.unparse(ast.fix_missing_locations(tree))


def _drop_last_statement(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        if not fn.body:
            return False
        fn.body.pop()
        return True

    return _edit(source, edit)


def _calls(node: ast.AST, method: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == method for n in ast.walk(node))


def _set_to_copy(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        hit = False
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_":
                node.func.attr = "copy_"
                node.args = node.args[:1]
                hit = True
        return hit

    return _edit(source, edit)


def _drop_as_strided(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        before = len(fn.body)
        fn.body = [s for s in fn.body if not _calls(s, "as_strided_")]
        return len(fn.body) != before

    return _edit(source, edit)


def _shift_slot(source: str) -> str | None:
    """`updated_inputs[k]` → `updated_inputs[k+1]` modulo the slots used (a rotation when there
    are several, an out-of-range slot when there is one)."""

    def edit(fn: ast.FunctionDef) -> bool:
        subs = [n for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                and n.value.id == "updated_inputs" and isinstance(n.slice, ast.Constant)
                and isinstance(n.slice.value, int)]
        used = sorted({int(n.slice.value) for n in subs})  # type: ignore[attr-defined]  # filtered above
        if not used:
            return False
        rotate = {k: used[(i + 1) % len(used)] if len(used) > 1 else k + 1 for i, k in enumerate(used)}
        for n in subs:
            n.slice = ast.Constant(rotate[int(n.slice.value)])  # type: ignore[attr-defined]  # filtered above
        return True

    return _edit(source, edit)


def _drop_requires_grad_branch(source: str) -> str | None:
    """`if x.requires_grad: A else: B` → `B`: a leaf that requires grad gets the plain copy_."""

    def edit(fn: ast.FunctionDef) -> bool:
        hit = False
        body: list[ast.stmt] = []
        for stmt in fn.body:
            if isinstance(stmt, ast.If) and any(
                isinstance(n, ast.Attribute) and n.attr == "requires_grad" for n in ast.walk(stmt.test)
            ):
                body.extend(stmt.orelse)
                hit = True
            else:
                body.append(stmt)
        fn.body = body
        return hit

    return _edit(source, edit)


def _unwrap_drops_last(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        hit = False
        for node in ast.walk(fn):
            if isinstance(node, ast.Return) and node.value is not None:
                node.value = ast.Subscript(node.value, ast.Slice(None, ast.Constant(-1)), ast.Load())
                hit = True
        return hit

    return _edit(source, edit)


def _is_type_check(stmt: ast.stmt) -> bool:
    test = stmt.test if isinstance(stmt, ast.If | ast.Assert) else None
    return test is not None and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("type", "isinstance")
        for n in ast.walk(test)
    )


def _drop_type_checks(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        before = len(fn.body)
        fn.body = [s for s in fn.body if not _is_type_check(s)]
        return len(fn.body) != before

    return _edit(source, edit)


def _internals(name: str, behavior: str, contract: str, artifact: str, transform: Transform) -> Fault:
    return Fault(name, behavior, contract, patch=_rewrite_codegen(artifact, transform), level="internals")


INTERNAL_FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        _internals("epilogue_statement_dropped", "mutation_epilogue",
                   "one statement group per mutated input", "mutation_epilogue", _drop_last_statement),
        _internals("epilogue_set_as_copy", "mutation_epilogue",
                   "a storage swap is applied with set_", "mutation_epilogue", _set_to_copy),
        _internals("epilogue_as_strided_dropped", "mutation_epilogue",
                   "a metadata mutation is applied with as_strided_", "mutation_epilogue", _drop_as_strided),
        _internals("epilogue_slot_shifted", "mutation_epilogue",
                   "each mutation lands on its own input", "mutation_epilogue", _shift_slot),
        _internals("epilogue_requires_grad_branch_dropped", "mutation_epilogue",
                   "a leaf that requires grad is written through detach()", "mutation_epilogue",
                   _drop_requires_grad_branch),
        _internals("unwrap_drops_last_arg", "backward_unwrap",
                   "the backward unwrap is the identity", "backward_subclass_unwrap", _unwrap_drops_last),
        _internals("subclass_type_check_dropped", "subclass_wrapper",
                   "non-frozen subclass inputs are type-checked", "subclass_wrapper", _drop_type_checks),
    )
}

ALL_FAULTS: dict[str, Fault] = {**FAULTS, **INTERNAL_FAULTS}
