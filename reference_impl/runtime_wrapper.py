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
from dataclasses import dataclass
from enum import Enum
from typing import Any

import torch

from reference_impl._source import SourceBuilder, exec_function
from reference_impl.mutation_epilogue import unwrap_alias

__all__ = [
    "AliasKind",
    "OutputSpec",
    "RuntimeWrapperMeta",
    "ViewSpec",
    "alias_from_base",
    "as_list",
    "codegen_alias_fn",
    "codegen_runtime_wrapper",
    "compile_alias_fn",
    "compile_runtime_wrapper",
    "disable_autocast",
    "record_dynamic_dims",
    "replay_aliases_interpreted",
    "run_runtime_wrapper_interpreted",
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


def as_list(outs: object) -> list[Any]:
    """The graph's outputs as a list (a lone value, a tuple or a list)."""
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
        if o.kind is AliasKind.ALIAS_OF_INPUT:
            base = orig_inputs[o.base_index]
        else:
            base = fw_outs[o.base_index]
            base = unwrap_alias(base) if _base_wrapped(meta, o.base_index) else base
        ret.append(
            alias_from_base(base, out, o.requires_grad, o.view, replay_views=meta.replay_views)
        )
    return ret


def _base_wrapped(meta: RuntimeWrapperMeta, base: int) -> bool:
    """An intermediate's alias whose base is another user output that is itself an alias: in a
    training graph that output comes wrapped (as every aliased output does), so is its base."""
    return meta.trace_joint and base < len(meta.outputs) and meta.outputs[base].kind is not AliasKind.PLAIN


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
            if o.kind is AliasKind.ALIAS_OF_INPUT:
                base = f"orig_inputs[{o.base_index}]"
            elif o.base_index is not None and _base_wrapped(meta, o.base_index):
                base = f"_unwrap_tensoralias(fw_outs[{o.base_index}])"
            else:
                base = f"fw_outs[{o.base_index}]"
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
                all_outs = as_list(_invoke(compiled_fn, args_, meta.disable_autocast))
        else:
            grad_enabled = torch.is_grad_enabled()
            try:
                if grad_enabled:
                    torch.set_grad_enabled(False)
                on_before_call()
                all_outs = as_list(_invoke(compiled_fn, args, meta.disable_autocast))
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
    b.globals.update({"torch": torch, "_normalize_as_list_": as_list})
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
