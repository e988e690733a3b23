"""The layout's limits: few modules loose at the top of the package, none long, no long function,
each module saying its one job in its first line, and each import of the project's own modules
inside a function saying why it is not at the top (`# lazy: imports torch`, `# lazy: start-up`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

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
        lines = text.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    found.append(Breach(f"{where}:{node.lineno}",
                                        f"{node.name} is {length} lines (at most {FUNCTION_LINES})"))
                found += _unexplained_lazy_imports(node, where, lines, packages)
    return found


def _unexplained_lazy_imports(function: ast.FunctionDef | ast.AsyncFunctionDef, where: str, lines: list[str],
                              packages: tuple[str, ...]) -> list[Breach]:
    out = []
    for node in ast.walk(function):
        if isinstance(node, ast.Import | ast.ImportFrom) and node.col_offset > 0:
            module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            if module and module.split(".")[0] in packages and "# lazy:" not in lines[(node.end_lineno or 1) - 1]:
                out.append(Breach(f"{where}:{node.lineno}", f"imports {module} inside a function without saying "
                                  "why (# lazy: ...)"))
    return out


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
    (package / "m3.py").write_text('"""Lazy imports."""\n\n\ndef f():\n    import pkg.m1\n'
                                   '    import pkg.m2  # lazy: imports torch\n    return pkg.m1\n')
    found = breaches(tmp_path, ("pkg",))
    assert [b.where for b in found] == ["pkg", "pkg/m0.py", "pkg/m1.py", "pkg/m2.py:4", "pkg/m3.py:5"], found
    assert "9 modules directly under it" in found[0].what and "long is 81 lines" in found[3].what



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
