"""The short reproducer: a plain PyTorch program that compares eager and compiled as the harness does.

What a maintainer would accept in an upstream issue: torch as the only import, the program as the
case wrote it (its classes inlined), its inputs built by the very statements the harness ran
(Note [Inputs as code] in conformance/core/build.py), every call with what the caller does around
it, the compiled call with the case's backend, options and config, and then every check the
harness applies to that program (applied.py records them from the core itself), each read as its
declaration says (`observe` in conformance/core/checks.py) and judged by the core's own judge and
allowances, carried as their source: so the script says MISMATCH on any build exactly where the
harness would, and prints both sides of each check that differs. One blank line between
definitions: a reproducer is read in an issue, where length counts.

`render_short` returns None only where plain torch cannot show what the record holds (an error, a
diverging internals probe under --strict-internals, an input that exists on one side only); the
full reproducer then serves.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from conformance.core import build, call, checks, mismatch, state
from conformance.core.build import CallPoint, call_points, input_code, leaf_var, load_classes
from conformance.core.checks import C, Check
from conformance.core.compile import CLOSURE_MAKER, make_function, module_at
from conformance.core.entry import AOT_FUNCTION, NONE, WITHOUT_DYNAMO, counts_graphs
from conformance.core.loop import REPRO_CANNOT_TELL, REPRO_DIFFERS, REPRO_MATCHES, expected_compiles, loop_only
from conformance.core.mismatch import CaseBroken
from conformance.core.spec import CallRaisesData
from conformance.reproducer import VERDICT_LINE, carried, docstring_safe
from conformance.reproducer.applied import Applied, applied_checks
from conformance.reproducer.calls import loop as _loop
from conformance.reproducer.calls import runs as _runs
from conformance.reproducer.calls import unnamed_leaves as _unnamed_leaves
from conformance.reproducer.entry_lines import (
    MODULE_ENTRY_LINES,
    anew_lines,
    aot_function_lines,
    config_lines,
    given_module_lines,
    torch_compile_module_lines,
)
from conformance.results import ResultRecord

if TYPE_CHECKING:
    from conformance.data.loader import LoadedCase
    from conformance.data.variants import Variant

QUOTES = '"' * 3
GRAD_MODE_WORDS = ("grad_enabled", "no_grad", "enable_grad", "inference_mode")
# the core's functions a check's `observe` may call (a script carries those it calls)
CORE_FUNCTIONS = {name: fn for module in (state, checks) for name, fn in vars(module).items()
                  if inspect.isfunction(fn) and fn.__module__ == module.__name__}


@dataclass
class _Script:
    """What the script needs, gathered while its parts are written."""

    helpers: list[Any] = field(default_factory=list)
    stdlib: set[str] = field(default_factory=lambda: {"sys"})  # modules the script imports before torch
    imports: list[str] = field(default_factory=list)
    names: dict[Any, str] = field(default_factory=dict)  # a helper carried under another name
    constants: dict[str, str] = field(default_factory=dict)  # module constants a carried function reads
    plain: bool = False  # no tensor can be a subclass: helpers carry no subclass branch
    carrying: set[Any] = field(default_factory=set)  # functions being carried: mutual calls end there

    def need(self, *functions: Any) -> None:
        for fn in functions:
            if fn not in self.helpers:
                self.helpers.append(fn)

    def helper_source(self) -> list[str]:
        return [part for fn in self.helpers for part in (_plain(fn, self.names.get(fn), plain=self.plain), "")]


class _Unannotated(ast.NodeTransformer):
    def __init__(self, *, plain: bool, names: dict[str, Any]) -> None:
        self.plain = plain
        self.names = names  # the function's globals

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """A check's id through the registry (`C.<CHECK>.id`) as the id itself: the script has no registry."""
        inner = node.value
        if (node.attr == "id" and isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)
                and self.names.get(inner.value.id) is C):
            return ast.copy_location(ast.Constant(getattr(C, inner.attr).id), node)
        return self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
        if self.plain:  # the branch a subclass takes: `if hasattr(type(t), '__tensor_flatten__'):`
            node.body = [n for n in node.body
                         if not (isinstance(n, ast.If) and "__tensor_flatten__" in ast.unparse(n.test))]
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
            if arg is not None:
                arg.annotation = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return ast.Pass()
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


def _plain(fn: Any, name: str | None = None, *, plain: bool = False) -> str:
    """A function of the harness's as a script carries it: its own source, without annotations
    (they name the harness's types) or docstring, under `name` where given; for a script of plain
    tensors only, without the branches a subclass takes."""
    tree = _Unannotated(plain=plain, names=fn.__globals__).visit(ast.parse(textwrap.dedent(inspect.getsource(fn))))
    if name is not None:
        tree.body[0].name = name
    return ast.unparse(ast.fix_missing_locations(tree))


_SUBCLASS_DEF = re.compile(r"class\s+\w+\s*\([^)]*\bTensor\b")  # a class deriving from torch.Tensor


def _plain_tensors(lc: LoadedCase) -> bool:
    """Whether no tensor of the case can be a subclass: none among its inputs (declared or given to
    a later call), none its classes block or program can make."""
    def subclassed(spec: Any) -> bool:
        if isinstance(spec, dict):
            return bool(spec.get("two_tensor") or spec.get("subclass")) or any(subclassed(v) for v in spec.values())
        return isinstance(spec, list) and any(subclassed(v) for v in spec)

    text = f"{lc.case.classes or ''}\n{lc.case.program}"
    words = ("TwoTensor", "__torch_dispatch__", "_make_wrapper_subclass", "__tensor_flatten__")
    return (not subclassed([lc.data["inputs"], lc.data["calls"]]) and not any(w in text for w in words)
            and not _SUBCLASS_DEF.search(text))


def _eager_result(lc: LoadedCase, variant: Variant, point: CallPoint, classes: dict[str, Any]) -> str:
    """What the program returns, called eagerly on a call's inputs: `one` tensor (the script then
    backwards through `out` itself), `no tensor` (nothing to backward), `several`, or `unknown` where
    that call raises."""
    try:
        fn = make_function(lc.program_source, lc.case.function_name, lc.program_filename, classes,
                           lc.case.compile.closure)
        with torch.random.fork_rng(devices=[]):
            env = build.Env(dict(classes))
            inputs = build.build_inputs(lc.data, "cpu", variant.mode, point, env)
            side = call.call(fn, inputs, lc.data, env=env)
    except Exception:  # whatever stops it, the general form serves
        return "unknown"
    if side.exc is not None:
        return "unknown"
    if isinstance(side.result, torch.Tensor):
        return "one"
    return "several" if any(isinstance(o, torch.Tensor) for o in state.flatten_outputs(side.result)) else "no tensor"


def _program_lines(program: str, name: str, closure: Sequence[str]) -> list[str]:
    """The program, bound to `f`; where it closes over classes-block names (compile.closure), made inside a function
    that takes them, as upstream's function closes over its test's locals."""
    if not closure:
        return [program, *([f"f = {name}"] if name != "f" else [])]
    names = ", ".join(closure)
    return [f"def {CLOSURE_MAKER}({names}):  # the program closes over these, as upstream's function does",
            textwrap.indent(program, "    "), f"    return {name}", "", f"f = {CLOSURE_MAKER}({names})"]


def _compile_lines(lc: LoadedCase, variant: Variant, *, count: bool) -> list[str]:
    """The script's compile, with the case's own forward compiler (`compile.fw_compiler`, from the classes block the
    script carries) where it names one."""
    lines = _entry_lines(lc, variant, count=count)
    compiler = lc.data["compile"]["fw_compiler"]
    return lines if compiler is None else [
        line.replace("fw_compiler=nop", f"fw_compiler={compiler}").replace("bw_compiler=nop", f"bw_compiler={compiler}")
        for line in lines]


def _entry_lines(lc: LoadedCase, variant: Variant, *, count: bool) -> list[str]:
    options = lc.data["compile"]
    if variant.backend == AOT_FUNCTION:
        return aot_function_lines(options, variant.kiim)
    if variant.backend == NONE:
        return ["compiled_f = f  # the control: no compiler"]
    at = module_at(lc.data)
    if variant.backend in MODULE_ENTRY_LINES:
        entry = MODULE_ENTRY_LINES[variant.backend]
        return [line.replace("KIIM", str(variant.kiim)).replace("PRE_DISPATCH", str(options["pre_dispatch"]))
                .replace("DYNAMIC", str(bool(options["dynamic"])))
                .replace("TRACING", repr(options["tracing_mode"]))
                for line in (entry if at is None else given_module_lines(entry, at))]
    backend = repr(variant.backend)
    lines: list[str] = []
    if count:
        lines += ["graphs = []", "",
                  "def backend(gm, example_inputs):  # counts the graphs it compiled, not those dynamo aborted",
                  f"    compiled = torch._dynamo.lookup_backend({backend})(gm, example_inputs)",
                  "    graphs.append(gm)", "    return compiled", ""]
        backend = "backend"
    # torch.compile's own defaults: dynamic=False is not the default
    given = {"dynamic": (options["dynamic"], None), "fullgraph": (options["fullgraph"], False)}
    extra = "".join(f", {k}={value!r}" for k, (value, default) in given.items() if value is not default)
    if variant.backend == "inductor":
        extra += f", mode={options['mode']!r}" if options["mode"] else ""
        extra += f", options={options['options']!r}" if options["options"] else ""
    call = f"torch.compile(f, backend={backend}{extra})"
    return [*lines, *(torch_compile_module_lines(call, at) if at is not None else [f"compiled_f = {call}"])]


def _carry(fn: Any, s: _Script) -> None:
    """`fn` and what it calls among its module's functions, with the constants and modules it names."""
    if fn in s.carrying:
        return
    s.carrying.add(fn)
    for name in _names(fn.__code__):
        value = fn.__globals__.get(name)
        if isinstance(value, types.ModuleType) and value.__name__ != "torch":
            s.stdlib.add(value.__name__)
        elif inspect.isfunction(value) and value.__module__.startswith("conformance."):
            _carry(value, s)
        elif isinstance(value, re.Pattern):
            s.stdlib.add("re")
            s.constants[name] = f"re.compile({value.pattern!r}, {value.flags & ~re.UNICODE})"
        elif isinstance(value, int | float | str | tuple) and not isinstance(value, bool) and name.isupper():
            s.constants[name] = repr(value)
    s.need(fn)


def _calls(observe: str) -> list[Any]:
    """The core's functions an observe expression calls, each after those its arguments call."""
    def called(node: ast.AST) -> list[str]:
        inner = [name for child in ast.iter_child_nodes(node) for name in called(child)]
        return inner + ([node.func.id] if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else [])

    return [CORE_FUNCTIONS[name] for name in dict.fromkeys(called(ast.parse(observe, mode="eval")))
            if name in CORE_FUNCTIONS]


def _names(code: types.CodeType) -> list[str]:
    """The global names a function's code (and the code nested in it) reads."""
    found = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _names(const)
    return list(dict.fromkeys(found))


def _allowed(check: Check, backend: str) -> list[Callable[[str, str], bool]]:
    """What the core's allowances accept for this check on this entry point (none on a core without them)."""
    return [a.accepts for a in getattr(checks, "ALLOWANCES", ()) if a.check == check and a.entry(backend)]


def _seen_raise(key: str, raised: str) -> str:
    """The script's line (in its try around `key`) that records what raised there, as the exception check."""
    return f"    seen[{key!r}] = {{{C.EXCEPTION.id!r}: {raised}}}"


@dataclass
class _Block:
    """The observations of one call, grouped by where they read (the key a script's `seen` uses)."""

    groups: dict[str, list[Applied]] = field(default_factory=dict)
    written: dict[str, list[Applied]] = field(default_factory=dict)  # after the write-through
    backward: bool = False
    relations: bool = False
    before: set[str] = field(default_factory=set)  # inputs whose version or storage is compared

    @classmethod
    def of(cls, applied: list[Applied]) -> _Block:
        block = cls()
        for a in applied:
            if a.check.reads == "raised" and a.path in ("call", "backward"):
                block.backward |= a.path == "backward"
                continue  # the script's try around the call and the backward observes these
            # a check that opens a phase is read in it, under its name; the checks after it, at their path in it
            key = a.check.phase or (f"{a.phase}: {a.path}" if a.phase else a.path)
            (block.written if a.phase or a.check.phase else block.groups).setdefault(key, []).append(a)
            block.relations |= a.check.reads in ("inputs", "peers")
            if a.check.reads == "before":
                block.before.add(a.subject)
        return block


@dataclass
class _Render:
    lc: LoadedCase
    variant: Variant
    s: _Script
    exprs: dict[int, dict[str, str]]
    kinds: list[str]
    tensor_checks: dict[Check, None] = field(default_factory=dict)  # used, in order: OBSERVE's entries
    compared: dict[Check, Applied] = field(default_factory=dict)  # every check compared, one application each
    persisted: set[str] = field(default_factory=set)

    def call_lines(self, i: int, point: CallPoint, block: _Block, classes: dict[str, Any]) -> list[str]:
        case, v, s = self.lc.data, self.variant, self.s
        code = input_code(case, v.device, v.mode, point, persisted=self.persisted, classes=classes)
        s.need(*(build.HELPERS[name] for name in code.helpers))
        s.imports += [line for line in code.imports if line not in s.imports]
        self.persisted |= {n for n, spec in case["inputs"].items() if spec["persist"] or spec["optimizer"] is not None}
        what = point.label.split(" (", 1)[1][:-1] if " (" in point.label else ""
        several = len(self.kinds) > 1
        exprs = self.exprs.get(i + 1, {})
        lines = [*([f"# call {i + 1}" + (f": {what}" if what else "")] if several or what else []),
                 "seen = {}", "calls.append(seen)", *code.lines]
        if point.before:
            lines += self._action(point, "before")
        lines += self._dynamic(point)
        anew = {"keep_cache": "reset=False", "new_backend": "reset=False, new_backend=True"}.get(str(point.fresh), "")
        lines += ["if compiled:  # compiled afresh from here on, as upstream compiles anew",
                  f"    fn = compiled_anew({anew})"] if point.fresh else []
        if block.before:
            lines.append("version_before = {" + ", ".join(f"{n!r}: {exprs.get(n, n)}._version"
                                                          for n in sorted(block.before)) + "}")
            lines.append("storage_before = {" + ", ".join(f"{n!r}: {exprs.get(n, n)}.untyped_storage()"
                                                          for n in sorted(block.before)) + "}")
        counted = point.compiles is not None and counts_graphs(self.variant.backend)
        lines += [*(["graphs_before = len(graphs)"] if counted else []), *self._call(i)]
        if counted:  # as the harness says it (core.loop._run_pass)
            lines += [f"if compiled and len(graphs) - graphs_before != {point.compiles}:",
                      f"    print(f'MISMATCH: call {i + 1}: graphs compiled is {{len(graphs) - graphs_before}}, but "
                      f"{point.where or 'first_call'}.compiles gives {point.compiles}')", "    miscounted.append(1)"]
        if self.variant.mode == "training" and block.backward and self.kinds[i] != "no tensor":
            lines += self._backward(i)
        declared = call.after_raises_of(point)
        if point.after and declared is None:
            lines += self._action(point, "after")
        if block.relations:
            lines.append("tensors = {" + ", ".join(f"{n!r}: {e}" for n, e in exprs.items()) + "}")
        lines += [self._observation(key, group, i, exprs) for key, group in block.groups.items()]
        if block.written:
            s.need(call.write_through_outputs)
            lines.append("written = write_through_outputs(outs)  # in place, through each output")
            lines += [self._observation(key, group, i, exprs) for key, group in block.written.items()]
        if declared is not None:  # observed as the call left it, then the action (Note [A raise after the call])
            lines += self._declared_after(point, declared)
        return lines

    def _declared_after(self, point: CallPoint, declared: CallRaisesData) -> list[str]:
        """The caller's after action whose raise the case declares: judged against that declaration on each side."""
        source = (point.after or "").strip("\n").splitlines()
        key = f"{point.where}.after"
        self.compared.setdefault(C.EXCEPTION, Applied(C.EXCEPTION, key, "", "", (), 0, "", str))
        _carry(carried.as_declared, self.s)
        sides = declared["sides"]
        listed = "True" if len(sides) > 1 else "compiled" if sides[0] == "compiled" else "not compiled"
        judge = [f"as_declared({e}, {listed}, {declared['type']!r}, {declared['match']!r})" for e in ("None", "exc")]
        return ["try:", f"    # the caller, after the call: it raises {declared['type']} on the {' and '.join(sides)} "
                "side, as upstream asserts", *(f"    {x}" for x in source),
                _seen_raise(key, judge[0]), "except Exception as exc:", _seen_raise(key, judge[1])]

    def _action(self, point: CallPoint, which: str) -> list[str]:
        """A caller's action, what it raises on the compiled side being a difference the harness reports."""
        source = getattr(point, which).strip("\n").splitlines()
        key = f"{point.where}.{which}"
        self.compared.setdefault(C.EXCEPTION, Applied(C.EXCEPTION, key, "", "", (), 0, "", str))
        return ["try:", f"    # the caller, {which} the call", *(f"    {x}" for x in source),
                _seen_raise(key, "None"), "except Exception as exc:", _seen_raise(key, "raised(exc)")]

    def _dynamic(self, point: CallPoint) -> list[str]:
        specs = {n: point.overrides.get(n, spec) for n, spec in self.lc.data["inputs"].items()}
        dims = [(n, list(spec["tensor"]["dynamic_dims"])) for n, spec in specs.items()
                if spec["tensor"] is not None and spec["tensor"]["dynamic_dims"]]
        if not dims or self.variant.backend in WITHOUT_DYNAMO:
            return []
        return ["if compiled:", *(f"    torch._dynamo.mark_dynamic({n}, {d})" for n, d in dims)]

    def _call(self, i: int) -> list[str]:
        """The call in the case's modes, what it raised (the harness compares nothing else then)."""
        case = self.lc.data
        passed = [n for n, spec in case["inputs"].items() if not spec["hidden"]]
        lines = [f"out = fn({', '.join(passed)})",
                 "modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), "
                 "tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')), dispatch_keys())"]
        # the case's around: context innermost, then inference mode, as the harness enters them
        for context in [case["around"], "torch.inference_mode()" if case["inference_mode"] else None]:
            lines = [f"with {context}:", *(f"    {x}" for x in lines)] if context is not None else lines
        if not case["grad_enabled"] or any(w in self.lc.case.program for w in GRAD_MODE_WORDS):
            # the call in the case's grad mode, restored after it, as the harness does
            lines = [f"with torch.set_grad_enabled({case['grad_enabled']}):", *(f"    {x}" for x in lines)]
        self.compared.setdefault(C.EXCEPTION, Applied(C.EXCEPTION, "call", "", "", (), 0, "", str))
        self.s.need(state.flatten_outputs)
        _carry(state.dispatch_keys, self.s)
        return ["try:", *(f"    {x}" for x in lines), _seen_raise("call", "None"),
                "except Exception as exc:", _seen_raise("call", "raised(exc)"), "    return calls",
                "outs = flatten_outputs(out)"]

    def _backward(self, i: int) -> list[str]:
        seed, mode = self.lc.data["seed"] + call.TANGENT_SEED_OFFSET, self.lc.data["backward"]
        self.s.plain = _plain_tensors(self.lc)
        if mode != "seeded":  # upstream's sums (call.sum_backward)
            retain = "retain_graph=True" if mode == "sum" else ""
            step = (["if out.requires_grad:", f"    out.sum().backward({retain})"] if self.kinds[i] == "one"
                    else [f"sum_backward(out, once={mode == 'sum_once'})"])
            self.s.need(*([call.sum_backward] if self.kinds[i] != "one" else []))
        elif self.kinds[i] == "one":  # what backward_outputs does with one output
            self.s.need(call.tangent)
            step = ["if out.requires_grad:", f"    out.backward(tangent(out, torch.Generator().manual_seed({seed})))"]
        else:
            self.s.need(call.tangent, call.backward_outputs)
            step = [f"backward_outputs(outs, {seed})"]
        if self.lc.data["around"] is not None:  # the backward inside the case's context too, as the harness runs it
            step = [f"with {self.lc.data['around']}:", *(f"    {x}" for x in step)]
        return ["try:", *(f"    {x}" for x in step), _seen_raise("backward", "None"),
                "except Exception as exc:", _seen_raise("backward", "raised(exc)")]

    def _subject(self, a: Applied, i: int, exprs: dict[str, str]) -> str:
        if a.role == "output":
            k = int(a.subject[4:-1])
            expr = "out" if k == 0 and self.kinds[i] == "one" else f"outs[{k}]"
        elif a.role == "grad":
            names = list(self.lc.data["inputs"])
            leaf = (leaf_var(a.subject[: -len(".leaf")], names) if a.subject.endswith(".leaf")
                    else exprs.get(a.subject, a.subject))
            expr = leaf + ("" if a.check.reads == "leaf" else ".grad")
        else:
            expr = exprs.get(a.subject, a.subject)
        return expr + "".join(f".{name}" for name in a.inner)

    def _observation(self, key: str, group: list[Applied], i: int, exprs: dict[str, str]) -> str:
        """One statement: what this side shows for every check read at `key`."""
        looks: dict[str, list[str]] = {}
        inline: list[str] = []
        for a in group:
            self.compared.setdefault(a.check, a)
            if a.check.reads in ("tensor", "leaf"):
                self.tensor_checks[a.check] = None
                looks.setdefault(self._subject(a, i, exprs), []).append(a.check.id)
            else:
                inline.append(f"{a.check.id!r}: {self._in_context(a, i, exprs)}")
        parts = [f"**look({expr}, {', '.join(map(repr, names))})" for expr, names in looks.items()] + inline
        text = parts[0][2:] if len(parts) == 1 and looks else f"{{{', '.join(parts)}}}"
        return f"seen[{key!r}] = observed(lambda: {text})"

    def _in_context(self, a: Applied, i: int, exprs: dict[str, str]) -> str:
        """The check's `observe` in the script's names: `t` its subject, `v0`/`s0` the subject's version and
        storage before the call; `tensors`, for a check among its peers, with the outputs before it."""
        observe = a.check.observe
        for fn in _calls(observe):
            _carry(fn, self.s)
        if a.check.reads not in ("before", "inputs", "peers"):
            return observe  # it names nothing of a tensor's
        names = {"v0": f"version_before[{a.subject!r}]", "s0": f"storage_before[{a.subject!r}]",
                 "t": self._subject(a, i, exprs)}
        if a.check.reads == "peers" and a.role == "output":
            k = int(a.subject[4:-1])
            earlier = [f"'out[{j}]': outs[{j}]" for j in range(k) if self._is_tensor_output(j, i)]
            if earlier:
                names["tensors"] = "{**tensors, " + ", ".join(earlier) + "}"
        # one pass: a subject may be named s0
        return re.sub(r"\b(v0|s0|t|tensors)\b", lambda m: names.get(m[1], m[1]), observe)

    def _is_tensor_output(self, j: int, i: int) -> bool:
        return any(a.role == "output" and a.subject == f"out[{j}]" and a.check is C.DTYPE
                   for a in self.compared.values()) or self.kinds[i] == "one"

    def tables(self) -> list[str]:
        """OBSERVE, JUDGES, ALLOWED (and SHOW), TOL: the checks' declarations as the script's data."""
        s, lines = self.s, []
        if self.tensor_checks:
            for fn in dict.fromkeys(fn for c in self.tensor_checks for fn in _calls(c.observe)):
                _carry(fn, s)
            lines += ["OBSERVE = {  # how one side shows each check of a tensor t (conformance/core/checks.py)",
                      *(f"    {c.id!r}: lambda t: {c.observe}," for c in self.tensor_checks), "}"]
        judges: dict[str, str] = {}
        allowed: dict[str, list[str]] = {}
        shows: dict[str, str] = {}
        for c, a in self.compared.items():
            _carry(c.judge, s)
            judges[c.id] = c.judge.__name__
            accepts = _allowed(c, self.variant.backend)  # as the core asks: the entry point, not its label
            if accepts:
                for fn in accepts:
                    _carry(fn, s)
                allowed[c.id] = [fn.__name__ for fn in accepts]
                if a.show is mismatch.short:
                    _carry(mismatch.short, s)
                elif a.show is not str:
                    raise _Unshowable(f"{c.id}: an allowance over sides shown by {a.show!r}")
                shows[c.id] = a.show.__name__
        expect = self.lc.data["expect"]
        lines += ["JUDGES = {" + ", ".join(f"{c!r}: {j}" for c, j in judges.items()) + "}  # the core's judges"]
        if allowed:
            lines += ["ALLOWED = {" + ", ".join(f"{c!r}: ({', '.join(f)},)" for c, f in allowed.items())
                      + "}  # differences the core documents, not failures",
                      "SHOW = {" + ", ".join(f"{c!r}: {f}" for c, f in shows.items()) + "}"]
        else:
            lines += ["ALLOWED, SHOW = {}, {}"]
        lines += ["", "class TOL:  # the case's tolerance (None: torch's defaults for the dtype)",
                  f"    rtol, atol = {expect['rtol']!r}, {expect['atol']!r}"]
        return lines


class _Unshowable(Exception):
    """What the record holds is beyond plain torch: the full reproducer serves."""


def _title(lc: LoadedCase, compared: int, calls: int) -> str:
    """Nothing of the build or the record it was written for: the same item's script on every build is
    one file (a published report stores it once)."""
    return (f"{lc.case.summary}\nCompares compiled with eager on the {compared} checks the harness applies to this "
            f"program ({calls} call(s)); exit {REPRO_DIFFERS} where any differs, {REPRO_MATCHES} where none does, "
            f"{REPRO_CANNOT_TELL} without the device.\nFrom {lc.display_path}.")


def _showable(check_id: str) -> bool:
    """Whether a script can show a mismatch of this check (the full reproducer serves where it cannot)."""
    check = checks.by_id(check_id)
    return check is not None and check.reads != "nothing"


def render_short(lc: LoadedCase, variant: Variant, record: ResultRecord) -> str | None:
    """The short script of the variant (every check the harness applies), or None where it cannot show
    what the record holds (what only the harness's loop models is the full script's)."""
    if record.status == "error" or not all(_showable(m.check) for m in record.mismatches) or loop_only(lc.data):
        return None
    try:
        applied, exprs = applied_checks(lc, variant)
        text = _render(lc, variant, applied, exprs)
        compile(text, "<short reproducer>", "exec")  # a name of the case's that the script's own names shadow
    except (CaseBroken, _Unshowable, SyntaxError):
        return None
    return text


def _render(lc: LoadedCase, variant: Variant, applied: list[Applied], exprs: dict[int, dict[str, str]]) -> str:
    points = call_points(lc.data)
    classes = load_classes(lc.case.classes, f"<classes of {lc.id}>")
    s = _Script()
    kinds = [_eager_result(lc, variant, p, classes) for p in points]
    r = _Render(lc, variant, s, exprs, kinds)
    blocks = [_Block.of([a for a in applied if a.call == i + 1]) for i in range(len(points))]
    out = ["calls = []"]
    if any(re.search(r"\bout\b", p.before or "") for p in points):
        out.append("out = None")  # a caller's action before a call sees the last call's `out`
    bodies = _unnamed_leaves([r.call_lines(i, p, blocks[i], classes) for i, p in enumerate(points)])
    for first, run in _runs(bodies):
        out += _loop(first, run) if len(run) > 1 else run[0]
    for fn in (carried.look, carried.observed, carried.raised, carried.shown, carried.judged, carried.differences):
        _carry(fn, s)
    tables = r.tables()
    exact, ceiling = lc.data["expect"]["compiles"], lc.data["expect"]["compiles_at_most"]
    per_call = counts_graphs(variant.backend) and any(p.compiles is not None for p in points)
    count = counts_graphs(variant.backend) and (exact is not None or ceiling is not None or per_call)
    compile_lines = _compile_lines(lc, variant, count=count)
    warm = lc.data["expect"]["warm_rerun"] and variant.backend not in (*WITHOUT_DYNAMO, NONE)
    def counted(pass_name: str) -> list[str]:  # as the harness says it (core.loop.compile_count_mismatch)
        where = f"{pass_name} pass over {len(points)} call(s): graphs compiled"
        test, key = (f"!= {exact}", "compiles") if exact is not None else (f"> {ceiling}", "compiles_at_most")
        said = expected_compiles(lc.data)
        return [f"if len(graphs) {test}:",
                f"    print(f'MISMATCH: {where} is {{len(graphs)}}, but expect.{key} gives {said}')",
                "    differs += 1"] if count and (exact is not None or ceiling is not None) else []

    main = ["eager = run(f, compiled=False)", "differs = differences(eager, run(compiled_f, compiled=True))",
            *(["differs += len(miscounted)", "miscounted.clear()"] if per_call else []), *counted("cold")]
    if warm:
        main += ["torch._dynamo.reset()  # then again, caches warm", *(["graphs.clear()"] if count else []),
                 compile_lines[-1], "differs += differences(eager, run(compiled_f, compiled=True), 'the warm rerun, ')",
                 *(["differs += len(miscounted)"] if per_call else []), *counted("warm")]
    name = lc.case.function_name
    class_block = (lc.case.classes or "").strip("\n")
    device = variant.device
    lines = [
        "#!/usr/bin/env python3",
        QUOTES + docstring_safe(_title(lc, len(applied), len(points))) + QUOTES,
        *(f"import {m}" for m in sorted(s.stdlib | ({"os", "tempfile"} if warm else set()))), "",
        "import torch",
        *s.imports, *config_lines(lc.data['config']),
        *(["", f"if not torch.{device.split(':')[0]}.is_available():", f"    print('no {device} here')",
           f"    sys.exit({REPRO_CANNOT_TELL})"] if device != "cpu" else []),
        *(["os.environ['TORCHINDUCTOR_CACHE_DIR'] = tempfile.mkdtemp()  # caches of its own, cold"] if warm else []),
        "",
        *([class_block, ""] if class_block else []),
        *_program_lines(lc.case.program.strip("\n"), name, lc.case.compile.closure), "",
        *(["miscounted = []  # the calls whose own graph count differs from what the case says", ""] if per_call
          else []),
        "def run(fn, compiled):  # every call; what each shows, check by check",
        *((f"    {line}" if line else "") for line in out),
        "    return calls", "",
        *compile_lines, "", *(anew_lines(compile_lines, variant.backend) if any(p.fresh for p in points) else []),
        f"# {'-' * 20} how the harness reads and judges each check (torch-conformance's own functions)",
        *(f"{k} = {v}" for k, v in s.constants.items()), *([""] if s.constants else []),
        *s.helper_source(),
        *tables, "",
        *main,
        VERDICT_LINE,
        "print(f'MISMATCH: {differs} check(s) differ from eager' if differs else "
        "'MATCHES: compiled behaves like eager on every check')",
        f"sys.exit({REPRO_DIFFERS} if differs else {REPRO_MATCHES})",
    ]
    return "\n".join(lines) + "\n"
