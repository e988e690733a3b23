"""List the tests in PyTorch's own test files that touch the five changes, and, against
cases/UPSTREAM.yaml, which of them the mapping lists: completeness of the mapping is a command.

    python scripts/upstream_tests.py PYTORCH_TREE                                  # relevant tests, per file
    python scripts/upstream_tests.py PYTORCH_TREE --against cases/UPSTREAM.yaml    # coverage and what is missing
    python scripts/upstream_tests.py PYTORCH_TREE --against cases/UPSTREAM.yaml --json

PYTORCH_TREE is a PyTorch source tree: a checkout, or what `git archive HEAD test | tar -x` of one
leaves. A test is a `def test*` function that `ast` finds in a class body (named `Class.test_name`)
or at module level (named `test_name`), module-level `if`/`try` blocks included. A parametrized test
counts once, under the name it is defined with; an inherited test counts in the class defining it.

Files read: the mapping's `revisions:`, every file named in RULES, and every
test/functorch/test_codegen_*.py the tree has. A file the tree lacks is reported, not an error.

The rule. A test of a file is relevant when the file's rule (RULES, first match by glob) says
`every`, or its class is one of the rule's classes, or its name matches the rule's name pattern
(regular expression, case-insensitive), or its code names one of the rule's identifiers (a
variable, attribute, keyword-argument or function name in its decorators or body; strings and
comments are not code, so expected graph text never selects a test); and its class is not one of
the rule's excluded classes. Per file:

  test/functorch/test_codegen_*.py, test/functorch/test_subclass_codegen.py: every test.
  test/functorch/test_aotdispatch.py: class TestAOTDispatch (subclass dispatch tests); or name has
      mutat, alias, view, set_, data, subclass, two_tensor, requires_grad, no_grad, tangent, dupe,
      duplicat, buffer, synthetic_base, inplace, detach, leaf, metadata, inference, grad_mode, runtime_wrapper or
      epilogue. Names only: its test names say what they exercise, and its bodies all build inputs
      with requires_grad and check graph text full of view and copy_ ops.
  test/dynamo/test_aot_autograd.py: name has mutat, dupe, requires_grad, alias, overlap, set_,
      grad_mode, tangent or leaf; or code names set_grad_enabled or no_grad.
  test/dynamo/test_subclasses.py: class TestNestedTensor or TestTwoTensorSubclass (njt and TwoTensor
      compile tests); or name has tensorify, two_tensor, njt, jagged, nested_tensor or
      wrapper_subclass; or code names a traceable wrapper subclass: TwoTensor, __tensor_flatten__,
      _make_wrapper_subclass, nested_tensor_from_jagged, or a module-level class of the file that
      defines __tensor_flatten__; not class TestIssubclass (the issubclass() builtin). A subclass
      with __torch_function__ only is dynamo's business: AOTAutograd sees plain tensors, and the
      subclass wrapper (#176741) is never made, so those tests are not selected.
  test/dynamo/test_unspec.py: name has unspec, float, tensorify, specializ or recompil; or code
      names specialize_float.
  test/dynamo/test_recompiles.py: class FloatGuardBitwiseTests; or name has tensorify or float.
  test/inductor/test_torchinductor_dynamic_shapes.py: name has unspecialized_float or tensorify; or
      code names specialize_float.

The rule over-includes a little on purpose: a test it selects that has no behaviour to port is
listed in the mapping as `white_box` or `not_portable`, which still counts as listed.

With --against, per file: `listed`, the relevant tests the mapping has an entry for (cases,
white_box or not_portable); `mapped`, those with cases; `missing`, the relevant tests it has no
entry for; and its entries the rule does not select (`outside the rule`) or the tree does not
have (`not in the tree`: renamed or removed upstream, or read from another revision). The last
line: "listed N of M relevant (P%), mapped K (Q%)". The exit status is 0 whatever the coverage.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import yaml

CODEGEN_GLOB = "test/functorch/test_codegen_*.py"


@dataclass(frozen=True)
class Rule:
    files: str
    every: bool = False
    classes: frozenset[str] = frozenset()
    names: str = ""
    idents: frozenset[str] = frozenset()
    not_classes: frozenset[str] = frozenset()
    wrapper_classes: bool = False

    def selects(self, test: Test, file_wrappers: frozenset[str] = frozenset()) -> bool:
        idents = self.idents | (file_wrappers if self.wrapper_classes else frozenset())
        return test.cls not in self.not_classes and (
            self.every
            or test.cls in self.classes
            or bool(self.names and re.search(self.names, test.name, re.IGNORECASE))
            or bool(idents & test.idents)
        )


RULES: tuple[Rule, ...] = (
    Rule(CODEGEN_GLOB, every=True),
    Rule("test/functorch/test_subclass_codegen.py", every=True),
    Rule(
        "test/functorch/test_aotdispatch.py",
        names=r"mutat|alias|view|set_|data|subclass|two_?tensor|requires_grad|no_grad|tangent|dupe|duplicat|buffer"
        r"|synthetic_base"
        r"|inplace|detach|leaf|metadata|inference|grad_mode|runtime_wrapper|epilogue",
        classes=frozenset({"TestAOTDispatch"}),
    ),
    Rule(
        "test/dynamo/test_aot_autograd.py",
        names=r"mutat|dupe|requires_grad|alias|overlap|set_|grad_mode|tangent|leaf",
        idents=frozenset({"set_grad_enabled", "no_grad"}),
    ),
    Rule(
        "test/dynamo/test_subclasses.py",
        classes=frozenset({"TestNestedTensor", "TestTwoTensorSubclass"}),
        names=r"tensorify|two_?tensor|njt|jagged|nested_tensor|wrapper_subclass",
        idents=frozenset({"TwoTensor", "__tensor_flatten__", "_make_wrapper_subclass", "nested_tensor_from_jagged"}),
        wrapper_classes=True,
        not_classes=frozenset({"TestIssubclass"}),
    ),
    Rule(
        "test/dynamo/test_unspec.py",
        names=r"unspec|float|tensorify|specializ|recompil",
        idents=frozenset({"specialize_float"}),
    ),
    Rule("test/dynamo/test_recompiles.py", classes=frozenset({"FloatGuardBitwiseTests"}), names=r"tensorify|float"),
    Rule(
        "test/inductor/test_torchinductor_dynamic_shapes.py",
        names=r"unspecialized_float|tensorify",
        idents=frozenset({"specialize_float"}),
    ),
)


@dataclass(frozen=True)
class Test:
    cls: str | None
    name: str
    idents: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def id(self) -> str:
        return f"{self.cls}.{self.name}" if self.cls else self.name


def rule_for(file: str) -> Rule | None:
    return next((r for r in RULES if fnmatch.fnmatch(file, r.files)), None)


def _module_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _module_level([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            yield from _module_level([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                yield from _module_level(handler.body)


def _is_test(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def _idents(node: ast.AST) -> frozenset[str]:
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr)
        elif isinstance(sub, ast.keyword) and sub.arg:
            out.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            out.add(sub.name)
    return frozenset(out)


def wrapper_classes_in(source: str) -> frozenset[str]:
    """The file's module-level classes that define `__tensor_flatten__`: traceable wrapper subclasses."""
    return frozenset(
        node.name
        for node in _module_level(ast.parse(source).body)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(f, ast.FunctionDef) and f.name == "__tensor_flatten__" for f in node.body)
    )


def tests_in(source: str) -> list[Test]:
    """Every test function defined in a class body or at module level, in source order."""
    found: list[Test] = []
    for node in _module_level(ast.parse(source).body):
        if isinstance(node, ast.ClassDef):
            found += [Test(node.name, f.name, _idents(f)) for f in node.body if _is_test(f)]
        elif _is_test(node):
            found.append(Test(None, node.name, _idents(node)))
    return found


@dataclass(frozen=True)
class Mapping:
    """What cases/UPSTREAM.yaml says, read as plain data: files read, and per file, test -> mapped to cases."""

    revisions: tuple[str, ...]
    entries: dict[str, dict[str, bool]]


def load_mapping(path: Path) -> Mapping:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise ValueError(f"{path}: not an upstream mapping (expected `revisions:` and a `tests:` list)")
    entries: dict[str, dict[str, bool]] = {}
    for i, entry in enumerate(data["tests"]):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("file"), str)
            or not isinstance(entry.get("test"), str)
        ):
            raise ValueError(f"{path}: tests.{i}: expected a mapping with `file:` and `test:`")
        entries.setdefault(entry["file"], {})[entry["test"]] = bool(entry.get("cases"))
    return Mapping(tuple(data.get("revisions") or ()), entries)


@dataclass
class FileReport:
    file: str
    present: bool
    rule: bool
    tests: int = 0
    relevant: list[str] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)
    mapped: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    outside_rule: list[str] = field(default_factory=list)
    not_in_tree: list[str] = field(default_factory=list)


def files_to_read(tree: Path, mapping: Mapping | None) -> list[str]:
    named = {r.files for r in RULES if not any(c in r.files for c in "*?[")}
    codegen = {p.relative_to(tree).as_posix() for p in tree.glob(CODEGEN_GLOB)}
    return sorted(named | codegen | set(mapping.revisions if mapping else ()) | set(mapping.entries if mapping else ()))


def report_file(tree: Path, file: str, mapping: Mapping | None) -> FileReport:
    path, rule = tree / file, rule_for(file)
    rep = FileReport(file, path.is_file(), rule is not None)
    source = path.read_text() if rep.present else ""
    found, wrappers = tests_in(source), wrapper_classes_in(source)
    rep.tests = len(found)
    rep.relevant = [t.id for t in found if rule is not None and rule.selects(t, wrappers)]
    if mapping is not None:
        listed = mapping.entries.get(file, {})
        rep.listed = [t for t in rep.relevant if t in listed]
        rep.mapped = [t for t in rep.listed if listed[t]]
        rep.missing = [t for t in rep.relevant if t not in listed]
        ids, relevant = {t.id for t in found}, set(rep.relevant)
        rep.outside_rule = sorted(t for t in listed if t in ids and t not in relevant)
        rep.not_in_tree = sorted(t for t in listed if t not in ids)
    return rep


def summary(reports: Sequence[FileReport]) -> dict[str, Any]:
    relevant = sum(len(r.relevant) for r in reports)
    listed = sum(len(r.listed) for r in reports)
    mapped = sum(len(r.mapped) for r in reports)

    def pct(n: int) -> float:
        return round(100 * n / relevant, 1) if relevant else 0.0

    return {
        "relevant": relevant,
        "listed": listed,
        "mapped": mapped,
        "listed_pct": pct(listed),
        "mapped_pct": pct(mapped),
        "line": f"listed {listed} of {relevant} relevant ({pct(listed):.0f}%), mapped {mapped} ({pct(mapped):.0f}%)",
    }


def _status(test: str, rep: FileReport) -> str:
    return "mapped " if test in rep.mapped else "listed " if test in rep.listed else "missing"


def render(reports: Sequence[FileReport], *, against: bool, show_all: bool) -> str:
    lines: list[str] = []
    for r in reports:
        if not r.present:
            lines.append(f"{r.file}: not in the tree" + (f" ({len(r.not_in_tree)} mapping entries)" if against else ""))
            continue
        if not r.rule:
            lines.append(f"{r.file}: no rule, its {r.tests} tests not counted (add one to RULES in this script)")
        elif against:
            lines.append(
                f"{r.file}: {len(r.relevant)} relevant of {r.tests} tests,"
                f" listed {len(r.listed)}, mapped {len(r.mapped)}"
            )
        else:
            lines.append(f"{r.file}: {len(r.relevant)} relevant of {r.tests} tests")
        if against and not show_all:
            lines += [f"  missing {t}" for t in r.missing]
        else:
            lines += [f"  {_status(t, r)} {t}" if against else f"  {t}" for t in r.relevant]
        lines += [f"  outside the rule {t}" for t in r.outside_rule]
        lines += [f"  not in the tree {t}" for t in r.not_in_tree]
    if against:
        lines.append(summary(reports)["line"])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("tree", type=Path, help="a PyTorch source tree (its test/ folder is read)")
    parser.add_argument("--against", type=Path, metavar="UPSTREAM.yaml", help="report coverage by this mapping")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--all", action="store_true", help="with --against, every relevant test with its status")
    args = parser.parse_args(argv)
    if not (args.tree / "test").is_dir():
        parser.error(f"{args.tree} has no test/ folder: give the root of a PyTorch source tree")
    try:
        mapping = load_mapping(args.against) if args.against else None
    except (OSError, ValueError, yaml.YAMLError) as exc:
        parser.error(str(exc))
    reports = [report_file(args.tree, f, mapping) for f in files_to_read(args.tree, mapping)]
    if args.json:
        out: dict[str, Any] = {"tree": str(args.tree), "files": [asdict(r) for r in reports]}
        if mapping is not None:
            out["summary"] = summary(reports)
        print(json.dumps(out, indent=2))
    else:
        print(render(reports, against=mapping is not None, show_all=args.all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
