"""The core's source as one block of Python, for a full reproducer to embed (Note [One core])."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from conformance.core import CORE_MODULES

CORE = Path(__file__).parents[1] / "core"


def _module_body(name: str) -> str:
    """A core module without its docstring, its `from __future__` line and its imports of other
    core modules (their names are defined earlier in the bundle)."""
    text = (CORE / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    drop: set[int] = set()
    for i, node in enumerate(tree.body):
        skip = (
            (i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
            or (isinstance(node, ast.ImportFrom) and node.module is not None
                and (node.module == "__future__" or node.module.startswith("conformance.core")))
        )
        if skip:
            end = node.end_lineno or node.lineno
            drop.update(range(node.lineno, end + 1))
    lines = text.splitlines()
    return "\n".join(line for n, line in enumerate(lines, 1) if n not in drop).strip("\n")


@cache
def core_source() -> str:
    """Every core module, in dependency order, each under a banner naming its file."""
    parts = [f"# {'-' * 20} conformance/core/{name}.py\n{_module_body(name)}" for name in CORE_MODULES]
    return "\n\n\n".join(parts) + "\n"
