"""No import cycle among the project's modules, counting imports inside functions and under `if TYPE_CHECKING:`
too (a lazy import, or one only type checkers see, hides a cycle; it does not remove it)."""

from __future__ import annotations

import ast
import graphlib
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]
PACKAGES = ("conformance", "reference_impl")


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, name: str, modules: set[str]) -> set[str]:
    """The project modules `name` imports anywhere in its body."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([base] if base else [])])
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
        visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in modules and m != name}


def import_cycle(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[str] | None:
    """One import cycle among the packages' modules under `root` (module names, first repeated at
    the end), or None."""
    paths = {_module(p, root): p for package in packages for p in (root / package).rglob("*.py")}
    graph = {name: _imported(path, name, set(paths)) for name, path in paths.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(reversed(exc.args[1]))
    return None


def test_the_project_has_no_import_cycle() -> None:
    cycle = import_cycle(REPO)
    assert cycle is None, "an import cycle: " + " -> ".join(cycle or [])


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(("files", "cycle"), [
    # a cycle through an import inside a function is found
    ({"__init__.py": "", "a.py": "from pkg.b import x\n",
      "b.py": "def x():\n    from pkg import a\n    return a\n"}, ["pkg.a", "pkg.b", "pkg.a"]),
    # relative imports resolve
    ({"__init__.py": "", "a.py": "from .b import x\n", "b.py": "from . import a\nx = 1\n"},
     ["pkg.a", "pkg.b", "pkg.a"]),
    # an import only type checkers see closes a cycle too
    ({"__init__.py": "", "a.py": "from pkg.b import x\n",
      "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\nx = 1\n"},
     ["pkg.a", "pkg.b", "pkg.a"]),
    # and no import between them is none
    ({"__init__.py": "", "a.py": "from pkg.b import x\n", "b.py": "x = 1\n"}, None),
])
def test_the_check_finds_a_cycle_where_there_is_one(tmp_path: Path, files: dict[str, str],
                                                    cycle: list[str] | None) -> None:
    found = import_cycle(_package(tmp_path, files), ("pkg",))
    assert (found is None) == (cycle is None)
    if cycle is not None:
        assert found is not None and set(found) == set(cycle) and found[0] == found[-1]
