"""The short reproducer: a plain PyTorch program that shows one difference between eager and compiled.

What a maintainer would accept in an upstream issue: torch as the only import, the program as the
case wrote it (its classes inlined), its inputs built by the very statements the harness ran
(Note [Inputs as code] in conformance/core/build.py), every call up to the one that differs with
what the caller does around it, the compiled call with the case's backend, options and config, and
the one check that differs, rendered from its declaration (conformance/core/checks.py) at the
mismatch's structured location (never parsed from its sentence). It prints both sides' values.
One blank line between definitions: a reproducer is read in an issue, where length counts.

`render_short` returns None only where plain torch cannot show the difference (a record without
a located mismatch, such as an error, or a diverging internals probe under --strict-internals);
the full reproducer then serves.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from conformance.core import build, call, checks, state
from conformance.core.build import CallPoint, call_points, input_code, leaf_var, load_classes, tensor_entries
from conformance.core.check import REPRO_CANNOT_TELL, REPRO_DIFFERS, REPRO_MATCHES
from conformance.core.checks import CHECKS
from conformance.core.entry import AOT_FUNCTION, NONE
from conformance.core.mismatch import WRITE_THROUGH
from conformance.reproducer import VERDICT_LINE, docstring_safe
from conformance.results import MismatchRecord, ResultRecord

if TYPE_CHECKING:
    from conformance.data.loader import LoadedCase
    from conformance.data.variants import Variant

RELATIONS = ("shares storage with", "is the input object", "view of (_base)")
BEFORE_CALL = ("_version moved", "_version delta", "storage swapped (set_)")
MODES = ("grad mode", "inference mode", "autocast")
# read by the harness right after the call, before any backward
BEFORE_BACKWARD = (*MODES, *RELATIONS, "structure", "number of outputs", "graphs compiled")
QUOTES = '"' * 3
GRAD_MODE_WORDS = ("grad_enabled", "no_grad", "enable_grad", "inference_mode")
AUTOGRAD_FIELDS = ("requires_grad", "is_leaf")
OUTPUT_METADATA = ("type", "dtype", "device", "shape", "stride", "storage_offset")


@dataclass
class _Script:
    """What the script needs, gathered while its parts are written."""

    helpers: list[Any] = field(default_factory=list)
    stdlib: set[str] = field(default_factory=lambda: {"sys"})  # modules the script imports before torch
    imports: list[str] = field(default_factory=list)
    names: dict[Any, str] = field(default_factory=dict)  # a helper carried under another name
    plain: bool = False  # no tensor can be a subclass: helpers carry no subclass branch

    def need(self, *functions: Any) -> None:
        for fn in functions:
            if fn not in self.helpers:
                self.helpers.append(fn)

    def helper_source(self) -> list[str]:
        return [part for fn in self.helpers for part in (_plain(fn, self.names.get(fn), plain=self.plain), "")]


class _Unannotated(ast.NodeTransformer):
    def __init__(self, *, plain: bool) -> None:
        self.plain = plain

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
    tree = _Unannotated(plain=plain).visit(ast.parse(textwrap.dedent(inspect.getsource(fn))))
    if name is not None:
        tree.body[0].name = name
    return ast.unparse(ast.fix_missing_locations(tree))


def _mismatch(record: ResultRecord) -> MismatchRecord | None:
    """The first mismatch plain torch can show (records before structured locations have none)."""
    for m in record.mismatches:
        if m.check in CHECKS and m.check != "internals probe" and (m.path or m.check == "graphs compiled"):
            return m
    return None


def _subject(m: MismatchRecord, exprs: dict[str, str], leaves: dict[str, str], s: _Script, *, single: bool) -> str:
    """The expression of the tensor the mismatch read, on one side, after its call."""
    if m.role == "output" and single and m.subject == "out[0]":
        expr = "out"
    elif m.role == "output":
        s.need(state.flatten_outputs)
        expr = f"flatten_outputs(out)[{m.subject[4:-1]}]"
    elif m.role == "grad":
        expr = leaves.get(m.subject, exprs.get(m.subject, m.subject)) + ("" if m.check == ".grad" else ".grad")
    else:
        expr = exprs.get(m.subject, m.subject)
    return expr + "".join(f".{name}" for name in m.inner)


def _observe(m: MismatchRecord, subject: str, exprs: dict[str, str], s: _Script, var: str) -> list[str]:
    """The lines, at the end of the failing call, that return what one side shows (`var` holds the
    subject: `t`, unless an input has that name)."""
    check = CHECKS[m.check]
    named = subject.isidentifier() and m.check not in (*RELATIONS, "exists")  # the input by its own name
    var = subject if named else var
    observe = check.observe
    jagged = m.check in ("shape", "stride") and bool(re.search(r"\bj\b", f"{m.actual} {m.expected}"))
    if m.check in ("shape", "stride") and not jagged:  # dims() is the identity without a jagged dim
        observe = observe.replace("dims(t.shape)", "tuple(t.shape)").replace("dims(t.stride())", "t.stride()")
    observe = re.sub(r"\bt\b", var, observe)
    special = {"exception": "raised", "in-place write through outputs": "written"}
    if m.check in special or m.check in MODES:
        return [f"return {special.get(m.check, observe)}"]
    if m.check in ("structure", "number of outputs"):
        s.need(state.flatten_outputs, state.output_structure)
        return ["outs = flatten_outputs(out)", f"return {observe.replace('structure(', 'output_structure(')}"]
    if m.check == "exists":
        return ["try:", f"    {var} = {subject}", "except (KeyError, IndexError, AttributeError):", f"    {var} = None",
                f"return {observe}"]
    if not named and m.check not in RELATIONS and _primary(subject) and len(re.findall(rf"\b{var}\b", observe)) == 1:
        observe, named = re.sub(rf"\b{var}\b", lambda _: subject, observe), True  # read once: no name for it
    lines = [] if named else [f"{var} = {subject}"]
    if m.check in ("shape", "stride"):
        if jagged:
            s.need(checks.dims)
            s.stdlib.add("re")
        if m.check == "stride":
            s.need(checks.significant_strides)
    if m.check in AUTOGRAD_FIELDS and _refused(m):  # a view whose base changed in place may refuse to answer
        s.need(state.refusal)
        s.stdlib.add("re")
        return [*lines, "try:", f"    return {observe}", "except RuntimeError as exc:", "    return refusal(exc)"]
    if m.check in RELATIONS:
        if m.check == "shares storage with":
            s.need(state.is_subclass, state.storage_key)
        lines.append("tensors = {" + ", ".join(f"{n!r}: {e}" for n, e in exprs.items()) + "}")
        if m.role == "output":
            s.need(state.flatten_outputs)
            lines.append("tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)"
                         f"[:{m.subject[4:-1]}])}})")
    return [*lines, f"return {observe}"]


def _primary(expr: str) -> bool:
    """Whether `expr` is a name, attribute, call or subscript: text that stays one operand wherever
    it is put."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript)


_NO_EXCEPTION = "    raised = 'no exception'"
_NON_LEAF = re.compile(r"(\w+) = non_leaf\((\w+_leaf)\)")


def _unnamed_leaves(calls: list[list[str]]) -> list[list[str]]:
    """The calls' lines with a leaf that is named only to make a non-leaf input built inside that
    input's line (`b = non_leaf(torch.randn(...).requires_grad_())`): the same objects, one line fewer."""
    out = []
    for k, lines in enumerate(calls):
        kept: list[str] = []
        for i, line in enumerate(lines):
            m = _NON_LEAF.fullmatch(line)
            later = [lines[i + 1:], *calls[k + 1:]]
            if m and kept and kept[-1].startswith(f"{m[2]} = ") and not _read_later(m[2], later):
                kept[-1] = f"{m[1]} = non_leaf({kept[-1].split(' = ', 1)[1]})"
                continue
            kept.append(line)
        out.append(kept)
    return out


def _read_later(name: str, blocks: list[list[str]]) -> bool:
    """Whether `name` is read in these lines before it is bound again."""
    for line in (x.strip() for block in blocks for x in block):
        if line.startswith(f"{name} = "):
            return False
        if re.search(rf"\b{name}\b", line):
            return True
    return False


def _returned_at_once(lines: list[str]) -> list[str]:
    """A try whose success is returned at once returns it after the try: one line fewer."""
    if len(lines) >= 4 and lines[-4] == _NO_EXCEPTION and lines[-1] == "return raised":
        return [*lines[:-4], *lines[-3:-1], "return 'no exception'"]
    return lines


def _try(lines: list[str], s: _Script) -> list[str]:
    """`lines`, run so that what they raise is what this side shows."""
    return ["try:", *(f"    {line}" for line in lines), _NO_EXCEPTION, "except Exception as exc:",
            "    return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')"]


@dataclass
class _Calls:
    """Writes the body of `run(fn, compiled)`: each call on one side, then what `m` reads."""

    lc: LoadedCase
    variant: Variant
    m: MismatchRecord | None
    s: _Script
    persisted: set[str] = field(default_factory=set)
    classes: dict[str, Any] = field(default_factory=dict)
    several: bool = False  # the case makes more than one call: each is labelled
    single: bool = False  # the program returns one tensor (eager, first call): `out` is that tensor
    nothing: bool = False  # no call returns a tensor (eager): a backward would do nothing

    def body(self, points: list[CallPoint], upto: int) -> list[str]:
        self.classes = classes = load_classes(self.lc.case.classes, f"<classes of {self.lc.id}>")
        self.several = upto > 0  # more than one call in the script: each is labelled
        kinds = [_eager_result(self.lc, self.variant, p, classes) for p in points[: upto + 1]]
        self.single = self.variant.mode == "training" and kinds[0] == "one"
        self.nothing = all(k == "no tensor" for k in kinds)  # no call returns a tensor: no backward to write
        # a caller's action before a call sees the last call's `out` (None before the first)
        out = ["out = None"] if any(re.search(r"\bout\b", p.before or "") for p in points[: upto + 1]) else []
        calls = _unnamed_leaves([self._one(i, point, classes, last=i == upto)
                                 for i, point in enumerate(points[: upto + 1])])
        calls[-1] = _returned_at_once(calls[-1])
        plain = calls if self.m is None else calls[:-1]  # the failing call keeps its own lines
        for first, run in _runs(plain):
            out += _loop(first, run) if len(run) > 1 else run[0]
        for lines in calls[len(plain):]:
            out += lines
        return out or ["pass"]

    def _one(self, i: int, point: CallPoint, classes: dict[str, Any], *, last: bool) -> list[str]:
        case, v, s = self.lc.data, self.variant, self.s
        m = self.m if last else None
        code = input_code(case, v.device, v.mode, point, persisted=self.persisted, classes=classes)
        s.need(*(build.HELPERS[name] for name in code.helpers))
        s.imports += [line for line in code.imports if line not in s.imports]
        what = point.label.split(" (", 1)[1][:-1] if " (" in point.label else ""
        lines = [*([f"# call {i + 1}" + (f": {what}" if what else "")] if self.several or what else []), *code.lines]
        self.persisted |= {n for n, spec in case["inputs"].items() if spec["persist"] or spec["optimizer"] is not None}
        if point.before:
            lines += ["# the caller, before the call", *point.before.strip("\n").splitlines()]
        lines += self._dynamic(point)
        exprs, subject = self._names(point, m)
        if m is not None and m.check in BEFORE_CALL:
            lines.append(f"v0, s0 = {subject}._version, {subject}.untyped_storage()")
        lines += _with_after(self._call(m), point, m, s)
        if m is not None and (m.phase == WRITE_THROUGH or m.check == "in-place write through outputs"):
            s.need(state.flatten_outputs, call.write_through_outputs)
            lines.append("written = write_through_outputs(flatten_outputs(out))  # in place, through each output")
        if m is not None:
            taken = set(case["inputs"]) | set(classes)
            lines += _observe(m, subject, exprs, s, next(v for v in ("t", "t_", "seen", "_t") if v not in taken))
        return lines

    def _dynamic(self, point: CallPoint) -> list[str]:
        specs = {n: point.overrides.get(n, spec) for n, spec in self.lc.data["inputs"].items()}
        dims = [(n, list(spec["tensor"]["dynamic_dims"])) for n, spec in specs.items()
                if spec["tensor"] is not None and spec["tensor"]["dynamic_dims"]]
        if not dims or self.variant.backend == AOT_FUNCTION:
            return []
        return ["if compiled:", *(f"    torch._dynamo.mark_dynamic({n}, {d})" for n, d in dims)]

    def _names(self, point: CallPoint, m: MismatchRecord | None) -> tuple[dict[str, str], str]:
        """How the inputs' tensors are reached by name, and the subject's expression."""
        if m is None:
            return {}, ""
        built = build.build_inputs(self.lc.data, "cpu", self.variant.mode, point, build.Env(dict(self.classes)))
        exprs = {n: e for n, e, _t in tensor_entries(built.named)}
        names = list(self.lc.data["inputs"])
        leaves = {n: (leaf_var(n[: -len(".leaf")], names) if n.endswith(".leaf") else exprs.get(n, n))
                  for n in built.grad_leaves}
        return exprs, (_subject(m, exprs, leaves, self.s, single=self.single) if m.subject else "")

    def _call(self, m: MismatchRecord | None) -> list[str]:
        """The call and, in training, its backward (left out where the check reads what comes before
        it); what the check needs of them."""
        case, s = self.lc.data, self.s
        passed = [n for n, spec in case["inputs"].items() if not spec["hidden"]]
        lines = [f"out = fn({', '.join(passed)})"]
        if m is not None and m.check in MODES:
            lines.append("modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), "
                         "tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')))")
        if case["inference_mode"]:
            lines = ["with torch.inference_mode():", *(f"    {x}" for x in lines)]
        if not case["grad_enabled"] or any(w in self.lc.case.program for w in GRAD_MODE_WORDS):
            # the call in the case's grad mode, restored after it, as the harness does
            lines = [f"with torch.set_grad_enabled({case['grad_enabled']}):", *(f"    {x}" for x in lines)]
        raises = m is not None and m.check == "exception"
        if (raises and m is not None and m.path == "call") or case["expect"]["raises"] is not None:
            lines = _try(lines, s)  # the case expects a side to raise, or the check is what it raised
        if self.variant.mode != "training" or (m is not None and _before_backward(m)):
            return lines
        seed = case["seed"] + call.TANGENT_SEED_OFFSET
        backward_raises = raises and m is not None and m.path == "backward"
        if self.nothing and not backward_raises:
            return lines  # backward_outputs of no tensor does nothing
        s.plain = _plain_tensors(self.lc)
        s.need(call.tangent)
        if self.single:
            # what backward_outputs does with one output: a backward where it requires grad (only a float can)
            step = [f"out.backward(tangent(out, torch.Generator().manual_seed({seed})))"]
            step = ["if out.requires_grad:", f"    {step[0]}"] if backward_raises else step
        else:
            s.need(state.flatten_outputs, call.backward_outputs)
            step = [f"backward_outputs(flatten_outputs(out), {seed})"]
        if backward_raises:
            return lines + _try(step, s)
        s.stdlib.add("contextlib")
        return [*lines, "with contextlib.suppress(Exception):  # what a backward raises is its own check",
                f"    {step[0]}"]


_SUBCLASS_DEF = re.compile(r"class\s+\w+\s*\([^)]*\bTensor\b")  # a class deriving from torch.Tensor
_ASSIGN = re.compile(r"(\w+) = (.+)")
_FLOAT = re.compile(r"float\('[-+a-z]+'\)")


def _literal(text: str) -> bool:
    if _FLOAT.fullmatch(text):
        return True
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _varying(a: list[str], b: list[str]) -> list[int] | None:
    """The lines at which two calls' code differs, where they differ only in the literal a name is
    given (a float sweep's value); None where they differ otherwise."""
    if len(a) != len(b):
        return None
    at = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        mx, my = _ASSIGN.fullmatch(x), _ASSIGN.fullmatch(y)
        if not (mx and my and mx[1] == my[1] and _literal(mx[2]) and _literal(my[2])):
            return None
        at.append(i)
    return at


def _unlabelled(lines: list[str]) -> list[str]:
    return lines[1:] if lines and lines[0].startswith("# call ") else lines


def _runs(calls: list[list[str]]) -> list[tuple[int, list[list[str]]]]:
    """Consecutive calls whose code differs from the first's only in literals given to names,
    grouped as (index of the first, the calls)."""
    groups: list[tuple[int, list[list[str]]]] = []
    for i, lines in enumerate(calls):
        if groups and _varying(_unlabelled(groups[-1][1][0]), _unlabelled(lines)) is not None:
            groups[-1][1].append(lines)
        else:
            groups.append((i, [lines]))
    return groups


def _loop(first: int, run: list[list[str]]) -> list[str]:
    """Calls that differ only in some names' values, as one loop over those values."""
    bodies = [_unlabelled(lines) for lines in run]
    at = sorted({i for body in bodies[1:] for i in _varying(bodies[0], body) or []})
    span = f"  # calls {first + 1} to {first + len(run)}"
    if not at:
        return [f"for _ in range({len(run)}):{span}", *(f"    {line}" for line in bodies[0])]
    names = [_ASSIGN.fullmatch(bodies[0][i])[1] for i in at]  # type: ignore[index]  # _varying matched each
    values = [[_ASSIGN.fullmatch(body[i])[2] for i in at] for body in bodies]  # type: ignore[index]  # as above
    items = ", ".join(v[0] if len(v) == 1 else f"({', '.join(v)})" for v in values)
    body = [f"    {line}" for i, line in enumerate(bodies[0]) if i not in at]
    return [f"for {', '.join(names)} in [{items}]:{span}", *body]


def _refused(m: MismatchRecord) -> bool:
    """Whether either side's autograd field was a refusal (state.refusal), not a plain answer."""
    return any(v.strip("'\"").startswith("raises ") for v in (m.expected, m.actual))


def _before_backward(m: MismatchRecord) -> bool:
    """Whether what the check reads is settled before any backward: read by the harness right after
    the call, what the call raised (or not), or a tensor's requires_grad / is_leaf answered plainly (a
    backward changes neither; a refusal may depend on what the backward wrote), or an output's metadata
    (made by the call; a backward writes values, not an output's geometry)."""
    return (m.check in BEFORE_BACKWARD or m.path == "call" or (m.check in AUTOGRAD_FIELDS and not _refused(m))
            or (m.role == "output" and m.check in OUTPUT_METADATA))


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
    from conformance.core.compile import make_function  # lazy: imports torch

    try:
        fn = make_function(lc.program_source, lc.case.function_name, lc.program_filename, classes)
        with torch.random.fork_rng(devices=[]):
            inputs = build.build_inputs(lc.data, "cpu", variant.mode, point, build.Env(dict(classes)))
            side = call.call(fn, inputs, lc.data)
    except Exception:  # whatever stops it, the general form serves
        return "unknown"
    if side.exc is not None:
        return "unknown"
    if isinstance(side.result, torch.Tensor):
        return "one"
    return "several" if any(isinstance(o, torch.Tensor) for o in state.flatten_outputs(side.result)) else "no tensor"


def _with_after(lines: list[str], point: CallPoint, m: MismatchRecord | None, s: _Script) -> list[str]:
    if not point.after:
        return lines
    action = point.after.strip("\n").splitlines()
    if m is not None and m.check == "exception" and m.path.endswith(".after"):
        return [*lines, *_try(action, s)]
    return [*lines, "# the caller, after the call", *action]


def _compile_lines(lc: LoadedCase, variant: Variant, *, count: bool) -> list[str]:
    options = lc.data["compile"]
    if variant.backend == AOT_FUNCTION:
        return ["from functorch.compile import aot_function, nop", "",
                f"compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations="
                f"{variant.kiim}, dynamic={bool(options['dynamic'])})"]
    if variant.backend == NONE:
        return ["compiled_f = f  # the control: no compiler"]
    backend = repr(variant.backend)
    lines: list[str] = []
    if count:
        lines += ["graphs = []", "",
                  "def backend(gm, example_inputs):  # counts the graphs it compiled, not those dynamo aborted",
                  f"    compiled = torch._dynamo.lookup_backend({backend})(gm, example_inputs)",
                  "    graphs.append(gm)", "    return compiled", ""]
        backend = "backend"
    defaults = {"dynamic": None, "fullgraph": False}  # torch.compile's own: dynamic=False is not the default
    extra = "".join(f", {k}={options[k]!r}" for k, default in defaults.items() if options[k] is not default)
    if variant.backend == "inductor":
        extra += f", mode={options['mode']!r}" if options["mode"] else ""
        extra += f", options={options['options']!r}" if options["options"] else ""
    return [*lines, f"compiled_f = torch.compile(f, backend={backend}{extra})"]


def _config_lines(lc: LoadedCase) -> list[str]:
    config = lc.data["config"]
    imports = dict.fromkeys(f"import {key.partition('.config.')[0]}.config" for key in config)
    return [*imports, *(f"{key} = {value!r}" for key, value in config.items())]


def _verdict_lines(lc: LoadedCase, m: MismatchRecord) -> list[str]:
    check = CHECKS[m.check]
    differs = f"MISMATCH: {_where(m)}: {m.check}"
    if m.check == "graphs compiled":
        return ["print('graphs compiled:', len(graphs))", VERDICT_LINE,
                f"same = len(graphs) == {m.expected}  # the count the case expects",
                f"print('MATCHES: as expected' if same else f'{differs} is {{len(graphs)}}, but the case expects "
                f"{m.expected}')", f"sys.exit({REPRO_MATCHES} if same else {REPRO_DIFFERS})"]
    lines = ["print('eager:   ', eager)", "print('compiled:', compiled)", VERDICT_LINE]
    if check.compare == "close":
        expect = lc.data["expect"]
        rtol, atol = expect["rtol"], expect["atol"]
        tol = "" if (rtol, atol) == (None, None) else f", rtol={rtol or 0.0}, atol={atol or 0.0}"
        return [*lines, "try:", "    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, "
                f"check_device=False, check_stride=False{tol})", "except AssertionError as exc:",
                f"    sys.exit(print({differs + ' differs from eager:'!r}, str(exc).splitlines()[0]) or "
                f"{REPRO_DIFFERS})", f"sys.exit(print('MATCHES: compiled behaves like eager here') or {REPRO_MATCHES})"]
    same = "(compiled > 0) == (eager > 0)" if check.compare == "moved" else "compiled == eager"
    return [*lines, f"same = {same}",
            f"print('MATCHES: compiled behaves like eager here' if same else {differs + ' differs from eager'!r})",
            f"sys.exit({REPRO_MATCHES} if same else {REPRO_DIFFERS})"]


def _failing_call(m: MismatchRecord, points: list[CallPoint]) -> int:
    if m.call is not None:
        return min(m.call, len(points)) - 1
    return len(points) - 1 if m.check == "graphs compiled" else 0


def _where(m: MismatchRecord) -> str:
    """The mismatch's place in a few words: the pass, the call's number (not its description)."""
    return (("the warm rerun, " if m.warm else "") + (f"call {m.call}: " if m.call is not None else "")
            + (f"{m.phase}: " if m.phase else "") + (m.path or m.where))


def _title(lc: LoadedCase, record: ResultRecord, m: MismatchRecord) -> str:
    return (f"{lc.case.summary}\nOn torch {record.fingerprint.torch_version} the compiled call differs from eager at "
            f"{_where(m)}: {m.check} (exit {REPRO_DIFFERS}; {REPRO_MATCHES} where they agree, {REPRO_CANNOT_TELL} "
            f"without the device).\nFrom {lc.display_path}.")


def render_short(lc: LoadedCase, variant: Variant, record: ResultRecord) -> str | None:
    """The short script for the record's first mismatch that plain torch can show, or None."""
    m = _mismatch(record)
    if m is None:
        return None
    points = call_points(lc.data)
    count = m.check == "graphs compiled"
    s = _Script()
    calls = _Calls(lc, variant, None if count else m, s)
    body = calls.body(points, len(points) - 1 if count else _failing_call(m, points))
    device = variant.device
    warm = m.warm and variant.backend not in (AOT_FUNCTION, NONE)
    compile_lines = _compile_lines(lc, variant, count=count)
    main = [] if count else ["eager = run(f, compiled=False)"]
    if warm:
        main += ["run(compiled_f, compiled=True)  # the cold pass", "torch._dynamo.reset()  # then again, caches warm",
                 compile_lines[-1]]
    main.append(("" if count else "compiled = ") + "run(compiled_f, compiled=True)")
    classes = (lc.case.classes or "").strip("\n")
    name = lc.case.function_name
    lines = [
        "#!/usr/bin/env python3",
        QUOTES + docstring_safe(_title(lc, record, m)) + QUOTES,
        *(f"import {name}" for name in sorted(s.stdlib | ({"os", "tempfile"} if warm else set()))), "",
        "import torch",
        *s.imports, *_config_lines(lc),
        *(["", f"if not torch.{device.split(':')[0]}.is_available():", f"    print('no {device} here')",
           f"    sys.exit({REPRO_CANNOT_TELL})"] if device != "cpu" else []),
        *(["os.environ['TORCHINDUCTOR_CACHE_DIR'] = tempfile.mkdtemp()  # caches of its own, cold"] if warm else []),
        "",
        *([classes, ""] if classes else []),
        *s.helper_source(),
        lc.case.program.strip("\n"), *([f"f = {name}"] if name != "f" else []), "",
        "def run(fn, compiled):",
        *((f"    {line}" if line else "") for line in body), "",
        *compile_lines,
        *main,
        *_verdict_lines(lc, m),
    ]
    return "\n".join(lines) + "\n"
