"""The layout's limits: few modules loose at the top of the package, none long, no long function,
each module saying its one job in its first line, and each import inside a function saying why it
is not at the top, in one of the ways conformance/__init__.py explains; and what start-up imports."""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]
PACKAGES = ("conformance", "reference_impl")
TOP_LEVEL_MODULES = 8
MODULE_LINES = 600
FUNCTION_LINES = 80


@dataclass(frozen=True)
class Breach:
    where: str
    what: str


def breaches(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[Breach]:
    """Every way the packages under `root` break the limits."""
    found: list[Breach] = []
    top = sorted(p.name for p in (root / packages[0]).glob("*.py"))
    if len(top) > TOP_LEVEL_MODULES:
        found.append(Breach(packages[0], f"{len(top)} modules directly under it (at most {TOP_LEVEL_MODULES}): {top}"))
    for path in sorted(p for package in packages for p in (root / package).rglob("*.py")):
        where = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MODULE_LINES:
            found.append(Breach(where, f"{lines} lines (at most {MODULE_LINES})"))
        tree = ast.parse(text)
        if not ast.get_docstring(tree):
            found.append(Breach(where, "no docstring saying what the module is for"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    found.append(Breach(f"{where}:{node.lineno}",
                                        f"{node.name} is {length} lines (at most {FUNCTION_LINES})"))
        found += [Breach(f"{where}:{node.lineno}", f"imports {_names(node)} inside a function without saying why: "
                         "# lazy: start-up, # guarded: <what is absent> (in a try that catches ImportError) or "
                         "# noqa: F401  # <why>")
                  for node, guarded in _function_imports(tree) if not _marked(node, guarded, text.splitlines())]
    return found


def _function_imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import inside a function, and whether a `try` around it catches ImportError."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, in_function: bool, guarded: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom) and in_function:
            found.append((node, guarded))
        in_function = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for child in ast.iter_child_nodes(node):
            around = isinstance(node, ast.Try) and child in node.body and any(
                _catches_import_error(h.type) for h in node.handlers)
            visit(child, in_function, guarded or around)

    visit(tree, False, False)
    return found


def _catches_import_error(caught: ast.expr | None) -> bool:
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names)


def _marked(node: ast.Import | ast.ImportFrom, guarded: bool, lines: list[str]) -> bool:
    comments = [part.strip() for line in lines[node.lineno - 1:node.end_lineno] for part in line.split("#")[1:]]
    return ("lazy: start-up" in comments
            or (guarded and any(c.startswith("guarded: ") for c in comments))
            or any(c == "noqa: F401" and why for c, why in itertools.pairwise(comments)))


def _names(node: ast.Import | ast.ImportFrom) -> str:
    return node.module or "." if isinstance(node, ast.ImportFrom) else ", ".join(a.name for a in node.names)


def test_the_project_keeps_its_layout_limits() -> None:
    assert breaches(REPO) == []


def test_each_limit_is_found_where_it_is_broken(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    for k in range(TOP_LEVEL_MODULES + 1):
        (package / f"m{k}.py").write_text(f'"""Module {k}."""\n')
    (package / "m0.py").write_text('"""Long."""\n' + "x = 1\n" * MODULE_LINES)
    (package / "m1.py").write_text("x = 1\n")
    body = "".join(f"    y{k} = {k}\n" for k in range(FUNCTION_LINES))
    (package / "m2.py").write_text(f'"""A long function."""\n\n\ndef long():\n{body}')
    (package / "m3.py").write_text('"""Lazy imports."""\n\n\ndef f():\n    import pkg.m1\n    return pkg.m1\n')
    found = breaches(tmp_path, ("pkg",))
    assert [b.where for b in found] == ["pkg", "pkg/m0.py", "pkg/m1.py", "pkg/m2.py:4", "pkg/m3.py:5"], found
    assert "9 modules directly under it" in found[0].what and "long is 81 lines" in found[3].what
    assert "imports pkg.m1 inside a function without saying why" in found[4].what


def test_each_import_inside_a_function_says_why(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text('''"""Imports inside functions."""

import json


def said() -> None:
    import pkg.a  # lazy: start-up
    try:
        from functorch.compile import (  # type: ignore[attr-defined]  # re-exported without __all__
            aot_function,  # guarded: a build without it
        )
    except (ImportError, RuntimeError):
        return
    import torch._dynamo  # noqa: F401  # imported for its side effect only


def unsaid() -> None:
    import pkg.b
    import pkg.c  # lazy: imports torch
    import pkg.d  # guarded: but no try catches ImportError
    import pkg.e  # noqa: F401
    try:
        import pkg.f  # guarded: this try catches something else
    except ValueError:
        pass

    def inner() -> None:
        import pkg.g
''')
    found = breaches(tmp_path, ("pkg",))
    assert [b.where for b in found] == [f"pkg/m.py:{n}" for n in (18, 19, 20, 21, 23, 28)], found
    assert found[0].what.startswith("imports pkg.b inside a function without saying why: # lazy: start-up, ")


@pytest.mark.parametrize(("code", "unwanted"), [
    # what every command imports before its own work (all of `--help`)
    ("import conformance.cli; conformance.cli.build_parser()", ("torch", "pytest", "hypothesis")),
    # what pytest loads in every project
    ("import conformance.pytest_plugin.plugin", ("torch", "hypothesis")),
])
def test_start_up_imports_only_what_it_needs(code: str, unwanted: tuple[str, ...]) -> None:
    shown = f"{code}\nimport sys\nprint(sorted(m for m in {unwanted!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", shown], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"{code} imports {out.stdout.strip()}"



def rooms_without_tests(root: Path, package: str = "conformance") -> list[str]:
    """Each room of the package (a folder holding modules) whose tests have no folder of its name under tests/."""
    rooms = sorted(p.parent.name for p in (root / package).glob("*/__init__.py"))
    return [room for room in rooms if not (root / "tests" / room / "__init__.py").is_file()
            or not any((root / "tests" / room).glob("test_*.py"))]


def test_each_room_has_its_test_room() -> None:
    assert rooms_without_tests(REPO) == []


def test_a_room_without_tests_is_named(tmp_path: Path) -> None:
    for room in ("core", "report"):
        (tmp_path / "conformance" / room).mkdir(parents=True)
        (tmp_path / "conformance" / room / "__init__.py").write_text("")
    (tmp_path / "tests" / "core").mkdir(parents=True)
    (tmp_path / "tests" / "core" / "__init__.py").write_text("")
    (tmp_path / "tests" / "core" / "test_x.py").write_text("")
    assert rooms_without_tests(tmp_path) == ["report"]
