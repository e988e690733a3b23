"""Behaviour ``scalar_recompile`` (upstream #179395): Python float inputs and recompiles.

With ``specialize_float = False`` a Python float argument is meant to stay dynamic: the
compiler turns it into a 0-dim float64 tensor input ("tensorification"), so a sweep over
many values reuses one graph. Before the fix two uses escaped tensorification and forced
the float to be specialised, one compile per value: method-form in-place ops
(``x.mul_(lr)``) and composite scalar expressions (``0.5 * lr``, ``(1.0 + lr) ** 0.5``).
A float that decides Python control flow (``if lr > 0``) is specialised by design.

Whatever the compile count, every value must give the eager result: the tensorified
program (:func:`codegen_tensorified`) computes exactly what the plain one
(:func:`run_interpreted`) computes. :func:`predict_compile_count` gives the expected
count for a sweep, with and without the fix.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import torch

from reference_impl._source import exec_function
from reference_impl.structural import find_function
from reference_impl.terms import StructuralError

__all__ = [
    "FloatUse",
    "FloatUseKind",
    "ScalarProgramMeta",
    "ScalarUsesForm",
    "analyze_float_uses",
    "codegen_tensorified",
    "compile_tensorified",
    "predict_compile_count",
    "run_interpreted",
    "structural_form",
]

TENSORIFIED_DTYPE = torch.float64


class FloatUseKind(str, Enum):
    PLAIN = "plain"  # x * lr, torch.mul(x, lr): always tensorified
    METHOD_INPLACE = "method_inplace"  # x.mul_(lr): needed the fix
    COMPOSITE = "composite"  # 0.5 * lr, b ** 0.5: needed the fix
    CONTROL = "control"  # if lr > 0: specialised by design
    # math.floor(lr), int(lr), lr.is_integer(): a float made an int or read by a float method
    # cannot stay a tensor; the dynamic attempt falls back to specialising it
    SPECIALISING = "specialising"
    # group["lr"] = lr, opt.lr = lr: stored where code the program does not show reads it;
    # what that code does with it is not in the program, so no count is predicted
    ESCAPES = "escapes"
    # return x + 1, s * 2: a float computed by Python and returned, given to no tensor op; the
    # graph never holds it, and whether dynamo guards its value is not what this models
    RETURNED = "returned"


NEEDS_FIX = frozenset({FloatUseKind.METHOD_INPLACE, FloatUseKind.COMPOSITE})


@dataclass(frozen=True)
class FloatUse:
    """One use of float parameter(s): its kind, the operation and the expression text."""

    kind: FloatUseKind
    op: str
    expr: str
    params: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.kind.value}: {self.op} {self.expr}"


@dataclass(frozen=True)
class ScalarProgramMeta:
    """The float parameters of a program and every use it makes of them, in source order."""

    float_params: tuple[str, ...]
    uses: tuple[FloatUse, ...]

    @property
    def kinds(self) -> frozenset[FloatUseKind]:
        return frozenset(u.kind for u in self.uses)


_OPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}


_TO_INT = frozenset({"math.floor", "math.ceil", "math.trunc", "int"})


class _UseFinder(ast.NodeVisitor):
    def __init__(self, float_params: Iterable[str]) -> None:
        self.params = frozenset(float_params)
        self.uses: list[FloatUse] = []

    def _mentions(self, node: ast.AST) -> tuple[str, ...]:
        found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in self.params}
        return tuple(sorted(found))

    def _scalar(self, node: ast.AST) -> bool:
        """Built only from float parameters and numeric literals."""
        if isinstance(node, ast.Name):
            return node.id in self.params
        if isinstance(node, ast.Constant):
            return isinstance(node.value, int | float) and not isinstance(node.value, bool)
        if isinstance(node, ast.BinOp):
            return self._scalar(node.left) and self._scalar(node.right)
        if isinstance(node, ast.UnaryOp):
            return self._scalar(node.operand)
        return False

    def _add(self, kind: FloatUseKind, op: str, node: ast.AST) -> None:
        self.uses.append(FloatUse(kind, op, ast.unparse(node), self._mentions(node)))

    def _note_composites(self, node: ast.AST) -> None:
        if isinstance(node, ast.BinOp) and self._scalar(node) and self._mentions(node):
            self._add(FloatUseKind.COMPOSITE, _OPS.get(type(node.op), "?"), node)

    def visit_Return(self, node: ast.Return) -> None:
        value = node.value
        for v in value.elts if isinstance(value, ast.Tuple) else [value] if value is not None else []:
            if self._mentions(v) and self._scalar(v):
                self._add(FloatUseKind.RETURNED, "return", v)
            else:
                self.visit(v)

    def visit_Assign(self, node: ast.Assign) -> None:
        # The tensorified prologue ``lr = torch.tensor(lr, ...)`` is not a use.
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in self.params
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "torch.tensor"
        ):
            return
        for target in node.targets:
            if isinstance(target, ast.Subscript | ast.Attribute) and self._mentions(node.value):
                self._add(FloatUseKind.ESCAPES, f"{ast.unparse(target)} =", node.value)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        values = [*node.args, *(k.value for k in node.keywords)]
        func = ast.unparse(node.func)
        if func in _TO_INT and any(self._mentions(v) and self._scalar(v) for v in values):
            for v in values:
                self._add(FloatUseKind.SPECIALISING, func, v)
                self._note_composites(v)
            return
        if isinstance(node.func, ast.Attribute) and self._mentions(node.func.value) and self._scalar(
            node.func.value
        ):
            self._add(FloatUseKind.SPECIALISING, f".{node.func.attr}", node.func.value)
            self._note_composites(node.func.value)
            return
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr.endswith("_")
            and not (node.func.attr.startswith("_"))
        ):
            for v in values:
                if self._mentions(v):
                    self._add(FloatUseKind.METHOD_INPLACE, f".{node.func.attr}", v)
                    self._note_composites(v)
            self.visit(node.func)
            return
        for v in values:
            if self._mentions(v) and self._scalar(v):
                self._add(FloatUseKind.PLAIN, ast.unparse(node.func), v)
                self._note_composites(v)
            else:
                self.visit(v)
        self.visit(node.func)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if self._scalar(node):
            self._note_composites(node)
            return
        for side in (node.left, node.right):
            if self._mentions(side) and self._scalar(side):
                self._add(FloatUseKind.PLAIN, _OPS.get(type(node.op), "?"), side)
                self._note_composites(side)
            else:
                self.visit(side)

    def visit_Compare(self, node: ast.Compare) -> None:
        # ``x > lr``: a tensor op with a float operand, like ``x * lr``
        if self._scalar(node.left) and all(self._scalar(c) for c in node.comparators):
            return  # only floats: a Python bool, met under `if` (CONTROL) or nowhere that compiles
        for side in (node.left, *node.comparators):
            if self._mentions(side) and self._scalar(side):
                self._add(FloatUseKind.PLAIN, "compare", side)
                self._note_composites(side)
            else:
                self.visit(side)

    def _control(self, test: ast.expr) -> None:
        if self._mentions(test):
            self._add(FloatUseKind.CONTROL, "if", test)
            self.visit(test)  # a float method or int conversion in the test is a use too

    def visit_If(self, node: ast.If) -> None:
        self._control(node.test)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._control(node.test)
        self.visit(node.body)
        self.visit(node.orelse)

    def visit_While(self, node: ast.While) -> None:
        self._control(node.test)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)


def _source_of(program: str | Callable[..., Any]) -> str:
    if isinstance(program, str):
        return program
    try:
        return textwrap.dedent(inspect.getsource(program))
    except (OSError, TypeError) as exc:
        raise StructuralError(f"no source for {program!r}: pass the source text") from exc


def analyze_float_uses(
    program: str | Callable[..., Any], float_params: Sequence[str]
) -> ScalarProgramMeta:
    """Find every use the program makes of the named float parameters (``ast``, no run)."""
    fn = find_function(_source_of(program))
    finder = _UseFinder(float_params)
    for stmt in fn.body:
        finder.visit(stmt)
    return ScalarProgramMeta(tuple(float_params), tuple(finder.uses))


def float_params_of(program: Callable[..., Any], args: Sequence[object]) -> tuple[str, ...]:
    """Parameters that receive a Python float in ``args`` (bools and ints are not floats)."""
    names = list(inspect.signature(program).parameters)
    return tuple(n for n, a in zip(names, args, strict=False) if isinstance(a, float))


def predict_compile_count(
    meta: ScalarProgramMeta,
    n_values: int,
    *,
    has_fix: bool,
    recompile_limit: int = 8,
    automatic_dynamic: bool = True,
    dynamic: bool | None = None,
    values: Sequence[Mapping[str, float]] | None = None,
) -> int:
    """Compiles for a sweep over ``n_values`` distinct float values.

    Dynamo compiles the first call with the value static and, with automatic dynamic
    shapes, recompiles once with the float dynamic when a second value arrives (measured:
    two compiles for any sweep of >= 2 values on 2.13.0). Compiled with ``dynamic=True`` the
    float is dynamic from the first call: one compile. A specialised float instead
    recompiles for every value until ``recompile_limit``, after which the frame runs eagerly.
    A Python branch on the float (CONTROL) keeps it dynamic but guards on the branch taken:
    given the swept ``values`` (one binding per call) and tests made of floats and literals
    only, one dynamic graph per distinct outcome; otherwise it is counted as specialised.
    A use that makes the float an int or calls a float method (SPECIALISING) specialises it:
    one graph per value. Where the float went dynamic first, AOTAutograd's tensorify pass
    aborts that compile and dynamo traces the frame again with the float specialised; the
    aborted attempt is a call of the backend but no graph (measured: 3 values, 4 backend calls
    and 3 graphs in dynamo's cache on 2.13.0). Counts here are graphs. A float the program stores
    into an object (ESCAPES) is used by code the program does not show: the count covers only
    the program's own uses, so a caller judging a build by it leaves such a sweep unjudged.
    """
    if n_values <= 0 or not meta.uses:
        return min(max(n_values, 0), 1)
    specialised = min(n_values, recompile_limit)
    if not has_fix and meta.kinds & NEEDS_FIX:
        return specialised
    if FloatUseKind.SPECIALISING in meta.kinds:
        return specialised
    if FloatUseKind.CONTROL in meta.kinds:
        return _guarded_count(meta, values, dynamic=dynamic, recompile_limit=recompile_limit) or specialised
    if values is not None and automatic_dynamic:
        return min(_plain_count(values, dynamic=bool(dynamic)), recompile_limit)
    return 1 if dynamic else min(n_values, 2 if automatic_dynamic else recompile_limit)


def _plain_count(values: Sequence[Mapping[str, float]], *, dynamic: bool) -> int:
    """A static first graph (unless ``dynamic``), one dynamic graph for the other finite values, one
    specialised graph per distinct non-finite value."""
    first, rest = (None, values) if dynamic else (values[0], values[1:])
    others = [b for b in rest if _finite(b) and (first is None or _key(b) != _key(first))]
    return (0 if dynamic else 1) + bool(others) + len(_non_finite(rest, first))


def _finite(binding: Mapping[str, float]) -> bool:
    return all(math.isfinite(v) for v in binding.values())


def _key(binding: Mapping[str, float]) -> tuple[str, ...]:
    return tuple(repr(binding[k]) for k in sorted(binding))  # repr: nan equals nan


def _non_finite(rest: Sequence[Mapping[str, float]], first: Mapping[str, float] | None) -> set[tuple[str, ...]]:
    """The distinct bindings holding a NaN or an infinity, apart from the first call's: dynamo
    never makes such a float symbolic, so each is a graph specialised to it."""
    done = None if first is None else _key(first)
    return {_key(b) for b in rest if not _finite(b) and _key(b) != done}


def _guarded_count(
    meta: ScalarProgramMeta,
    values: Sequence[Mapping[str, float]] | None,
    *,
    dynamic: bool | None,
    recompile_limit: int,
) -> int | None:
    """A static first graph (unless ``dynamic``), then one dynamic graph per branch outcome, and
    one specialised graph per distinct non-finite value."""
    outcomes = _branch_outcomes(meta, values) if values is not None else None
    if not outcomes or values is None:
        return None
    first = None if dynamic else values[0]
    rest = values if dynamic else values[1:]
    dynamic_outcomes = {o for o, b in zip(outcomes[len(values) - len(rest):], rest, strict=True) if _finite(b)}
    graphs = (0 if dynamic else 1) + len(dynamic_outcomes) + len(_non_finite(rest, first))
    return min(graphs, recompile_limit)


def _branch_outcomes(
    meta: ScalarProgramMeta, values: Sequence[Mapping[str, float]]
) -> list[tuple[bool, ...]] | None:
    """Per binding, the value of every branch test; None when a test is not floats and literals."""
    tests = [ast.parse(u.expr, mode="eval").body for u in meta.uses if u.kind is FloatUseKind.CONTROL]
    try:
        return [tuple(bool(_evaluate(t, binding)) for t in tests) for binding in values]
    except (_NotScalar, ArithmeticError):
        return None


class _NotScalar(Exception):
    pass


_COMPARE: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}
_ARITH: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def _evaluate(node: ast.expr, binding: Mapping[str, float]) -> float | bool:  # noqa: PLR0911  # one per node kind
    """A branch test over float parameters and numeric literals, evaluated without eval()."""
    match node:
        case ast.Constant(value=v) if isinstance(v, int | float):
            return v
        case ast.Name(id=name) if name in binding:
            return binding[name]
        case ast.UnaryOp(op=ast.USub(), operand=o):
            return -_evaluate(o, binding)
        case ast.UnaryOp(op=ast.Not(), operand=o):
            return not _evaluate(o, binding)
        case ast.BinOp(left=a, op=op, right=b) if type(op) in _ARITH:
            return _ARITH[type(op)](_evaluate(a, binding), _evaluate(b, binding))
        case ast.BoolOp(op=op, values=vs):
            results = [bool(_evaluate(v, binding)) for v in vs]
            return all(results) if isinstance(op, ast.And) else any(results)
        case ast.Compare(left=left, ops=ops, comparators=comps) if all(type(o) in _COMPARE for o in ops):
            lhs = _evaluate(left, binding)
            for cmp, comp in zip(ops, comps, strict=True):
                rhs = _evaluate(comp, binding)
                if not _COMPARE[type(cmp)](lhs, rhs):
                    return False
                lhs = rhs
            return True
    raise _NotScalar(ast.unparse(node))


def run_interpreted(program: Callable[..., Any], *args: Any) -> Any:
    """Eager semantics: the program on Python floats (the result every build must match)."""
    return program(*args)


def codegen_tensorified(program: str | Callable[..., Any], float_params: Sequence[str]) -> str:
    """The program with every float parameter turned into a 0-dim float64 tensor on entry.

    Method-form in-place ops then take the tensor operand directly (the in-place
    ``Tensor`` overloads) and composite expressions become tensor compute, which is what
    the fixed tensorification pass does inside the graph.
    """
    fn = find_function(_source_of(program))
    prologue = [
        ast.parse(f"{p} = torch.tensor({p}, dtype=torch.float64)").body[0]
        for p in float_params
        if p in {a.arg for a in fn.args.args}
    ]
    missing = set(float_params) - {a.arg for a in fn.args.args}
    if missing:
        raise StructuralError(f"{fn.name} has no parameter(s) {sorted(missing)}")
    fn.body = [*prologue, *fn.body]
    fn.decorator_list = []
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[])))


def compile_tensorified(
    program: Callable[..., Any], float_params: Sequence[str]
) -> Callable[..., Any]:
    source = codegen_tensorified(program, float_params)
    globals_ = dict(getattr(program, "__globals__", {}))
    globals_["torch"] = torch
    return exec_function(
        source, globals_, find_function(source).name, filename="<reference_impl:scalar_recompile>"
    )


@dataclass(frozen=True)
class ScalarUsesForm:
    """The float uses of a program, the same for its plain and tensorified source."""

    uses: tuple[str, ...]

    def describe(self) -> list[str]:
        return list(self.uses) or ["(no float uses)"]


def structural_form(source: str, float_params: Sequence[str]) -> ScalarUsesForm:
    meta = analyze_float_uses(source, float_params)
    return ScalarUsesForm(tuple(u.describe() for u in meta.uses))
