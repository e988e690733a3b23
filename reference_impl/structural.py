"""Structural form of generated wrapper functions.

Note [Structural form]
~~~~~~~~~~~~~~~~~~~~~~
Two builds (or a build and this reference) may generate the same wrapper with different
local names (``_u0`` / ``_u_0``), different global names (``_vms_1`` / ``_vms_0``), one-line
or multi-line statements, and values split across several statements (``_out_idx += 1``
counters instead of baked indices). None of that is behaviour. What is behaviour is which
operations run, on which argument slots, with which operands, guarded by which conditions.

So we do not compare text. We *symbolically execute* the straight-line body of the
generated function (:func:`trace_function`):

* parameters become canonical names given by the behaviour (``orig_inputs``, ``args`` ...),
  positionally, so a renamed parameter still lines up;
* locals are inlined: ``_u0 = f(x); y.g(_u0)`` and ``y.g(f(x))`` give the same term;
  integer locals are constant-folded, so a running ``_out_idx`` becomes literal indices;
* a list that starts empty and grows by ``append``/``extend`` is tracked, so a list
  literal and a sequence of appends give the same term;
* globals lose their numeric suffix (``_vms_1`` -> ``_vms``) and known helpers map to a
  role (:data:`GLOBAL_ROLES`), so naming drift of injected helpers is not a difference;
* ``if``/``else`` and ``with`` become *guards* attached to every effect beneath them;
  ``assert A == 3`` records a fact used to fold ``A`` later, message text is dropped.

The result is a :class:`Trace`: the ordered calls with side effects, raises, asserts and
the return value, each with its guards, all as hashable :class:`Term` trees. Each behaviour
then projects the trace to its own small form (``MutationEpilogueForm`` and friends), and
the probe compares forms, printing a line diff of their ``describe()`` output.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import functools
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields

from reference_impl.terms import (
    BUILTINS,
    Attr,
    Call,
    Const,
    Effect,
    Guard,
    Item,
    MapLit,
    Name,
    Op,
    Opaque,
    Seq,
    SliceT,
    Star,
    StructuralError,
    Term,
    Trace,
    canonical_func,
    global_role,
    is_pure_call,
)

__all__ = ["defined_function", "diff_lines", "find_function", "free_roles", "trace_function"]


_BINOPS: dict[type[ast.operator], tuple[str, Callable[[int, int], int]]] = {
    ast.Add: ("+", lambda a, b: a + b),
    ast.Sub: ("-", lambda a, b: a - b),
    ast.Mult: ("*", lambda a, b: a * b),
}
_CMPOPS: dict[type[ast.cmpop], tuple[str, Callable[[object, object], bool]]] = {
    ast.Eq: ("==", lambda a, b: a == b),
    ast.NotEq: ("!=", lambda a, b: a != b),
    ast.Is: ("is", lambda a, b: a is b),
    ast.IsNot: ("is not", lambda a, b: a is not b),
    ast.Lt: ("<", lambda a, b: a < b),  # type: ignore[operator]  # folded only for ints
    ast.LtE: ("<=", lambda a, b: a <= b),  # type: ignore[operator]  # folded only for ints
    ast.Gt: (">", lambda a, b: a > b),  # type: ignore[operator]  # folded only for ints
    ast.GtE: (">=", lambda a, b: a >= b),  # type: ignore[operator]  # folded only for ints
}


def find_function(source: str, name: str | None = None) -> ast.FunctionDef:
    """Parse ``source`` and return the function ``name`` (or the only/first top-level def)."""
    try:
        module = ast.parse(textwrap.dedent(source))
    except SyntaxError as exc:
        raise StructuralError(f"not Python source: {exc.msg} (line {exc.lineno})") from exc
    defs = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if name is not None:
        defs = [d for d in defs if d.name == name]
    if not defs:
        wanted = f"function {name!r}" if name else "a function definition"
        raise StructuralError(f"source has no {wanted}")
    return defs[0]


@dataclass
class _ListVar:
    items: list[Term] = field(default_factory=list)

    def term(self) -> Seq:
        return Seq("list", tuple(self.items))


_Value = Term | _ListVar


class _Evaluator:
    def __init__(self, fn: ast.FunctionDef, params: Sequence[str]) -> None:
        argnames = [a.arg for a in fn.args.args]
        self.env: dict[str, _Value] = {}
        for i, arg in enumerate(argnames):
            self.env[arg] = Name(params[i] if i < len(params) else f"arg{i}")
        self.param_names = tuple(params[: len(argnames)]) or tuple(argnames)
        self.effects: list[Effect] = []
        self.guards: list[Guard] = []
        self.facts: dict[Term, Term] = {}
        self.results: dict[str, int] = {}

    # -- expressions -------------------------------------------------------------------

    def value(self, node: ast.expr) -> _Value:
        if isinstance(node, ast.Name) and node.id in self.env:
            return self.env[node.id]
        if isinstance(node, ast.List) and not node.elts:
            return _ListVar()
        return self.expr(node)

    def expr(self, node: ast.expr) -> Term:
        term = self._expr(node)
        return self.facts.get(term, term)

    def _expr(self, node: ast.expr) -> Term:  # noqa: PLR0911, PLR0912  # one case per AST node kind
        match node:
            case ast.Constant(value=v):
                return Const(v)
            case ast.Name(id=name):
                if name in self.env:
                    val = self.env[name]
                    return val.term() if isinstance(val, _ListVar) else val
                return Name(name if name in BUILTINS or name == "torch" else global_role(name))
            case ast.Attribute(value=base, attr=attr):
                return canonical_func(Attr(self.expr(base), attr))
            case ast.Subscript(value=base, slice=idx):
                return self._subscript(self.expr(base), self._slice(idx))
            case ast.Call(func=func, args=args, keywords=kws):
                f = canonical_func(self.expr(func))
                targs = tuple(self.expr(a) for a in args)
                tkw = tuple(sorted((k.arg or "**", self.expr(k.value)) for k in kws))
                return self._call(f, targs, tkw)
            case ast.BinOp(left=l, op=op, right=r):
                lt, rt = self.expr(l), self.expr(r)
                spelled, fold = _BINOPS.get(type(op), (type(op).__name__, None))
                if fold and isinstance(lt, Const) and isinstance(rt, Const) and _ints(lt, rt):
                    return Const(fold(lt.value, rt.value))  # type: ignore[arg-type]  # ints checked
                if spelled == "+" and isinstance(lt, Seq) and isinstance(rt, Seq):
                    return Seq(lt.kind, lt.items + rt.items)
                return Op(spelled, (lt, rt))
            case ast.Compare(left=l, ops=[op], comparators=[r]):
                lt, rt = self.expr(l), self.expr(r)
                spelled, cfold = _CMPOPS.get(type(op), (type(op).__name__, None))
                if cfold and isinstance(lt, Const) and isinstance(rt, Const):
                    return Const(cfold(lt.value, rt.value))
                if spelled in ("==", "!=") and lt == rt:
                    return Const(spelled == "==")
                return Op(spelled, (lt, rt))
            case ast.UnaryOp(op=ast.Not(), operand=o):
                return _negate(self.expr(o))
            case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int() as v)):
                return Const(-v)
            case ast.BoolOp(op=op, values=values):
                terms = [self.expr(v) for v in values]
                return Op("and" if isinstance(op, ast.And) else "or", tuple(terms))
            case ast.List(elts=[ast.Starred(value=v)]):
                return Call(Name("list"), (self.expr(v),))
            case ast.Tuple(elts=elts) | ast.List(elts=elts):
                kind = "tuple" if isinstance(node, ast.Tuple) else "list"
                return Seq(kind, tuple(self.expr(e) for e in elts))
            case ast.Dict(keys=keys, values=values):
                pairs = tuple(
                    (Opaque("**") if k is None else self.expr(k), self.expr(v))
                    for k, v in zip(keys, values, strict=True)
                )
                return MapLit(pairs)
            case ast.Starred(value=v):
                return Star(self.expr(v))
            case ast.IfExp(test=t, body=b, orelse=o):
                tt = self.expr(t)
                if isinstance(tt, Const):
                    return self.expr(b if tt.value else o)
                return Op("ifexp", (self.expr(b), tt, self.expr(o)))
            case ast.JoinedStr():
                return Opaque("f-string")
            case _:
                return Opaque(type(node).__name__)

    def _slice(self, node: ast.expr) -> Term:
        if isinstance(node, ast.Slice):
            lo = None if node.lower is None else self.expr(node.lower)
            hi = None if node.upper is None else self.expr(node.upper)
            return SliceT(lo, hi)
        return self.expr(node)

    @staticmethod
    def _subscript(base: Term, index: Term) -> Term:
        if index == SliceT(None, None):
            return Call(Name("list"), (base,))
        if (
            isinstance(base, Seq)
            and isinstance(index, Const)
            and isinstance(index.value, int)
            and all(not isinstance(i, Star) for i in base.items)
            and -len(base.items) <= index.value < len(base.items)
        ):
            return base.items[index.value]
        return Item(base, index)

    @staticmethod
    def _call(func: Term, args: tuple[Term, ...], kwargs: tuple[tuple[str, Term], ...]) -> Term:
        # list(x) and [*x] are the same value; so are as_list(x) helpers and x itself.
        if isinstance(func, Name) and func.id == "as_list" and len(args) == 1:
            return args[0]
        if isinstance(func, Name) and func.id == "list" and len(args) == 1:
            inner = args[0]
            if isinstance(inner, Seq):
                return Seq("list", inner.items)
        return Call(func, args, kwargs)

    # -- statements --------------------------------------------------------------------

    def run(self, body: Iterable[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def emit(self, kind: str, term: Term) -> None:
        self.effects.append(Effect(kind, term, tuple(self.guards)))

    def _bound(self, val: _Value) -> _Value:
        """A non-pure call bound to a name runs once: emit it, and name its result."""
        if isinstance(val, Call) and not is_pure_call(val):
            self.emit("call", val)
            callee = str(val.func)
            self.results[callee] = self.results.get(callee, 0) + 1
            n = self.results[callee]
            return Name(f"${callee}" if n == 1 else f"${callee}#{n}")
        return val

    def _maybe_effect(self, term: Term) -> None:
        if isinstance(term, Call) and not is_pure_call(term):
            self.emit("call", term)

    def stmt(self, stmt: ast.stmt) -> None:  # noqa: PLR0912  # one case per statement kind
        match stmt:
            case ast.Assign(targets=targets, value=value):
                val = self._bound(self.value(value))
                for target in targets:
                    self.assign(target, val)
            case ast.AnnAssign(target=target, value=value) if value is not None:
                self.assign(target, self._bound(self.value(value)))
            case ast.AugAssign(target=ast.Name(id=name) as target, op=op, value=value):
                new = self.expr(
                    ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=op, right=value)
                )
                self.assign(target, new)
            case ast.Expr(
                value=ast.Call(func=ast.Attribute(value=ast.Name(id=name), attr=m), args=args)
            ) if isinstance(self.env.get(name), _ListVar):
                self.list_method(name, m, args)
            case ast.Expr(value=value):
                self._maybe_effect(self.expr(value))
            case ast.If(test=test, body=body, orelse=orelse):
                self.branch(test, body, orelse)
            case ast.With(items=items, body=body):
                pushed = 0
                for item in items:
                    self.guards.append(Guard("with", self.expr(item.context_expr)))
                    pushed += 1
                self.run(body)
                del self.guards[len(self.guards) - pushed :]
            case ast.Try(body=body, finalbody=final, handlers=handlers, orelse=orelse):
                self.run(body)
                self.run(orelse)
                for handler in handlers:
                    self.guards.append(Guard("if", Opaque("except")))
                    self.run(handler.body)
                    self.guards.pop()
                self.run(final)
            case ast.Assert(test=test):
                cond = self.expr(test)
                if isinstance(cond, Const) and cond.value:
                    return
                if isinstance(cond, Op) and cond.op == "==" and isinstance(cond.operands[1], Const):
                    self.facts[cond.operands[0]] = cond.operands[1]
                self.emit("assert", cond)
            case ast.Raise(exc=exc):
                self.emit("raise", Const(None) if exc is None else self.expr(exc))
            case ast.Return(value=value):
                self.emit("return", Const(None) if value is None else self.expr(value))
            case ast.Delete() | ast.Pass():
                pass
            case _:
                self.emit("call", Opaque(type(stmt).__name__))

    def list_method(self, name: str, method: str, args: list[ast.expr]) -> None:
        lst = self.env[name]
        assert isinstance(lst, _ListVar)
        if self.guards and method in ("append", "extend", "clear"):
            # A conditional append makes the list's content data-dependent.
            lst.items.append(Opaque(f"conditional {method}"))
            return
        if method == "append" and len(args) == 1:
            lst.items.append(self.expr(args[0]))
        elif method == "extend" and len(args) == 1:
            ext = self.expr(args[0])
            lst.items.extend(ext.items if isinstance(ext, Seq) else (Star(ext),))
        elif method == "clear":
            lst.items.clear()
        else:
            self.emit("call", Call(Attr(lst.term(), method), tuple(self.expr(a) for a in args)))

    def assign(self, target: ast.expr, val: _Value) -> None:
        match target:
            case ast.Name(id=name):
                self.env[name] = val
            case ast.Tuple(elts=elts) | ast.List(elts=elts):
                term = val.term() if isinstance(val, _ListVar) else val
                for i, elt in enumerate(elts):
                    self.assign(elt, self._subscript(term, Const(i)))
            case ast.Subscript(value=base, slice=idx):
                term = val.term() if isinstance(val, _ListVar) else val
                self.emit("setitem", Op("=", (Item(self.expr(base), self._slice(idx)), term)))
            case _:
                self.emit("setitem", Opaque(type(target).__name__))

    def branch(self, test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt]) -> None:
        cond = self.expr(test)
        if isinstance(cond, Const):
            self.run(body if cond.value else orelse)
            return
        if isinstance(cond, Op) and cond.op == "not":
            # ``if not c: A else: B`` is ``if c: B else: A``: one spelling for both.
            cond, body, orelse = cond.operands[0], orelse, body
        if _is_as_list_normalisation(test, body, orelse):
            return
        before = dict(self.env)
        self.guards.append(Guard("if", cond))
        self.run(body)
        after_body = self.env
        self.env = dict(before)
        self.guards[-1] = Guard("if", cond, negated=True)
        self.run(orelse)
        self.guards.pop()
        after_else = self.env
        merged = dict(before)
        for key in set(after_body) | set(after_else):
            a, b = after_body.get(key), after_else.get(key)
            if a is b or a == b:
                if a is not None:
                    merged[key] = a
            elif isinstance(a, Term) and isinstance(b, Term):
                # A value chosen by one branch is kept as a conditional; one chosen by branches
                # within branches (a counter bumped under runtime tests) would nest without
                # bound, so it is only said to depend on them.
                chosen = Op("ifexp", (a, cond, b))
                merged[key] = Opaque("branch-dependent value") if _nested_ifexp(chosen) else chosen
            else:
                merged[key] = Opaque(f"branch-dependent {key}")
        self.env = merged


def _nested_ifexp(term: Op) -> bool:
    """Whether ``term``'s operands contain a conditional (walked once per node: terms are DAGs)."""
    seen: set[int] = set()
    stack: list[object] = list(term.operands)
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
            continue
        if id(node) in seen or not isinstance(node, Term):
            continue
        seen.add(id(node))
        if isinstance(node, Op) and node.op == "ifexp":
            return True
        for f in fields(node):  # type: ignore[arg-type]  # every Term subclass is a dataclass
            stack.append(getattr(node, f.name))
    return False


def _ints(*consts: Const) -> bool:
    return all(isinstance(c.value, int) and not isinstance(c.value, bool) for c in consts)


def _negate(term: Term) -> Term:
    if isinstance(term, Const):
        return Const(not term.value)
    if isinstance(term, Op) and term.op == "not":
        return term.operands[0]
    return Op("not", (term,))


def _is_as_list_normalisation(test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt]) -> bool:
    """``if isinstance(x, tuple): x = list(x) elif not isinstance(x, list): x = [x]``.

    That chain only turns whatever the compiled function returned into a list; it is the
    same value for the structural form (see Note [Structural form]).
    """
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and isinstance(test.args[0], ast.Name)
    ):
        return False
    name = test.args[0].id
    stmts = list(body)
    while len(orelse) == 1 and isinstance(orelse[0], ast.If):
        stmts.extend(orelse[0].body)
        orelse = orelse[0].orelse
    stmts.extend(orelse)
    return all(
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id == name
        for s in stmts
    )


def trace_function(source: str, params: Sequence[str], name: str | None = None) -> Trace:
    """Symbolically execute function ``name`` in ``source``; see Note [Structural form].

    ``params`` are the canonical names of the function's parameters, by position.
    """
    return _trace(source, tuple(params), name)


# A build generates the same few wrappers for many programs; the trace is a pure function of its
# arguments and immutable, so each distinct source is traced once.
@functools.lru_cache(maxsize=512)
def _trace(source: str, params: tuple[str, ...], name: str | None) -> Trace:
    fn = find_function(source, name)
    ev = _Evaluator(fn, params)
    ev.run(fn.body)
    return Trace(fn.name, ev.param_names, tuple(ev.effects))


@functools.lru_cache(maxsize=512)
def defined_function(source: str) -> str:
    """The name of the function ``source`` defines (the first top-level one)."""
    return find_function(source).name


@functools.lru_cache(maxsize=512)
def free_roles(source: str, name: str | None = None) -> frozenset[str]:
    """The roles of the helpers function ``name`` reads besides its arguments, Python's
    builtins and ``torch``: what the build injects into its generated function."""
    fn = find_function(source, name)
    bound = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    loaded: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return frozenset(global_role(n) for n in loaded - bound - _PYTHON_BUILTINS if n not in BUILTINS and n != "torch")


_PYTHON_BUILTINS = frozenset(dir(builtins))


def diff_lines(
    expected: Sequence[str],
    actual: Sequence[str],
    *,
    labels: tuple[str, str] = ("reference", "build"),
) -> str:
    """A unified diff of two structural descriptions, empty when they agree."""
    return "\n".join(
        difflib.unified_diff(list(expected), list(actual), labels[0], labels[1], lineterm="", n=2)
    )
