"""The programs the explorer writes: a small model (inputs, statements, returns), the Hypothesis
strategy that draws it from the ingredients of the five contracts, and its rendering as a case
file (schema v2), so that a generated program runs through the same loader, runner and oracles
as a hand-written case and a finding is a case file as it stands.

Shapes are tracked while drawing, so that a binary statement only pairs tensors of one shape and
most programs are valid; programs eager rejects are kept (compiled must reject them too) and
counted apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

from conformance.explore.registry import FLOATING, Form, FormTable, table
from conformance.explore.statements import (
    ACTIONS,
    BINARY,
    FLOAT_KINDS,
    FUNCTION_KINDS,
    FUNCTIONS,
    METADATA,
    MODULE_KINDS,
    MUTATING,
    NOT_ON_SUBCLASSES,
    OP_KINDS,
    OPTIMIZER_KINDS,
    TEMPLATES,
)

Shape = tuple[int, ...]

# the common shapes, then those where half of the metadata space lives: size-1 dims, 0-d, empty
SHAPES: tuple[Shape, ...] = ((4,), (3, 4), (2, 3, 4), (4,), (3, 4), (1,), (3, 1), (1, 4), (), (0,), (0, 3))
LAYOUTS = ("contiguous", "transposed", "strided", "offset")
AMBIENT = ("none",) * 7 + ("no_grad",) * 2 + ("inference_mode",)  # around the whole call: mostly none
# the public contexts of torch and torch.autograd that change grad or inference state, as a block
# inside the program (torch.autograd's are the same objects as torch's). A compile that fails under
# inference_mode() can leave dispatch keys set in the process (2.13.0, 2.15.0): the runner puts them
# back after every item and compares them (`dispatch keys`), so one such program cannot fail the rest.
CONTEXTS = ("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(False)", "torch.set_grad_enabled(True)",
            "torch.inference_mode()", "torch.inference_mode(False)")
# float sweeps: fresh values, values that come back (a stale specialisation shows there), signed zero
SWEEPS: tuple[tuple[float, ...], ...] = ((0.1, 0.5, 1.5), (0.1, 0.5, 0.1), (1.0, 0.5, 1.0), (0.0, -0.0, 0.5),
                                         (2.0, 3.0, 2.0, 0.5))
SWEEP = SWEEPS[0]
# later calls, each with other inputs than the first: the same inputs again, the same tensor passed
# twice, overlapping views of one base, another layout, requires_grad flipped, bigger sizes
CALL_KINDS = ("again", "alias_same", "alias_overlap", "layout", "requires_grad", "bigger")


@dataclass(frozen=True)
class Call:
    """A later call: `kind` (CALL_KINDS) says how its inputs differ from the first call's; `action`
    (ACTIONS) what the caller does before or after it."""

    kind: str
    action: str | None = None


@dataclass(frozen=True)
class Input:
    name: str
    shape: Shape
    requires_grad: bool
    leaf: bool
    layout: str
    # a view input: an expression over earlier inputs (the same tensor twice, overlapping views)
    view: str | None = None
    hidden: bool = False
    subclass: str = ""  # a wrapper subclass of two such tensors: one of SUBCLASSES
    module: bool = False  # an nn.Linear over the last dim (its parameters requires_grad)
    optimizer: bool = False  # an SGD with momentum over the module's parameters (the input named `opt`)
    dtype: str = "float32"

    @property
    def two(self) -> bool:
        """Whether the input is a wrapper subclass (a TwoTensor, nested or subclassed)."""
        return bool(self.subclass)


@dataclass(frozen=True)
class Statement:
    """One line of the program. `kind` names its template (TEMPLATES); `target` and `other`
    are variable names; `out` the variable it defines, if any; `context` a grad-mode context
    it runs in."""

    kind: str
    target: str
    other: str | None = None
    out: str | None = None
    context: str | None = None
    op: str | None = None  # a form from torch's registry (kind `op:<family>`): the ATen op
    form: str | None = None  # ... and its call, in place of a template

    def line(self) -> str:
        text = (self.form or TEMPLATES[self.kind]).format(t=self.target, o=self.other, out=self.out, m=self.other)
        return f"with {self.context}:\n        {text}" if self.context else text


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    statements: tuple[Statement, ...]
    returns: tuple[str, ...]
    sweep: tuple[float, ...] | None = None  # a Python float `lr` swept over these values
    calls: tuple[Call, ...] = ()  # calls after the first (and after the sweep's)
    grad_enabled: bool = True  # grad mode around every call (False: an ambient no_grad)
    inference_mode: bool = False  # an ambient torch.inference_mode() around every call

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(s.kind for s in self.statements)

    def source(self) -> str:
        params = [i.name for i in self.inputs if not i.hidden] + (["lr"] if self.sweep is not None else [])
        body = [s.line() for s in self.statements]
        if len(self.returns) == 1:
            body.append(f"return {self.returns[0]}")
        elif self.returns:
            body.append(f"return {', '.join(self.returns)}")
        lines = [f"def f({', '.join(params)}):"] + [f"    {b}" for b in body or ["pass"]]
        return "\n".join(lines) + "\n"

    def behavior(self) -> str:
        """The contract a finding most likely speaks to (the case file must name one)."""
        if self.sweep is not None:
            return "scalar_recompile"
        if any(i.two for i in self.inputs):
            return "subclass_wrapper"
        if any(k in MUTATING for k in self.kinds):
            return "mutation_epilogue"
        return "runtime_wrapper"

    def reductions(self) -> Iterator[Program]:
        """Each program one removal smaller: the sweep (with the statements that read it), a later
        call, the ambient grad mode, a statement, a statement's context, a returned value, an input
        nothing names, an input's layout, requires_grad or subclass. Hypothesis's shrinking leaves
        some of these (an unused sweep shifts the statements' draws); the explorer keeps a removal
        where the program still shows the same cause."""
        if self.sweep is not None:
            kept = tuple(s for s in self.statements if s.kind not in FLOAT_KINDS)
            yield replace(self, sweep=None, statements=kept)
        for k, call in enumerate(self.calls):
            yield replace(self, calls=self.calls[:k] + self.calls[k + 1:])
            if call.action is not None:
                yield replace(self, calls=(*self.calls[:k], replace(call, action=None), *self.calls[k + 1:]))
        if not self.grad_enabled:
            yield replace(self, grad_enabled=True)
        if self.inference_mode:
            yield replace(self, inference_mode=False)
        for k, st_ in enumerate(self.statements):
            yield replace(self, statements=self.statements[:k] + self.statements[k + 1:])
            if st_.context is not None:
                yield replace(self, statements=(*self.statements[:k], replace(st_, context=None),
                                                *self.statements[k + 1:]))
        for k in range(len(self.returns)):
            yield replace(self, returns=self.returns[:k] + self.returns[k + 1:])
        named = " ".join([self.source().split(":", 1)[1], *(i.view or "" for i in self.inputs),
                          *(repr(self._call_spec(c)) for c in self.calls),
                          *("m" for i in self.inputs if i.optimizer)])  # an optimizer holds the module's parameters
        for k, i in enumerate(self.inputs):
            others = self.inputs[:k] + self.inputs[k + 1:]
            if not re.search(rf"\b{re.escape(i.name)}\b", named):
                yield replace(self, inputs=others)
            for change in ({"layout": "contiguous"}, {"requires_grad": False, "leaf": True}, {"subclass": ""},
                           {"subclass": "TwoTensor"}):
                if any(getattr(i, f) != v for f, v in change.items()) and i.view is None and not i.module \
                        and not i.optimizer and (i.two or "subclass" not in change or not change["subclass"]):
                    yield replace(self, inputs=(*self.inputs[:k], replace(i, **change), *self.inputs[k + 1:]))

    def ingredients(self) -> set[str]:
        """What the program holds, in the words of `explore --coverage`."""
        out = {f"statement:{k}" for k in self.kinds} | {f"call:{c.kind}" for c in self.calls}
        out |= {f"action:{c.action}" for c in self.calls if c.action}
        out |= {f"dtype:{i.dtype}" for i in self.inputs if not i.module and not i.optimizer}
        out |= {f"context:{s.context}" for s in self.statements if s.context}
        shapes = {i.shape for i in self.inputs if i.view is None}
        out |= {"shape:size-1" for sh in shapes if 1 in sh} | {"shape:0-d" for sh in shapes if sh == ()}
        out |= {"shape:empty" for sh in shapes if 0 in sh}
        out |= {f"input:{kind}" for i in self.inputs
                for kind, on in (*((SUBCLASSES[c], i.subclass == c) for c in SUBCLASSES), ("module", i.module),
                                 ("optimizer", i.optimizer), ("view", i.view is not None)) if on}
        if self.sweep is not None:
            out.add("sweep")
            if len(set(self.sweep)) < len(self.sweep):
                out.add("sweep:comes back to a value")
        if not self.grad_enabled:
            out.add("ambient:no_grad")
        if self.inference_mode:
            out.add("ambient:inference_mode")
        return out

    def _tensor_spec(self, i: Input, **changes: Any) -> dict[str, Any]:
        i = replace(i, **changes)
        if i.optimizer:
            return {"optimizer": {"class": "torch.optim.SGD", "params": "m", "kwargs": {"lr": 0.1, "momentum": 0.9}}}
        if i.module:
            k = i.shape[-1] if i.shape else 1
            return {"module": {"class": "torch.nn.Linear", "args": [k, k]}}
        spec: dict[str, Any] = {"shape": list(i.shape)}
        if i.dtype != "float32":
            spec["dtype"] = i.dtype
        if i.requires_grad and not i.two:
            spec["requires_grad"] = True
            if not i.leaf:
                spec["leaf"] = False
        if i.layout != "contiguous":
            spec["layout"] = i.layout
        inner = [{"tensor": spec}, {"tensor": {**spec, "shape": list(i.shape)}}]
        if i.subclass == "nested TwoTensor":  # a TwoTensor whose halves are TwoTensors
            inner = [{"two_tensor": {"a": {"tensor": dict(spec)}, "b": {"tensor": dict(spec)}}} for _ in "ab"]
        if i.subclass == USER_CLASS:
            return {"subclass": {"class": USER_CLASS, "args": inner, "requires_grad": i.requires_grad}}
        if i.two:
            return {"two_tensor": {"a": inner[0], "b": inner[1], "requires_grad": i.requires_grad}}
        return {"tensor": spec}

    def _action_spec(self, call: Call) -> dict[str, str]:
        """The caller's statements around a later call (`before` or `after`)."""
        if call.action is None:
            return {}
        where, text = ACTIONS[call.action]
        plain = [i for i in self.inputs if i.view is None and not i.hidden and not i.module and not i.optimizer]
        if call.action == "zero_grad":  # a leaf whose gradient the caller clears, else the module's weight
            leaves = [i.name for i in plain if i.requires_grad and i.leaf]
            return {where: text.format(x=leaves[0] if leaves else "m.weight")}
        return {where: text.format(x=plain[0].name if plain else "out")}

    def _call_spec(self, call: Call) -> dict[str, Any]:
        """The inputs a later call replaces (by name)."""
        plain = [i for i in self.inputs if i.view is None and not i.hidden and not i.module and not i.optimizer]
        # aliasing among plain tensors only: a TwoTensor passed where a tensor was meets storage ops that
        # crash eager itself (NOT_ON_SUBCLASSES)
        plain = [i for i in plain if not i.two] if call.kind in ("alias_same", "alias_overlap") else plain
        if call.kind == "alias_same" and len(plain) >= 2:
            return {plain[1].name: {"view": plain[0].name}}
        base = next((i for i in self.inputs if i.name == "base" and i.hidden), None)
        if call.kind == "alias_overlap" and base is not None and len(plain) >= 2:
            n = math.prod(plain[0].shape)  # base holds n + n // 2: [0, n) and [n // 2, n // 2 + n) overlap
            shaped = "" if len(plain[0].shape) == 1 else f".view{plain[0].shape}"
            return {plain[0].name: {"view": f"base[:{n}]{shaped}"},
                    plain[1].name: {"view": f"base[{n // 2}:{n // 2 + n}]{shaped}"}}
        if call.kind == "layout" and plain and len(plain[0].shape) >= 2 and 0 not in plain[0].shape:
            layout = "transposed" if plain[0].layout != "transposed" else "offset"
            return {plain[0].name: self._tensor_spec(plain[0], layout=layout)}
        if call.kind == "requires_grad" and plain and not plain[0].two:
            flipped = not plain[0].requires_grad
            return {plain[0].name: self._tensor_spec(plain[0], requires_grad=flipped, leaf=True)}
        if call.kind == "bigger" and plain and plain[0].shape and all(i.view is None for i in self.inputs) \
                and not any(i.module for i in self.inputs):
            return {i.name: self._tensor_spec(i, shape=(i.shape[0] + 2, *i.shape[1:])) for i in plain}
        return {}

    def case(self, *, seed: int = 0, backends: tuple[str, ...] = ("aot_eager",),
             modes: tuple[str, ...] = ("inference", "training"), compiles: int | None = None) -> dict[str, Any]:
        """The case file (as data) that runs this program; ``compiles``: the graphs its sweep
        should compile (set where the explorer found a count the reference does not predict)."""
        inputs: dict[str, Any] = {}
        for i in self.inputs:
            if i.view is not None:
                inputs[i.name] = {"view": i.view}
                continue
            entry = self._tensor_spec(i)
            if i.hidden:
                entry["hidden"] = True
            if i.module and any(o.optimizer for o in self.inputs):
                entry["persist"] = True  # the optimizer steps the very module the program gets
            inputs[i.name] = entry
        if self.sweep is not None:
            inputs["lr"] = {"scalar": {"type": "float", "values": list(self.sweep)}}
        trains = any(i.requires_grad or i.module for i in self.inputs)
        expect = {"expect": {"compiles": compiles}} if compiles is not None else {}
        extra: dict[str, Any] = {}
        if self.calls:
            extra["calls"] = [{**self._call_spec(c), **self._action_spec(c)} for c in self.calls]
        if not self.grad_enabled:
            extra["grad_enabled"] = False
        if self.inference_mode:
            extra["inference_mode"] = True
        classes = [*([USER_CLASSES] if any(i.subclass == USER_CLASS for i in self.inputs) else []),
                   *([FUNCTIONS] if any(k in FUNCTION_KINDS for k in self.kinds) else [])]
        if classes:
            extra["classes"] = "\n\n".join(classes)
        return {
            "version": 2,
            "behavior": self.behavior(),
            "summary": "A program the explorer generated: compiled must do what eager does.",
            "upstream": [UPSTREAM[self.behavior()]],
            "seed": seed,
            "inputs": inputs,
            "program": self.source(),
            "backends": list(backends),
            "modes": [m for m in modes if m == "inference" or trains] or ["inference"],
            **extra,
            **expect,
        }


# the wrapper subclasses an input may be, and the ingredient each is counted as
SUBCLASSES = {"TwoTensor": "two_tensor", "nested TwoTensor": "nested_two_tensor", "MyTwo": "user_subclass"}
USER_CLASS = "MyTwo"
# a user's subclass, as a case's classes block defines it: a TwoTensor that rebuilds as itself
USER_CLASSES = """from torch.testing._internal.two_tensor import TwoTensor


class MyTwo(TwoTensor):
    @staticmethod
    def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
        return MyTwo(inner["a"], inner["b"], outer_size, outer_stride)
"""

UPSTREAM = {
    "subclass_wrapper": "https://github.com/pytorch/pytorch/pull/176741",
    "mutation_epilogue": "https://github.com/pytorch/pytorch/pull/179600",
    "runtime_wrapper": "https://github.com/pytorch/pytorch/pull/181271",
    "scalar_recompile": "https://github.com/pytorch/pytorch/pull/179395",
}


def _new_shape(kind: str, shape: Shape) -> Shape | None:  # noqa: PLR0911  # one return per statement kind
    """The shape after a statement (of the target for a metadata op, of `out` for a view);
    None where the statement does not apply to this shape."""
    n = 1
    for d in shape:
        n *= d
    if kind == "t_":
        return shape[::-1] if len(shape) <= 2 else None
    if kind in ("unsqueeze_", "view_unsqueeze"):
        return (1, *shape)
    if kind in ("transpose_", "view_t", "swapdims_"):
        return (shape[-1], *shape[1:-1], shape[0]) if len(shape) >= 2 else None
    if kind == "squeeze_":
        return tuple(d for d in shape if d != 1)
    if kind in ("view_flat", "as_strided_", "resize_"):
        return (n,)
    if kind == "view_slice":
        return (shape[0] - 1, *shape[1:]) if shape and shape[0] > 1 else None
    if kind == "view_diag":
        return (min(shape[0], shape[1]),) if len(shape) == 2 else None
    if kind == "index_add_dup":
        return shape if shape and shape[0] >= 2 else None
    return shape


def _inputs(draw: st.DrawFn, shape: Shape, odd: bool, dtype: str = "float32") -> tuple[list[Input], bool, bool]:
    """1-3 inputs (tensors or TwoTensors, each with its layout and grad), aliased or not, and maybe a
    module and an optimizer over it: the inputs, and whether there is a module and an optimizer."""
    inputs: list[Input] = []
    aliasing = draw(st.sampled_from(("none", "none", "same", "overlap")), label="aliasing")
    count = draw(st.integers(1, 3), label="inputs")
    grad = dtype in FLOATING and draw(st.booleans(), label="requires_grad")
    for k in range(count):
        name = "abcd"[k]
        requires = grad and draw(st.booleans(), label=f"{name}.requires_grad")
        leaf = not requires or draw(st.booleans(), label=f"{name}.leaf")
        layouts = LAYOUTS if len(shape) >= 2 else ("contiguous", "strided", "offset")
        layout = "contiguous" if odd else draw(st.sampled_from(layouts), label=f"{name}.layout")
        two = not odd and draw(st.integers(0, 9), label=f"{name}.two_tensor") == 0
        sub = draw(st.sampled_from(("TwoTensor", "TwoTensor", *SUBCLASSES)), label=f"{name}.subclass") if two else ""
        inputs.append(Input(name, shape, requires, leaf, "contiguous" if two else layout, subclass=sub, dtype=dtype))
    if aliasing == "same":
        inputs.append(Input("d", shape, False, True, "contiguous", view="a", dtype=dtype))
    elif aliasing == "overlap" and len(shape) == 1 and shape[0] >= 2:
        # two overlapping views of one hidden base
        n = shape[0]
        inputs = [Input("base", (n + n // 2,), grad, True, "contiguous", hidden=True, dtype=dtype),
                  Input("a", shape, False, True, "contiguous", view=f"base[:{n}]", dtype=dtype),
                  Input("b", shape, False, True, "contiguous", view=f"base[{n // 2}:]", dtype=dtype),
                  *(replace(i, name="cd"[k]) for k, i in enumerate(inputs[1:]))]
    module = bool(shape) and not odd and dtype == "float32" and draw(st.integers(0, 4), label="module") == 0
    optimizer = module and draw(st.booleans(), label="optimizer")
    if module:
        inputs.append(Input("m", shape, True, True, "contiguous", module=True))
    if optimizer:
        inputs.append(Input("opt", shape, False, True, "contiguous", optimizer=True))
    return inputs, module, optimizer


def _op_form(draw: st.DrawFn, kind: str, target: str, *, shapes: dict[str, Shape], written: set[str],
             table: FormTable | None, dtype: str) -> tuple[Form, str | None] | None:
    """A form of the kind's family that torch's registry offers for the target (a functional one
    only where it reads a tensor written before), and its peer where it takes one."""
    if table is None or (kind == "op:functional" and target not in written):
        return None
    # half the time a form torch's optimizers and modules call: weighted toward what real code runs
    real = table.of(OP_KINDS[kind], shapes[target], dtype, real=True)
    prefer_real = bool(real) and draw(st.booleans(), label="real code")
    forms = real if prefer_real else table.of(OP_KINDS[kind], shapes[target], dtype)
    if not forms:
        return None
    form = draw(st.sampled_from(forms), label="form")
    if not form.binary:
        return form, None
    peers = sorted(n for n, sh in shapes.items() if sh == shapes[target])
    return (form, draw(st.sampled_from(peers), label="other")) if peers else None


def _statements(draw: st.DrawFn, inputs: list[Input], kinds: list[str], sweep: object,
                shapes: dict[str, Shape], *, table: FormTable | None = None, dtype: str = "float32"
                ) -> list[Statement]:
    """1-8 statements over the inputs and what earlier ones computed (`shapes` grows with them)."""
    statements: list[Statement] = []
    written: set[str] = set()
    twos = {i.name for i in inputs if i.two}  # TwoTensors, and views of them, and what is computed from them
    twos |= {i.name for i in inputs if i.view is not None and any(re.search(rf"\b{t}\b", i.view) for t in twos)}
    for j in range(draw(st.integers(1, 8), label="statements")):
        # a sweep's first statement uses the float, a module's the module: one nothing reads tells nothing
        first = FLOAT_KINDS if sweep is not None else tuple(k for k in MODULE_KINDS if k in kinds)
        kind = draw(st.sampled_from(first if j == 0 and first else kinds), label="kind")
        target = draw(st.sampled_from(sorted(shapes)), label="target")
        picked = _op_form(draw, kind, target, shapes=shapes, written=written, table=table,
                          dtype=dtype) if kind in OP_KINDS else None
        if kind in OP_KINDS and picked is None:
            continue
        form, other = picked or (None, None)
        new = form.result if form is not None else _new_shape(kind, shapes[target])
        if new is None or (kind in NOT_ON_SUBCLASSES and target in twos):
            continue
        if form is None and kind in MODULE_KINDS:
            other = "m"
        elif form is None and kind in BINARY:
            peers = sorted(n for n, s in shapes.items() if s == shapes[target]
                           and not (kind in NOT_ON_SUBCLASSES and n in twos))
            if not peers:
                continue
            other = draw(st.sampled_from(peers), label="other")
        out = f"v{j}" if "{out}" in (form.call if form is not None else TEMPLATES[kind]) else None
        if out is not None and (target in twos or other in twos):
            twos.add(out)
        context = None if kind in ("module_param_mul_", "opt_step", "hook") else draw(
            st.none() | st.sampled_from(CONTEXTS), label="context")
        statements.append(Statement(kind, target, other, out, context, *((form.op, form.call) if form else ())))
        if kind in MUTATING:
            written.add(target)
        if out is not None:
            shapes[out] = new
        elif kind in METADATA:
            shapes[target] = new
    return statements


def _calls(draw: st.DrawFn, inputs: list[Input], shape: Shape, odd: bool, sweep: object) -> tuple[Call, ...]:
    """0-3 later calls with other inputs (a hidden base is added to `inputs` where one needs it)."""
    plain = [i for i in inputs if i.view is None and not i.hidden and not i.module and not i.optimizer and not i.two]
    overlap = len(plain) >= 2 and math.prod(shape) >= 2 and not any(i.name == "base" for i in inputs)
    floating = bool(plain) and plain[0].dtype in FLOATING  # requires_grad needs a floating dtype
    possible = ["again", *(["requires_grad"] if floating else []),
                *(["layout"] if plain and len(shape) >= 2 and not odd else []),
                *(["bigger"] if shape and not any(i.view is not None or i.module for i in inputs) else []),
                *(["alias_same"] if len(plain) >= 2 else []), *(["alias_overlap"] * 3 if overlap else [])]
    # a sweep already calls again with other values (and is held to the reference's count, which later
    # calls would void): later calls with other inputs go to the programs without one
    stepped = any(i.optimizer for i in inputs)  # an optimizer's step between calls is what it is there for
    later = draw(st.integers(1 if stepped else 0, 3), label="later calls") if sweep is None else 0
    # an optimizer is drawn seldom, and a step between calls is what it is there for
    actions = [a for a in ACTIONS for _ in range(6 if a == "zero_grad" else 1) if a != "opt_step" or stepped]
    actions = [a for a in actions if a != "zero_grad" or any(i.requires_grad and i.leaf for i in plain)
               or any(i.module for i in inputs)]
    calls = tuple(Call(draw(st.sampled_from(possible), label="call"),
                       "opt_step" if stepped and k == 0 else draw(st.none() | st.sampled_from(actions), label="action"))
                  for k in range(later))
    if any(c.kind == "alias_overlap" for c in calls):
        # the base a later call takes two overlapping views of (hidden: the first call does not pass it)
        n = math.prod(shape)
        # of the program's dtype: views of a float base passed where uint8 tensors were let `set_` read past
        # a storage's end (the control found two eager runs differing)
        inputs.insert(0, Input("base", (n + n // 2,), False, True, "contiguous", hidden=True,  # built first
                               dtype=plain[0].dtype))
    return calls


def registry_table() -> FormTable:
    """The forms torch's registry offers for the shapes the grammar draws (imports torch; built once)."""
    return table(tuple(dict.fromkeys(SHAPES)))


# how often a statement kind is drawn beside one hand-written kind: torch's registry holds most forms
OP_WEIGHTS = {"op:inplace": 4, "op:view": 2, "op:functional": 2, "op:metadata": 1}


@st.composite
def programs(draw: st.DrawFn, *, float_sweeps: bool = True, table: FormTable | None = None) -> Program:
    """1-6 inputs (up to three tensors or TwoTensors, a view of one, a module and an optimizer over
    it) of one dtype, 1-8 statements (with `table`, also forms from torch's registry), a return of 0-3
    values, 0-3 later calls with other inputs, an ambient no_grad or inference mode."""
    shape = draw(st.sampled_from(SHAPES), label="shape")
    odd = () in (shape,) or 0 in shape  # a 0-d or empty tensor: contiguous, no subclass
    others = [d for d in table.dtypes if d != "float32"] if table is not None else []
    dtype = draw(st.sampled_from(others), label="dtype") if others and draw(
        st.integers(0, 2), label="other dtype") == 0 else "float32"
    inputs, module, optimizer = _inputs(draw, shape, odd, dtype)
    sweep = draw(st.sampled_from(SWEEPS), label="sweep values") if float_sweeps and draw(
        st.booleans(), label="sweep") else None
    shapes: dict[str, Shape] = {i.name: i.shape for i in inputs if not i.hidden and not i.module and not i.optimizer}
    kinds = [k for k in TEMPLATES if (sweep is not None or k not in FLOAT_KINDS) and (module or k not in MODULE_KINDS)
             and (optimizer or k not in OPTIMIZER_KINDS)]
    if table is not None:
        kinds += [k for k, weight in OP_WEIGHTS.items() for _ in range(weight)]
    statements = _statements(draw, inputs, kinds, sweep, shapes, table=table, dtype=dtype)
    returns = tuple(draw(st.lists(st.sampled_from(sorted(shapes)), max_size=3, unique=True), label="returns"))
    calls = _calls(draw, inputs, shape, odd, sweep)
    ambient = draw(st.sampled_from(AMBIENT), label="grad mode")
    return Program(tuple(inputs), tuple(statements), returns, sweep, calls, ambient != "no_grad",
                   ambient == "inference_mode")
