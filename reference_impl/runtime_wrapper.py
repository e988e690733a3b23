"""Behaviour ``runtime_wrapper`` (upstream #181271): the call wrapper around a compiled graph.

Every call of a compiled region goes through one wrapper. Its contract, in order:

1. remember the caller's tensors the epilogue needs (mutated inputs, inputs that outputs
   alias) *before* the call, because the arguments list is consumed by the call;
2. bump the version counter of inputs the graph mutates itself and autograd can see;
3. call the graph: a training graph (``trace_joint``) runs on a copy of the argument list,
   with the never-differentiated inputs detached, under ``enable_grad``; an inference graph
   runs with grad mode off, restored afterwards (an exception included); optionally with
   autocast disabled;
4. check the graph returned ``mutated + outputs + intermediate bases`` values, apply the
   input mutations (:mod:`reference_impl.mutation_epilogue`) from the leading ones;
5. regenerate every output that aliases an input or an intermediate as a real view of its
   base (:func:`replay_aliases_interpreted`), so storage sharing and ``_base`` match eager;
6. mark the outputs' dynamic dims, and finally re-apply a ``set_grad_enabled`` the program
   performed inside the compiled region, so the mode change persists as in eager.

The codegen bakes every one of these decisions into a straight-line ``_runtime_wrapper``
and ``_alias_fn``; the interpreted form makes them at run time from the metadata.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import torch

from reference_impl._source import SourceBuilder, exec_function
from reference_impl.mutation_epilogue import unwrap_alias
from reference_impl.structural import (
    Call,
    Const,
    Guard,
    Item,
    MapLit,
    Name,
    Op,
    Seq,
    SliceT,
    Term,
    Trace,
    trace_function,
)

__all__ = [
    "AliasFnForm",
    "AliasKind",
    "OutputSpec",
    "RuntimeWrapperForm",
    "RuntimeWrapperMeta",
    "ViewSpec",
    "alias_from_base",
    "alias_structural_form",
    "codegen_alias_fn",
    "codegen_runtime_wrapper",
    "compile_alias_fn",
    "compile_runtime_wrapper",
    "disable_autocast",
    "record_dynamic_dims",
    "replay_aliases_interpreted",
    "run_runtime_wrapper_interpreted",
    "structural_form",
]

PARAMS = ("compiled_fn", "first_ctx", "on_before_call", "args")
ALIAS_PARAMS = ("orig_inputs", "fw_outs")
DYNAMIC_DIMS_ATTR = "conformance_dynamic_dims"


class AliasKind(str, Enum):
    """How a user output relates to the inputs and intermediates of the program."""

    PLAIN = "plain"
    IS_INPUT = "is_input"
    ALIAS_OF_INPUT = "alias_of_input"
    ALIAS_OF_INTERMEDIATE = "alias_of_intermediate"


@dataclass(frozen=True)
class ViewSpec:
    """Geometry of a view inside its base's storage."""

    size: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int

    @staticmethod
    def of(t: torch.Tensor) -> ViewSpec:
        return ViewSpec(tuple(t.size()), tuple(t.stride()), int(t.storage_offset()))


@dataclass(frozen=True)
class OutputSpec:
    """One user output. ``base_index`` is an input index (``is_input``, ``alias_of_input``)
    or the index into the graph outputs of the intermediate base (``alias_of_intermediate``)."""

    kind: AliasKind = AliasKind.PLAIN
    base_index: int | None = None
    requires_grad: bool = False
    view: ViewSpec | None = None
    dynamic_dims: frozenset[int] | None = None

    def __post_init__(self) -> None:
        if (self.kind is AliasKind.PLAIN) != (self.base_index is None):
            raise ValueError(f"{self.kind.value} output needs base_index iff not plain")


@dataclass(frozen=True)
class RuntimeWrapperMeta:
    """Everything the wrapper decides, fixed at compile time."""

    num_inputs: int
    mutated_runtime: tuple[int, ...] = ()
    mutated_in_graph: tuple[int, ...] = ()
    detach: tuple[int, ...] = ()
    outputs: tuple[OutputSpec, ...] = (OutputSpec(),)
    num_intermediate_bases: int = 0
    trace_joint: bool = False
    disable_autocast: bool = False
    grad_enabled_after: bool | None = None
    keep_input_mutations: bool = True
    replay_views: bool = True

    @property
    def captured_inputs(self) -> tuple[int, ...]:
        seen: dict[int, None] = dict.fromkeys(self.mutated_runtime)
        for o in self.outputs:
            if o.kind in (AliasKind.IS_INPUT, AliasKind.ALIAS_OF_INPUT):
                assert o.base_index is not None
                seen.setdefault(o.base_index)
        return tuple(seen)

    @property
    def expected_outputs(self) -> int:
        return len(self.mutated_runtime) + len(self.outputs) + self.num_intermediate_bases

    @property
    def has_aliases(self) -> bool:
        return any(o.kind is not AliasKind.PLAIN for o in self.outputs)

    @property
    def version_bumps(self) -> tuple[int, ...]:
        return self.mutated_in_graph if self.keep_input_mutations else ()


def record_dynamic_dims(t: object, dims: frozenset[int]) -> None:
    """Default dynamic-dim marker: remember the dims on the output tensor."""
    if isinstance(t, torch.Tensor):
        setattr(t, DYNAMIC_DIMS_ATTR, frozenset(dims))


@contextlib.contextmanager
def disable_autocast() -> Iterator[None]:
    """Autocast off on every available device type, through the public context manager."""
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    with contextlib.ExitStack() as stack:
        for device in devices:
            stack.enter_context(torch.autocast(device_type=device, enabled=False))
        yield


def alias_from_base(
    base: torch.Tensor,
    out: torch.Tensor,
    requires_grad: bool,
    view: ViewSpec | None,
    *,
    replay_views: bool = True,
) -> torch.Tensor:
    """A real view of ``base`` with ``out``'s geometry (or the recorded one)."""
    del replay_views  # a single as_strided view replays every view chain the same way
    spec = view if view is not None else ViewSpec.of(out)
    aliased = base.as_strided(spec.size, spec.stride, spec.storage_offset)
    if not requires_grad and aliased.requires_grad:
        with torch.no_grad():
            aliased = base.as_strided(spec.size, spec.stride, spec.storage_offset)
    return aliased


def _as_list(outs: object) -> list[Any]:
    if isinstance(outs, tuple):
        return list(outs)
    if isinstance(outs, list):
        return outs
    return [outs]


def replay_aliases_interpreted(
    meta: RuntimeWrapperMeta, orig_inputs: Mapping[int, Any], fw_outs: Sequence[Any]
) -> list[Any]:
    """The per-output handler loop: regenerate aliased outputs from their bases."""
    ret = []
    for i, o in enumerate(meta.outputs):
        if o.kind is AliasKind.PLAIN:
            ret.append(fw_outs[i])
            continue
        assert o.base_index is not None
        if o.kind is AliasKind.IS_INPUT:
            ret.append(orig_inputs[o.base_index])
            continue
        out = unwrap_alias(fw_outs[i]) if meta.trace_joint else fw_outs[i]
        base = (
            orig_inputs[o.base_index]
            if o.kind is AliasKind.ALIAS_OF_INPUT
            else fw_outs[o.base_index]
        )
        ret.append(
            alias_from_base(base, out, o.requires_grad, o.view, replay_views=meta.replay_views)
        )
    return ret


def codegen_alias_fn(meta: RuntimeWrapperMeta) -> tuple[str, dict[str, object]]:
    """Straight-line ``_alias_fn(orig_inputs, fw_outs)``, one ``append`` per output."""
    b = SourceBuilder()
    b.globals.update({"gen_alias_from_base": alias_from_base, "_unwrap_tensoralias": unwrap_alias})
    b.emit("def _alias_fn(orig_inputs, fw_outs):", indent=0)
    b.emit("ret_outs = []")
    for i, o in enumerate(meta.outputs):
        if o.kind is AliasKind.PLAIN:
            b.emit(f"ret_outs.append(fw_outs[{i}])")
        elif o.kind is AliasKind.IS_INPUT:
            b.emit(f"ret_outs.append(orig_inputs[{o.base_index}])")
        else:
            vms = f"_vms_{i}"
            b.globals[vms] = o.view
            out = f"_unwrap_tensoralias(fw_outs[{i}])" if meta.trace_joint else f"fw_outs[{i}]"
            base = (
                f"orig_inputs[{o.base_index}]"
                if o.kind is AliasKind.ALIAS_OF_INPUT
                else f"fw_outs[{o.base_index}]"
            )
            b.emit(
                f"ret_outs.append(gen_alias_from_base({base}, {out}, {o.requires_grad!r}, "
                f"{vms}, replay_views={meta.replay_views!r}))"
            )
    b.emit("return ret_outs")
    return b.source(), b.globals


def compile_alias_fn(meta: RuntimeWrapperMeta) -> Callable[[Any, Any], list[Any]]:
    source, globals_ = codegen_alias_fn(meta)
    return exec_function(source, globals_, "_alias_fn", filename="<reference_impl:alias_fn>")


def _invoke(compiled_fn: Callable[[list[Any]], Any], args: list[Any], no_autocast: bool) -> Any:
    if no_autocast:
        with disable_autocast():
            return compiled_fn(args)
    return compiled_fn(args)


def run_runtime_wrapper_interpreted(  # noqa: PLR0912  # the branchy loop being specified
    meta: RuntimeWrapperMeta,
    compiled_fn: Callable[[list[Any]], Any],
    args: list[Any],
    *,
    apply_mutations: Callable[[Mapping[int, Any], Sequence[Any]], None],
    replay_aliases: Callable[[Mapping[int, Any], Sequence[Any]], list[Any]],
    first_ctx: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
    on_before_call: Callable[[], None] = lambda: None,
    mark_dynamic: Callable[[object, frozenset[int]], None] = record_dynamic_dims,
) -> list[Any]:
    """The method-dispatch orchestration the codegen replaced, branch by branch."""
    orig_inputs = {i: args[i] for i in meta.captured_inputs}
    if meta.keep_input_mutations and meta.mutated_in_graph:
        torch.autograd.graph.increment_version(args[i] for i in meta.mutated_in_graph)
    with first_ctx():
        if meta.trace_joint:
            args_ = list(args)
            for idx in meta.detach:
                if isinstance(args_[idx], torch.Tensor):
                    args_[idx] = args_[idx].detach()
            with torch.enable_grad():
                on_before_call()
                all_outs = _as_list(_invoke(compiled_fn, args_, meta.disable_autocast))
        else:
            grad_enabled = torch.is_grad_enabled()
            try:
                if grad_enabled:
                    torch.set_grad_enabled(False)
                on_before_call()
                all_outs = _as_list(_invoke(compiled_fn, args, meta.disable_autocast))
            finally:
                if grad_enabled:
                    torch.set_grad_enabled(True)
    if len(all_outs) != meta.expected_outputs:
        raise AssertionError(f"expected {meta.expected_outputs} outputs, got {len(all_outs)}")
    n_mut = len(meta.mutated_runtime)
    fw_outs = all_outs
    if n_mut:
        apply_mutations(orig_inputs, all_outs[:n_mut])
        fw_outs = all_outs[n_mut:]
    ret_outs = replay_aliases(orig_inputs, fw_outs) if meta.has_aliases else fw_outs
    for i, o in enumerate(meta.outputs):
        if o.dynamic_dims is not None:
            mark_dynamic(ret_outs[i], o.dynamic_dims)
    if meta.grad_enabled_after is not None:
        torch.set_grad_enabled(meta.grad_enabled_after)
    return ret_outs


def codegen_runtime_wrapper(  # noqa: PLR0912, PLR0915  # one emit per baked decision
    meta: RuntimeWrapperMeta,
    *,
    apply_mutations: Callable[..., None] | None = None,
    replay_aliases: Callable[..., list[Any]] | None = None,
    mark_dynamic: Callable[[object, frozenset[int]], None] = record_dynamic_dims,
) -> tuple[str, dict[str, object]]:
    """Straight-line ``_runtime_wrapper(_compiled_fn_, _first_ctx_, _on_before_call_, args)``."""
    b = SourceBuilder()
    b.globals.update({"torch": torch, "_normalize_as_list_": _as_list})
    b.emit("def _runtime_wrapper(_compiled_fn_, _first_ctx_, _on_before_call_, args):", 0)
    captured = ", ".join(f"{i}: args[{i}]" for i in meta.captured_inputs)
    b.emit(f"orig_inputs = {{{captured}}}")
    if meta.version_bumps:
        b.globals["_increment_version_"] = torch.autograd.graph.increment_version
        b.emit(f"_increment_version_(({''.join(f'args[{i}], ' for i in meta.version_bumps)}))")
    b.emit("with _first_ctx_():")
    if meta.disable_autocast:
        b.globals["_disable_autocast_"] = disable_autocast
    if meta.trace_joint:
        b.emit("args_ = list(args)", 2)
        for idx in meta.detach:
            b.emit(
                f"if isinstance(args_[{idx}], torch.Tensor): args_[{idx}] = args_[{idx}].detach()",
                2,
            )
        b.emit("with torch.enable_grad():", 2)
        b.emit("_on_before_call_()", 3)
        call_indent, call_args = 3, "args_"
    else:
        b.emit("grad_enabled = torch.is_grad_enabled()", 2)
        b.emit("try:", 2)
        b.emit("if grad_enabled: torch.set_grad_enabled(False)", 3)
        b.emit("_on_before_call_()", 3)
        call_indent, call_args = 3, "args"
    if meta.disable_autocast:
        b.emit("with _disable_autocast_():", call_indent)
        call_indent += 1
    b.emit(f"all_outs = _normalize_as_list_(_compiled_fn_({call_args}))", call_indent)
    if not meta.trace_joint:
        b.emit("finally:", 2)
        b.emit("if grad_enabled: torch.set_grad_enabled(True)", 3)
    b.emit("del args")
    n = meta.expected_outputs
    b.emit(f"if len(all_outs) != {n}:")
    b.emit(f'raise AssertionError(f"expected {n} outputs, got {{len(all_outs)}}")', 2)
    n_mut = len(meta.mutated_runtime)
    if n_mut:
        if apply_mutations is None:
            raise ValueError("metadata has runtime mutations but no apply_mutations was given")
        b.globals["_apply_mutations_"] = apply_mutations
        b.emit(f"updated_inputs = all_outs[:{n_mut}]")
        b.emit(f"fw_outs = all_outs[{n_mut}:]")
        b.emit("_apply_mutations_(orig_inputs, updated_inputs)")
    else:
        b.emit("fw_outs = all_outs")
    if meta.has_aliases:
        if replay_aliases is None:
            raise ValueError("metadata has aliased outputs but no replay_aliases was given")
        b.globals["_replay_aliases_"] = replay_aliases
        b.emit("ret_outs = _replay_aliases_(orig_inputs, fw_outs)")
    else:
        b.emit("ret_outs = fw_outs")
    for i, o in enumerate(meta.outputs):
        if o.dynamic_dims is not None:
            b.globals["_mark_dynamic_"] = mark_dynamic
            b.globals[f"_dyn_dims_{i}"] = o.dynamic_dims
            b.emit(f"_mark_dynamic_(ret_outs[{i}], _dyn_dims_{i})")
    if meta.grad_enabled_after is not None:
        b.emit(f"torch.set_grad_enabled({meta.grad_enabled_after!r})")
    b.emit("return ret_outs")
    return b.source(), b.globals


def compile_runtime_wrapper(
    meta: RuntimeWrapperMeta,
    *,
    apply_mutations: Callable[..., None] | None = None,
    replay_aliases: Callable[..., list[Any]] | None = None,
    mark_dynamic: Callable[[object, frozenset[int]], None] = record_dynamic_dims,
) -> Callable[..., list[Any]]:
    source, globals_ = codegen_runtime_wrapper(
        meta,
        apply_mutations=apply_mutations,
        replay_aliases=replay_aliases,
        mark_dynamic=mark_dynamic,
    )
    return exec_function(
        source, globals_, "_runtime_wrapper", filename="<reference_impl:runtime_wrapper>"
    )


# -- structural forms --------------------------------------------------------------------


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
            if term.args and isinstance(term.args[0], MapLit):
                # A dict literal: a repeated key is one entry, at its first position.
                pairs: dict[int, int] = {}
                for k, v in term.args[0].items:
                    if isinstance(k, Const) and isinstance(k.value, int):
                        index = _arg_index(v)
                        pairs[k.value] = -1 if index is None else index  # -1: not an arg
                captured = tuple(pairs.items())
            if func == "replay_aliases":
                replays = True
            elif (
                len(term.args) > 1
                and isinstance(term.args[1], Item)
                and isinstance(term.args[1].index, SliceT)
            ):
                upper = term.args[1].index.upper
                split = upper.value if isinstance(upper, Const) else -1  # type: ignore[assignment]  # -1: not a literal
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
