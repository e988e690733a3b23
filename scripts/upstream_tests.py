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

The rule: by what a test's body does, never by its name. A test is relevant where its file's rule
(RULES, first match by glob) says `every`, or its class is one of the rule's classes, or it compiles and
its own body does one of the things the rule's clauses name; and its class is not one the rule excludes.

  compiles    its body names a compile entry point (torch.compile, torch._dynamo.optimize,
              aot_function, aot_module, aot_module_simplified, make_fx, compiled_function,
              compiled_module, the aot_export entries) or a function of the same file that calls
              one, directly or through another (`self.verify_aot_autograd(...)`).
  mutation    an in-place method call (`x.add_()`, `set_`, `as_strided_`, `resize_`, `copy_`; not the
              `requires_grad_` flag), an assignment into a subscript or `.data`, or an `out=` argument.
  views       a view method (`view`, `transpose`, `t`, `expand`, `narrow`, `select`, `unbind`,
              `split`, `diagonal`, `as_strided`, `squeeze`, `unsqueeze`, `detach`, `reshape`, ...)
              or `.data`, `._base`, `.T`, `.mT`, `.real`, `.imag`; or one tensor passed twice in a
              call (aliased inputs).
  subclass    TwoTensor, a jagged nested tensor, `__tensor_flatten__`, `_make_wrapper_subclass`, a
              module-level class of the file that defines `__tensor_flatten__`, or a function of the
              file that uses one of them (`self._get_jagged_tensor(...)`).
  grad_modes  no_grad, enable_grad, set_grad_enabled, inference_mode or autocast (the branches of the
              runtime wrapper's orchestration).
  floats      a float literal, `float(...)`, random values, or the specialize_float setting.

Code only: strings and comments are not code, so expected graph text never selects a test.
Per file:

  test/functorch/test_codegen_*.py, test/functorch/test_subclass_codegen.py: every test.
  test/functorch/test_aotdispatch.py: class TestAOTDispatch (subclass dispatch), or compiles and
      mutation, views, subclass or grad_modes.
  test/dynamo/test_aot_autograd.py: compiles and mutation, views, subclass or grad_modes.
  test/dynamo/test_subclasses.py: class TestNestedTensor or TestTwoTensorSubclass (classes whose
      subject is a wrapper subclass: jagged nested tensors, TwoTensor), or compiles and subclass; not
      class TestIssubclass (the issubclass() builtin). A subclass with __torch_function__ only is
      dynamo's business: AOTAutograd sees plain tensors, and the subclass wrapper (#176741) is never
      made.
  test/dynamo/test_unspec.py: compiles and mutation, views, subclass, grad_modes or floats.
  test/dynamo/test_recompiles.py, test/inductor/test_torchinductor_dynamic_shapes.py: compiles and
      floats (the scalar-tensorify recompile fix).

A backward through a compiled function is not a clause of its own (decided, round 4): a program that
only computes and backwards exercises the partitioner and autograd, which none of the five changes
touches; the codegen'd backward prologue and epilogue are the codegen tests' (every test), and a
backward beside a mutation, view, subclass or grad mode is selected by that clause. The rule
over-includes a little on purpose: a selected test with no behaviour to port is listed in the
mapping as `white_box` or `not_portable`, which still counts as listed.

With --against, per file: `listed`, the relevant tests the mapping has an entry for (cases,
white_box or not_portable); `mapped`, those with cases; `missing`, the relevant tests it has no
entry for; and its entries the rule does not select (`outside the rule`) or the tree does not
have (`not in the tree`: renamed or removed upstream, or read from another revision). Where the
mapping pins a file by content (`sha256 <hex>` in its revision), the report says when the tree's
file is not that text, so that a newer tree tells which mapped tests were renamed or removed since. The last
line: "listed N of M relevant (P%), mapped K (Q%)". The exit status is 0 whatever the coverage.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import hashlib
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import yaml

CODEGEN_GLOB = "test/functorch/test_codegen_*.py"


ENTRY_POINTS = frozenset({
    "compile", "optimize", "aot_function", "aot_module", "aot_module_simplified", "make_fx", "compiled_function",
    "compiled_module", "aot_export_module", "aot_export_joint_simple", "_aot_export_function",
})
NOT_IN_PLACE = frozenset({"requires_grad_", "share_memory_", "pin_memory_"})  # flags, not writes
VIEW_OPS = frozenset({
    "view", "view_as", "reshape", "transpose", "t", "permute", "expand", "expand_as", "narrow", "select", "unbind",
    "split", "chunk", "diagonal", "as_strided", "squeeze", "unsqueeze", "unfold", "movedim", "swapaxes", "alias",
    "view_as_real", "view_as_complex", "detach", "unflatten", "flatten",
})
VIEW_ATTRIBUTES = frozenset({"data", "_base", "T", "mT", "H", "mH", "real", "imag"})
SUBCLASS_IDENTS = frozenset({
    "TwoTensor", "TwoTensorMode", "__tensor_flatten__", "__tensor_unflatten__", "_make_wrapper_subclass",
    "nested_tensor_from_jagged", "jagged", "WrapperSubclass", "ConstantExtraMetadataTensor", "jagged_from_list",
    "jagged_from_tensor_and_lengths", "nested_view_from_values_offsets", "NestedTensor", "as_nested_tensor",
})
GRAD_MODES = frozenset({"no_grad", "enable_grad", "set_grad_enabled", "_set_grad_enabled", "inference_mode",
                        "autocast"})
FLOAT_IDENTS = frozenset({"specialize_float", "float", "tensorify", "random", "uniform"})
BODY = ("mutation", "views", "subclass", "grad_modes")  # what a test's own body does, besides compiling


@dataclass(frozen=True)
class Rule:
    files: str
    every: bool = False
    classes: frozenset[str] = frozenset()
    clauses: tuple[str, ...] = BODY
    not_classes: frozenset[str] = frozenset()

    def selects(self, test: Test) -> bool:
        return test.cls not in self.not_classes and (
            self.every or test.cls in self.classes or (test.compiles and bool(test.features & set(self.clauses)))
        )


RULES: tuple[Rule, ...] = (
    Rule(CODEGEN_GLOB, every=True),
    Rule("test/functorch/test_subclass_codegen.py", every=True),
    Rule("test/functorch/test_aotdispatch.py", classes=frozenset({"TestAOTDispatch"})),
    Rule("test/dynamo/test_aot_autograd.py"),
    Rule("test/dynamo/test_subclasses.py", classes=frozenset({"TestNestedTensor", "TestTwoTensorSubclass"}),
         clauses=("subclass",), not_classes=frozenset({"TestIssubclass"})),
    Rule("test/dynamo/test_unspec.py", clauses=(*BODY, "floats")),
    Rule("test/dynamo/test_recompiles.py", clauses=("floats",)),
    Rule("test/inductor/test_torchinductor_dynamic_shapes.py", clauses=("floats",)),
)


@dataclass(frozen=True)
class Test:
    cls: str | None
    name: str
    compiles: bool = field(default=False, compare=False)
    features: frozenset[str] = field(default=frozenset(), compare=False)

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


def _in_place(name: str) -> bool:
    return name.endswith("_") and not name.endswith("__") and name[:1].isalpha() and name not in NOT_IN_PLACE


def _call_features(sub: ast.Call) -> set[str]:
    found = set()
    if isinstance(sub.func, ast.Attribute):
        if _in_place(sub.func.attr):
            found.add("mutation")
        if sub.func.attr in VIEW_OPS:
            found.add("views")
    if any(k.arg == "out" for k in sub.keywords):
        found.add("mutation")
    for group in (sub.args, *(a.elts for a in sub.args if isinstance(a, ast.List | ast.Tuple))):
        names = [a.id for a in group if isinstance(a, ast.Name)]
        if len(names) != len(set(names)):  # one tensor passed twice: aliased inputs
            found.add("views")
    return found


def _writes(sub: ast.Assign | ast.AugAssign) -> bool:
    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
    return any(isinstance(t, ast.Subscript) or (isinstance(t, ast.Attribute) and t.attr == "data") for t in targets)


def features_of(node: ast.AST, wrappers: frozenset[str] = frozenset()) -> frozenset[str]:
    """What a test's own body (its decorators, nested functions and classes included) does, by its code."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            found |= _call_features(sub)
        elif isinstance(sub, (ast.Assign, ast.AugAssign)) and _writes(sub):
            found.add("mutation")
        elif isinstance(sub, ast.Attribute) and sub.attr in VIEW_ATTRIBUTES:
            found.add("views")
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, float):
            found.add("floats")
    idents = _idents(node)
    kinds = (("subclass", SUBCLASS_IDENTS | wrappers), ("grad_modes", GRAD_MODES), ("floats", FLOAT_IDENTS),
             ("backward", frozenset({"backward", "grad"})))
    return frozenset(found | {kind for kind, names in kinds if idents & names})


def _functions(tree: ast.Module) -> dict[str, frozenset[str]]:
    """Every function the file defines (module level, class methods), by name: the names its body uses."""
    out: dict[str, set[str]] = {}
    for node in _module_level(tree.body):
        defs = [node] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else (
            [f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if isinstance(node, ast.ClassDef) else [])
        for f in defs:
            out.setdefault(f.name, set()).update(_idents(f))
    return {k: frozenset(v) for k, v in out.items()}


def helpers_using(tree: ast.Module, names: frozenset[str]) -> frozenset[str]:
    """The file's own functions that use one of `names`, directly or through one another (a test that calls
    `self.verify_aot_autograd(...)` compiles; one that calls `self._get_jagged_tensor(...)` makes a subclass)."""
    functions = _functions(tree)
    found = {name for name, used in functions.items() if used & names and not name.startswith("test")}
    while True:
        more = {name for name, used in functions.items()
                if name not in found and not name.startswith("test") and used & found}
        if not more:
            return frozenset(found)
        found |= more


def wrapper_classes_in(source: str) -> frozenset[str]:
    """The file's module-level classes that define `__tensor_flatten__`: traceable wrapper subclasses."""
    return frozenset(
        node.name
        for node in _module_level(ast.parse(source).body)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(f, ast.FunctionDef) and f.name == "__tensor_flatten__" for f in node.body)
    )


def tests_in(source: str) -> list[Test]:
    """Every test function defined in a class body or at module level, in source order, with what its body does."""
    tree = ast.parse(source)
    entries = ENTRY_POINTS | helpers_using(tree, ENTRY_POINTS)
    wrappers = wrapper_classes_in(source)
    subclasses = wrappers | helpers_using(tree, SUBCLASS_IDENTS | wrappers)

    def test(cls: str | None, f: ast.FunctionDef | ast.AsyncFunctionDef) -> Test:
        return Test(cls, f.name, bool(_idents(f) & entries), features_of(f, subclasses))

    found: list[Test] = []
    for node in _module_level(tree.body):
        if isinstance(node, ast.ClassDef):
            found += [test(node.name, f) for f in node.body if _is_test(f)]
        elif _is_test(node):
            found.append(test(None, node))
    return found


@dataclass(frozen=True)
class Mapping:
    """What cases/UPSTREAM.yaml says, read as plain data: files read, and per file, test -> mapped to cases."""

    revisions: dict[str, str]
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
    revisions = data.get("revisions") or {}
    if not isinstance(revisions, dict):
        raise ValueError(f"{path}: revisions: expected a mapping of file -> revision")
    return Mapping({str(k): str(v) for k, v in revisions.items()}, entries)


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
    pinned: str = ""  # the mapping's sha256 of the text its ports were read from, where it pins one
    is_pinned_text: bool | None = None  # whether the tree's file is that text (None: no digest pinned)


def files_to_read(tree: Path, mapping: Mapping | None) -> list[str]:
    named = {r.files for r in RULES if not any(c in r.files for c in "*?[")}
    codegen = {p.relative_to(tree).as_posix() for p in tree.glob(CODEGEN_GLOB)}
    return sorted(named | codegen | set(mapping.revisions if mapping else ()) | set(mapping.entries if mapping else ()))


def report_file(tree: Path, file: str, mapping: Mapping | None) -> FileReport:
    path, rule = tree / file, rule_for(file)
    rep = FileReport(file, path.is_file(), rule is not None)
    source = path.read_text() if rep.present else ""
    if mapping is not None and (pin := re.search(r"sha256 ([0-9a-f]{64})", mapping.revisions.get(file, ""))):
        rep.pinned = pin[1]
        rep.is_pinned_text = rep.present and hashlib.sha256(path.read_bytes()).hexdigest() == pin[1]
    found = tests_in(source)
    rep.tests = len(found)
    rep.relevant = [t.id for t in found if rule is not None and rule.selects(t)]
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
        if r.is_pinned_text is False:
            lines.append(f"  the tree's text is not the pinned one (sha256 {r.pinned[:12]}): an entry not in the tree"
                         " may be renamed or removed since, or read from another revision")
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
