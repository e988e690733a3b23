"""The programs the explorer writes: a small model (inputs, statements, returns), the Hypothesis
strategy that draws it from the ingredients of the five contracts, and its rendering as a case
file (schema v2), so that a generated program runs through the same loader, runner and oracles
as a hand-written case and a finding is a case file as it stands.

Shapes are tracked while drawing, so that a binary statement only pairs tensors of one shape and
most programs are valid; programs eager rejects are kept (compiled must reject them too) and
counted apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

Shape = tuple[int, ...]

SHAPES: tuple[Shape, ...] = ((4,), (3, 4), (2, 3, 4))
LAYOUTS = ("contiguous", "transposed", "strided", "offset")
CONTEXTS = ("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(False)")
SWEEP = (0.1, 0.5, 1.5)


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

    def line(self) -> str:
        text = TEMPLATES[self.kind].format(t=self.target, o=self.other, out=self.out)
        return f"with {self.context}:\n        {text}" if self.context else text


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    statements: tuple[Statement, ...]
    returns: tuple[str, ...]
    sweep: bool = False  # a Python float `lr` swept over SWEEP

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(s.kind for s in self.statements)

    def source(self) -> str:
        params = [i.name for i in self.inputs if not i.hidden] + (["lr"] if self.sweep else [])
        body = [s.line() for s in self.statements]
        if len(self.returns) == 1:
            body.append(f"return {self.returns[0]}")
        elif self.returns:
            body.append(f"return {', '.join(self.returns)}")
        lines = [f"def f({', '.join(params)}):"] + [f"    {b}" for b in body or ["pass"]]
        return "\n".join(lines) + "\n"

    def behavior(self) -> str:
        """The contract a finding most likely speaks to (the case file must name one)."""
        if self.sweep:
            return "scalar_recompile"
        if any(k in MUTATING for k in self.kinds):
            return "mutation_epilogue"
        return "runtime_wrapper"

    def case(self, *, seed: int = 0, backends: tuple[str, ...] = ("aot_eager",),
             modes: tuple[str, ...] = ("inference", "training"), compiles: int | None = None) -> dict[str, Any]:
        """The case file (as data) that runs this program; ``compiles``: the graphs its sweep
        should compile (set where the explorer found a count the reference does not predict)."""
        inputs: dict[str, Any] = {}
        for i in self.inputs:
            if i.view is not None:
                inputs[i.name] = {"view": i.view}
                continue
            spec: dict[str, Any] = {"shape": list(i.shape)}
            if i.requires_grad:
                spec["requires_grad"] = True
                if not i.leaf:
                    spec["leaf"] = False
            if i.layout != "contiguous":
                spec["layout"] = i.layout
            entry: dict[str, Any] = {"tensor": spec}
            if i.hidden:
                entry["hidden"] = True
            inputs[i.name] = entry
        if self.sweep:
            inputs["lr"] = {"scalar": {"type": "float", "values": list(SWEEP)}}
        trains = any(i.requires_grad for i in self.inputs)
        expect = {"expect": {"compiles": compiles}} if compiles is not None else {}
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
            **expect,
        }


UPSTREAM = {
    "mutation_epilogue": "https://github.com/pytorch/pytorch/pull/179600",
    "runtime_wrapper": "https://github.com/pytorch/pytorch/pull/181271",
    "scalar_recompile": "https://github.com/pytorch/pytorch/pull/179395",
}

# statement templates: {t} target, {o} another tensor of the same shape, {out} a new variable
TEMPLATES: dict[str, str] = {
    # in-place data ops
    "mul_": "{t}.mul_(2)",
    "add_alpha": "{t}.add_({o}, alpha=0.5)",
    "copy_": "{t}.copy_({o})",
    "fill_": "{t}.fill_(1.5)",
    "zero_": "{t}.zero_()",
    "clamp_": "{t}.clamp_(min=-0.5, max=0.5)",
    "addcmul_": "{t}.addcmul_({o}, {o}, value=0.5)",
    "index_add_dup": "{t}.index_add_(0, torch.tensor([0, 0]), {o}[:2])",
    "detach_mul_": "{t}.detach().mul_(3)",
    # storage ops
    "set_": "{t}.set_({o}.detach().clone())",
    "data_assign": "{t}.data = {o} * 2",
    # floats in every position
    "mul_lr": "{t}.mul_(lr)",
    "mul_half_lr": "{t}.mul_(0.5 * lr)",
    "add_alpha_lr": "{t}.add_({o}, alpha=lr)",
    "div_pow_lr": "{t}.div_((1.0 + lr) ** 0.5)",
    # in-place metadata ops, through the ATen overloads (dynamo graph-breaks on the methods)
    "t_": "torch.ops.aten.t_.default({t})",
    "unsqueeze_": "torch.ops.aten.unsqueeze_.default({t}, 0)",
    "transpose_": "torch.ops.aten.transpose_.default({t}, 0, -1)",
    # views (kept, written through, returned)
    "view_flat": "{out} = {t}.view(-1)",
    "view_slice": "{out} = {t}[1:]",
    "view_t": "{out} = {t}.transpose(0, -1)",
    "view_diag": "{out} = {t}.diagonal()",
    "view_unsqueeze": "{out} = {t}.unsqueeze(0)",
    # intermediates
    "fresh": "{out} = {t} * 2 + {o}",
    "fresh_sin": "{out} = {t}.sin()",
}
MUTATING = frozenset(
    {"mul_", "add_alpha", "copy_", "fill_", "zero_", "clamp_", "addcmul_", "index_add_dup", "detach_mul_", "set_",
     "data_assign",
     "mul_lr", "mul_half_lr", "add_alpha_lr", "div_pow_lr", "t_", "unsqueeze_", "transpose_"}
)
FLOAT_KINDS = ("mul_lr", "mul_half_lr", "add_alpha_lr", "div_pow_lr")
BINARY = frozenset({"add_alpha", "copy_", "addcmul_", "index_add_dup", "fresh", "add_alpha_lr", "set_", "data_assign"})


def _new_shape(kind: str, shape: Shape) -> Shape | None:  # noqa: PLR0911  # one return per statement kind
    """The shape after a statement (of the target for a metadata op, of `out` for a view);
    None where the statement does not apply to this shape."""
    if kind == "t_":
        return shape[::-1] if len(shape) == 2 else None
    if kind in ("unsqueeze_", "view_unsqueeze"):
        return (1, *shape)
    if kind in ("transpose_", "view_t"):
        return (shape[-1], *shape[1:-1], shape[0]) if len(shape) >= 2 else None
    if kind == "view_flat":
        n = 1
        for d in shape:
            n *= d
        return (n,)
    if kind == "view_slice":
        return (shape[0] - 1, *shape[1:]) if shape[0] > 1 else None
    if kind == "view_diag":
        return (min(shape[0], shape[1]),) if len(shape) == 2 else None
    if kind == "index_add_dup":
        return shape if shape[0] >= 2 else None
    return shape


@st.composite
def programs(draw: st.DrawFn, *, float_sweeps: bool = True) -> Program:
    """1-4 inputs, 1-8 statements, a return of 0-3 values."""
    shape = draw(st.sampled_from(SHAPES), label="shape")
    inputs: list[Input] = []
    aliasing = draw(st.sampled_from(("none", "same", "overlap")), label="aliasing")
    count = draw(st.integers(1, 3), label="inputs")
    grad = draw(st.booleans(), label="requires_grad")
    for k in range(count):
        name = "abcd"[k]
        requires = grad and draw(st.booleans(), label=f"{name}.requires_grad")
        leaf = not requires or draw(st.booleans(), label=f"{name}.leaf")
        layout = draw(st.sampled_from(LAYOUTS if len(shape) >= 2 else ("contiguous", "strided", "offset")),
                      label=f"{name}.layout")
        inputs.append(Input(name, shape, requires, leaf, layout))
    if aliasing == "same":
        inputs.append(Input("d", shape, False, True, "contiguous", view="a"))
    elif aliasing == "overlap" and len(shape) == 1:
        # two overlapping views of one hidden base
        n = shape[0]
        inputs = [Input("base", (n + n // 2,), grad, True, "contiguous", hidden=True),
                  Input("a", shape, False, True, "contiguous", view=f"base[:{n}]"),
                  Input("b", shape, False, True, "contiguous", view=f"base[{n // 2}:]"),
                  *(replace(i, name="cd"[k]) for k, i in enumerate(inputs[1:]))]
    sweep = float_sweeps and draw(st.booleans(), label="sweep")
    shapes: dict[str, Shape] = {i.name: i.shape for i in inputs if not i.hidden}
    kinds = [k for k in TEMPLATES if sweep or k not in FLOAT_KINDS]
    statements: list[Statement] = []
    for j in range(draw(st.integers(1, 8), label="statements")):
        kind = draw(st.sampled_from(kinds), label="kind")
        target = draw(st.sampled_from(sorted(shapes)), label="target")
        new = _new_shape(kind, shapes[target])
        if new is None:
            continue
        other = None
        if kind in BINARY:
            peers = sorted(n for n, s in shapes.items() if s == shapes[target])
            other = draw(st.sampled_from(peers), label="other")
        out = f"v{j}" if "{out}" in TEMPLATES[kind] else None
        context = draw(st.none() | st.sampled_from(CONTEXTS), label="context")
        statements.append(Statement(kind, target, other, out, context))
        if out is not None:
            shapes[out] = new
        elif kind in ("t_", "unsqueeze_", "transpose_"):
            shapes[target] = new
    returns = tuple(draw(st.lists(st.sampled_from(sorted(shapes)), max_size=3, unique=True), label="returns"))
    return Program(tuple(inputs), tuple(statements), returns, sweep)
