"""The structural forms of the runtime wrapper's generated functions (`_runtime_wrapper` and
`_alias_fn`): what Note [Structural form] reduces any build's source, or the reference's, to."""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_impl.runtime_wrapper import ALIAS_PARAMS, PARAMS
from reference_impl.structural import trace_function
from reference_impl.terms import Call, Const, Guard, Item, MapLit, Name, Op, Seq, SliceT, Term, Trace

__all__ = ["AliasFnForm", "RuntimeWrapperForm", "alias_structural_form", "form_from_trace", "structural_form"]


@dataclass(frozen=True)
class RuntimeWrapperForm:
    """The compile-time decisions a ``_runtime_wrapper`` bakes in (see module docstring).

    Instrumentation a build may add around the call (view-replay toggles, profiler
    records) is not part of the contract and is not represented.
    """

    captured_inputs: tuple[tuple[int, int], ...]
    version_bumps: tuple[int, ...]
    mode: str
    grad_restored: bool
    detach: tuple[int, ...]
    disable_autocast: bool
    expected_outputs: int | None
    mutation_split: int | None
    replays_aliases: bool
    dynamic_dims: tuple[int, ...]
    grad_enabled_after: bool | None
    extra: tuple[str, ...] = field(default=())

    def describe(self) -> list[str]:
        captured = ", ".join(f"{k}: args[{v}]" for k, v in self.captured_inputs)
        return [
            f"captured inputs: {{{captured}}}",
            f"version bumps: {list(self.version_bumps)}",
            f"call mode: {self.mode}" + (", grad mode restored" if self.grad_restored else ""),
            f"detached inputs: {list(self.detach)}",
            f"autocast disabled: {self.disable_autocast}",
            f"expected outputs: {self.expected_outputs}",
            f"mutated inputs applied from outputs[:{self.mutation_split}]"
            if self.mutation_split is not None
            else "no mutation epilogue",
            f"replays aliases: {self.replays_aliases}",
            f"dynamic dims marked on outputs: {list(self.dynamic_dims)}",
            f"grad mode set after call: {self.grad_enabled_after}",
            *(f"other: {e}" for e in self.extra),
        ]


def _arg_index(term: Term) -> int | None:
    if (
        isinstance(term, Item)
        and isinstance(term.index, Const)
        and isinstance(term.index.value, int)
    ):
        base = term.base
        if (
            base == Name("args")
            or (isinstance(base, Seq) and base.kind == "list")
            or (isinstance(base, Call) and base.func == Name("list"))
        ):
            return term.index.value
    return None


def _out_index(term: Term | None) -> int:
    """The literal index of ``ret_outs[i]``; -1 when it is not a literal."""
    if (
        isinstance(term, Item)
        and isinstance(term.index, Const)
        and isinstance(term.index.value, int)
    ):
        return term.index.value
    return -1


def _guard_is(guard: Guard, text: str) -> bool:
    return str(guard.cond) == text


_KNOWN_CALLS = (
    "compiled_fn",
    "on_before_call",
    "increment_version",
    "apply_mutations",
    "replay_aliases",
    "mark_dynamic",
    "torch.set_grad_enabled",
)


def _captured(term: Call) -> tuple[tuple[int, int], ...] | None:
    """The inputs a mutation or alias call is handed as a dict literal: (key, argument index, -1 where
    the value is not an argument); a repeated key is one entry, at its first position."""
    if not (term.args and isinstance(term.args[0], MapLit)):
        return None
    pairs: dict[int, int] = {}
    for k, v in term.args[0].items:
        if isinstance(k, Const) and isinstance(k.value, int):
            index = _arg_index(v)
            pairs[k.value] = -1 if index is None else index  # -1: not an arg
    return tuple(pairs.items())


def _split(term: Call) -> int | None:
    """Where apply_mutations slices the outputs for the mutated inputs (-1: not a literal)."""
    if len(term.args) > 1 and isinstance(term.args[1], Item) and isinstance(term.args[1].index, SliceT):
        upper = term.args[1].index.upper
        return upper.value if isinstance(upper, Const) else -1  # type: ignore[return-value]  # an int literal
    return None


def form_from_trace(trace: Trace) -> RuntimeWrapperForm:  # noqa: PLR0912, PLR0915  # one branch per field
    captured: tuple[tuple[int, int], ...] = ()
    bumps: list[int] = []
    mode, restored, no_autocast = "grad mode unchanged", False, False
    detach: list[int] = []
    expected: int | None = None
    split: int | None = None
    replays = False
    dyn: list[int] = []
    grad_after: bool | None = None
    extra: list[str] = []
    seen_call = False
    for e in trace.effects:
        term = e.term
        func = str(term.func) if isinstance(term, Call) else ""
        if e.kind == "call" and func == "compiled_fn":
            seen_call = True
            if any(g.kind == "with" and _guard_is(g, "torch.enable_grad()") for g in e.guards):
                mode = "grad enabled (training)"
            no_autocast = any(g.kind == "with" and "autocast" in str(g.cond) for g in e.guards)
        elif e.kind == "call" and func == "torch.set_grad_enabled" and isinstance(term, Call):
            value = term.args[0] if term.args else None
            guarded = any(_guard_is(g, "torch.is_grad_enabled()") for g in e.guards)
            if not seen_call and guarded and value == Const(False):
                mode = "grad disabled (inference)"
            elif seen_call and guarded and value == Const(True):
                restored = True
            elif seen_call and not guarded and isinstance(value, Const):
                grad_after = bool(value.value)
            else:
                extra.append(e.describe())
        elif e.kind == "call" and func == "increment_version" and isinstance(term, Call):
            items = term.args[0].items if term.args and isinstance(term.args[0], Seq) else ()
            bumps.extend(i for i in (_arg_index(t) for t in items) if i is not None)
        elif (
            e.kind == "call"
            and func in ("apply_mutations", "replay_aliases")
            and isinstance(term, Call)
        ):
            if (handed := _captured(term)) is not None:
                captured = handed
            if func == "replay_aliases":
                replays = True
            elif (sliced := _split(term)) is not None:
                split = sliced
        elif e.kind == "call" and func == "mark_dynamic" and isinstance(term, Call):
            target = term.args[0] if term.args else None
            dyn.append(_out_index(target))
        elif e.kind == "setitem" and isinstance(term, Op) and ".detach()" in str(term.operands[1]):
            idx = _arg_index(term.operands[0])
            detach.append(-1 if idx is None else idx)
        elif e.kind == "raise" and e.guards and "len(" in str(e.guards[-1].cond):
            cond = e.guards[-1].cond
            if isinstance(cond, Op) and cond.op == "!=" and isinstance(cond.operands[1], Const):
                expected = cond.operands[1].value  # type: ignore[assignment]  # int literal
        elif (
            (e.kind == "call" and func == "on_before_call")
            or e.kind == "return"
            or ("view_replay" in e.describe())
        ):
            pass
        else:
            extra.append(e.describe())
    return RuntimeWrapperForm(
        captured_inputs=captured,
        version_bumps=tuple(bumps),
        mode=mode,
        grad_restored=restored,
        detach=tuple(detach),
        disable_autocast=no_autocast,
        expected_outputs=expected,
        mutation_split=split,
        replays_aliases=replays,
        dynamic_dims=tuple(dyn),
        grad_enabled_after=grad_after,
        extra=tuple(extra),
    )


def structural_form(source: str) -> RuntimeWrapperForm:
    """Reduce any build's (or our) ``_runtime_wrapper`` source to its structural form."""
    return form_from_trace(trace_function(source, PARAMS))


@dataclass(frozen=True)
class AliasFnForm:
    """Per user output, the expression ``_alias_fn`` returns for it."""

    outputs: tuple[str, ...]
    extra: tuple[str, ...] = ()

    def describe(self) -> list[str]:
        return [f"output {i}: {o}" for i, o in enumerate(self.outputs)] + [
            f"other: {e}" for e in self.extra
        ]


def alias_structural_form(source: str) -> AliasFnForm:
    """Reduce any build's (or our) ``_alias_fn`` source to its structural form."""
    trace = trace_function(source, ALIAS_PARAMS)
    outputs: tuple[str, ...] = ()
    extra = []
    for e in trace.effects:
        if e.kind == "return" and isinstance(e.term, Seq):
            outputs = tuple(str(i) for i in e.term.items)
        elif (
            e.kind == "call"
            and isinstance(e.term, Call)
            and str(e.term.func) == ("alias_from_base")
        ):
            continue  # a bound alias: it reappears, by name, in the returned list
        else:
            extra.append(e.describe())
    return AliasFnForm(outputs, tuple(extra))
