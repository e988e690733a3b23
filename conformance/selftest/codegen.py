"""Internals faults: rewrite one function the build generates, before the build logs and execs
it, through the helper every generated wrapper goes through (where the build has one)."""

from __future__ import annotations

import ast
import contextlib
import importlib
from collections.abc import Callable, Iterator
from typing import Any

from conformance.run.extensions import ExtensionNotApplicable

# --- internals-level faults -------------------------------------------------------------

# Every generated wrapper goes through one helper that logs and execs the source; its home
# moved between releases. A build without it cannot take internals faults (reported as such).
CODEGEN_EXEC = (
    ("torch._functorch._aot_autograd.subclass_codegen", "_compile_and_exec_source"),
    ("torch._functorch._aot_autograd.codegen", "_compile_and_exec_source"),
)
Transform = Callable[[str], str | None]


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


@contextlib.contextmanager
def rewriting(artifact: str, transform: Transform, hits: list[str]) -> Iterator[None]:
    """While open, every generated `artifact` goes through `transform`; each rewrite is noted in `hits`."""
    targets = codegen_exec_targets()
    if not targets:
        raise ExtensionNotApplicable(
            "this build has no codegen exec helper (" + ", ".join(f"{m}.{a}" for m, a in CODEGEN_EXEC) + ")"
        )
    saved = [(module, attr, getattr(module, attr)) for module, attr in targets]

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def rewritten(source: str, globals_dict: Any, fn_name: str, artifact_name: str, *a: Any, **k: Any) -> Any:
            if artifact_name == artifact:
                changed = transform(source)
                if changed is not None and changed != source:
                    hits.append(artifact_name)
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


def drop_last_statement(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        if not fn.body:
            return False
        fn.body.pop()
        return True

    return _edit(source, edit)


def _calls(node: ast.AST, method: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == method for n in ast.walk(node))


def set_to_copy(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        hit = False
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_":
                node.func.attr = "copy_"
                node.args = node.args[:1]
                hit = True
        return hit

    return _edit(source, edit)


def drop_as_strided(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        before = len(fn.body)
        fn.body = [s for s in fn.body if not _calls(s, "as_strided_")]
        return len(fn.body) != before

    return _edit(source, edit)


def shift_slot(source: str) -> str | None:
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


def drop_requires_grad_branch(source: str) -> str | None:
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


def unwrap_drops_last(source: str) -> str | None:
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


def drop_type_checks(source: str) -> str | None:
    def edit(fn: ast.FunctionDef) -> bool:
        before = len(fn.body)
        fn.body = [s for s in fn.body if not _is_type_check(s)]
        return len(fn.body) != before

    return _edit(source, edit)


