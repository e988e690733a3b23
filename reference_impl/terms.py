"""The terms a structural form is made of (Note [Structural form] in reference_impl/structural.py):
hashable trees of names, attributes, items, calls and operators, the guards and effects of a
trace, and the roles of the helpers every build injects under its own names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "BUILTINS",
    "GLOBAL_ROLES",
    "Attr",
    "Call",
    "Const",
    "Effect",
    "Guard",
    "Item",
    "MapLit",
    "Name",
    "Op",
    "Opaque",
    "Seq",
    "SliceT",
    "Star",
    "StructuralError",
    "Term",
    "Trace",
    "canonical_func",
    "dotted",
    "global_role",
    "is_pure_call",
]


class StructuralError(ValueError):
    """The source cannot be reduced to a structural form (not Python, no such function)."""


class Term:
    """A node of a symbolic value. Subclasses are frozen dataclasses, hence hashable."""

    __slots__ = ()


@dataclass(frozen=True)
class Const(Term):
    value: object

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class Name(Term):
    id: str

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class Attr(Term):
    base: Term
    attr: str

    def __str__(self) -> str:
        return f"{self.base}.{self.attr}"


@dataclass(frozen=True)
class SliceT(Term):
    lower: Term | None
    upper: Term | None

    def __str__(self) -> str:
        lo = "" if self.lower is None else str(self.lower)
        hi = "" if self.upper is None else str(self.upper)
        return f"{lo}:{hi}"


@dataclass(frozen=True)
class Item(Term):
    base: Term
    index: Term

    def __str__(self) -> str:
        return f"{self.base}[{self.index}]"


@dataclass(frozen=True)
class Call(Term):
    func: Term
    args: tuple[Term, ...] = ()
    kwargs: tuple[tuple[str, Term], ...] = ()

    def __str__(self) -> str:
        parts = [str(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs]
        return f"{self.func}({', '.join(parts)})"


@dataclass(frozen=True)
class Op(Term):
    """Operator application; ``op`` is the Python spelling (``+``, ``!=``, ``not``, ``is``)."""

    op: str
    operands: tuple[Term, ...]

    def __str__(self) -> str:
        if self.op == "not":
            return f"not {self.operands[0]}"
        if self.op == "ifexp":
            body, test, orelse = self.operands
            return f"({body} if {test} else {orelse})"
        return "(" + f" {self.op} ".join(str(o) for o in self.operands) + ")"


@dataclass(frozen=True)
class Seq(Term):
    kind: str  # "list" or "tuple"
    items: tuple[Term, ...]

    def __str__(self) -> str:
        inner = ", ".join(str(i) for i in self.items)
        if self.kind == "tuple":
            return f"({inner},)" if len(self.items) == 1 else f"({inner})"
        return f"[{inner}]"


@dataclass(frozen=True)
class MapLit(Term):
    items: tuple[tuple[Term, Term], ...]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}: {v}" for k, v in self.items) + "}"


@dataclass(frozen=True)
class Star(Term):
    value: Term

    def __str__(self) -> str:
        return f"*{self.value}"


@dataclass(frozen=True)
class Opaque(Term):
    """Something we do not interpret (a lambda, a comprehension, an f-string)."""

    text: str

    def __str__(self) -> str:
        return f"<{self.text}>"


@dataclass(frozen=True)
class Guard:
    """``kind`` is ``"if"`` (``cond`` held, or did not when ``negated``) or ``"with"``."""

    kind: str
    cond: Term
    negated: bool = False

    def __str__(self) -> str:
        if self.kind == "with":
            return f"with {self.cond}"
        return f"if not {self.cond}" if self.negated else f"if {self.cond}"


@dataclass(frozen=True)
class Effect:
    """One observable step: ``kind`` is call, setitem, raise, assert or return."""

    kind: str
    term: Term
    guards: tuple[Guard, ...] = ()

    def describe(self) -> str:
        prefix = "".join(f"[{g}] " for g in self.guards)
        body = str(self.term) if self.kind == "call" else f"{self.kind} {self.term}"
        return prefix + body


@dataclass(frozen=True)
class Trace:
    function: str
    params: tuple[str, ...]
    effects: tuple[Effect, ...]

    def of_kind(self, kind: str) -> tuple[Effect, ...]:
        return tuple(e for e in self.effects if e.kind == kind)

    def describe(self) -> list[str]:
        return [e.describe() for e in self.effects]


# Known injected helpers, by role. Every build names them; the name is not the behaviour.
GLOBAL_ROLES: Mapping[str, str] = {
    "_unwrap_tensoralias": "unwrap_alias",
    "_unwrap_alias": "unwrap_alias",
    "gen_alias_from_base": "alias_from_base",
    "_alias_from_base": "alias_from_base",
    "_apply_mutations_": "apply_mutations",
    "_replay_aliases_": "replay_aliases",
    "_increment_version_": "increment_version",
    "torch.autograd.graph.increment_version": "increment_version",
    "_mark_dynamic_": "mark_dynamic",
    "_dyn_dims": "dynamic_dims",
    "_compiled_fn_": "compiled_fn",
    "compiled_fn": "compiled_fn",
    "_first_ctx_": "first_invocation_ctx",
    "_on_before_call_": "on_before_call",
    "_normalize_as_list_": "as_list",
    "_DisableAutocast_": "disable_autocast",
    "_disable_autocast_": "disable_autocast",
    "torch._C._set_grad_enabled": "torch.set_grad_enabled",
    "_expected_type": "subclass_type",
    "_subclass_type": "subclass_type",
    "_meta": "flatten_meta",
    "_vms": "view_meta",
    "_is_optional_symint_output": "optional_symint_output",
}

# Calls whose only job is to compute a value; they are inlined, never effects.
PURE_CALLS = frozenset(
    {
        "len",
        "list",
        "tuple",
        "type",
        "isinstance",
        "range",
        "getattr",
        "next",
        "any",
        "all",
        "unwrap_alias",
        "torch.is_grad_enabled",
        "torch._C._is_view_replay_enabled",
        "as_list",
    }
)
PURE_METHODS = frozenset({"size", "stride", "storage_offset", "detach", "dim", "numel"})
BUILTINS = frozenset(
    {
        "len",
        "list",
        "tuple",
        "type",
        "isinstance",
        "range",
        "getattr",
        "next",
        "any",
        "all",
        "None",
        "True",
        "False",
        "AssertionError",
        "RuntimeError",
        "TypeError",
        "ValueError",
        "dict",
        "set",
        "print",
        "int",
        "float",
        "bool",
        "str",
    }
)

_SUFFIX = re.compile(r"_\d+$")


def global_role(name: str) -> str:
    """The role of a free name: strip a numeric suffix, then map known helpers."""
    if name in GLOBAL_ROLES:
        return GLOBAL_ROLES[name]
    stripped = _SUFFIX.sub("", name)
    return GLOBAL_ROLES.get(stripped, stripped)


def dotted(term: Term) -> str | None:
    if isinstance(term, Name):
        return term.id
    if isinstance(term, Attr):
        base = dotted(term.base)
        return None if base is None else f"{base}.{term.attr}"
    return None


def canonical_func(term: Term) -> Term:
    name = dotted(term)
    if name is not None and name in GLOBAL_ROLES:
        return Name(GLOBAL_ROLES[name])
    return term


def is_pure_call(term: Call) -> bool:
    name = dotted(term.func)
    if name is not None and name in PURE_CALLS:
        return True
    return isinstance(term.func, Attr) and term.func.attr in PURE_METHODS
