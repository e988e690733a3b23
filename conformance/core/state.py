"""Snapshots of what a call leaves behind: tensor states, output structure, aliasing, ambient modes."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.core.checks import dims


def is_subclass(t: torch.Tensor) -> bool:
    return type(t) is not torch.Tensor and hasattr(type(t), "__tensor_flatten__")


def flatten_outputs(out: Any) -> list[Any]:
    """A program's return value as a flat list (tuples/lists/dicts in order; a bare value alone)."""
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]


def output_structure(out: Any) -> str:
    """The containers around a return value, leaves as ``*``: ``tuple(*, list(*, *))``,
    ``dict(a: *, b: *)``. flatten_outputs drops this; callers that unpack rely on it."""
    if isinstance(out, tuple | list):
        return f"{type(out).__name__}({', '.join(output_structure(x) for x in out)})"
    if isinstance(out, dict):
        return f"dict({', '.join(f'{k}: {output_structure(out[k])}' for k in sorted(out, key=str))})"
    return "*"


def storage_key(t: torch.Tensor) -> tuple[str, int] | None:
    """Identity of a dense tensor's storage (device, data_ptr), None if it has none to share."""
    if is_subclass(t) or t.device.type == "meta":
        return None
    try:  # a wrapper subclass without the flatten protocol has a storage that refuses its pointer
        st = t.untyped_storage()
        return (str(t.device), st.data_ptr()) if st.nbytes() else None
    except (RuntimeError, NotImplementedError):
        return None


@functools.cache
def _storages_preserved() -> bool:
    """Whether the build gives one Python object per storage (PyObject preservation), so that
    `is` tells storages apart where a data_ptr cannot."""
    t = torch.empty(1)
    return t.untyped_storage() is t.untyped_storage()


def storage_object(t: torch.Tensor) -> Any:
    """The storage object of a dense tensor, where the build preserves it (None otherwise)."""
    if is_subclass(t) or t.device.type == "meta" or not _storages_preserved():
        return None
    return _safe(t.untyped_storage)


def same_storage(before: TensorState, after: TensorState) -> bool:
    """Whether a tensor still lives in the storage it had: by the storage object where there is one
    (a data_ptr is reused once the old storage is freed), else by (device, data_ptr)."""
    if before.storage_object is not None and after.storage_object is not None:
        return before.storage_object is after.storage_object
    return before.storage == after.storage


@dataclass
class TensorState:
    """Everything about one tensor that a contract speaks of, detached from the live tensor."""

    type: str
    dtype: str
    device: str
    shape: tuple[int | str, ...]
    stride: tuple[int | str, ...] | None
    storage_offset: int | None
    requires_grad: bool | str
    is_leaf: bool | str
    version: int | None
    storage: tuple[str, int] | None
    values: torch.Tensor | None
    storage_values: torch.Tensor | None
    inner: dict[str, TensorState] = field(default_factory=dict)
    layout: str = "torch.strided"
    conj: bool = False  # the lazy conjugate bit (is_conj)
    neg: bool = False  # the lazy negation bit (is_neg)
    inference: bool = False  # an inference tensor (is_inference)
    retains_grad: bool | str = False
    # The storage object itself, held so that it outlives the call: a storage freed during the call
    # (resize_storage_bytes_(x, 0), then set_) hands its memory, and so its data_ptr, to the next one.
    storage_object: Any = field(default=None, compare=False, repr=False)


def _safe(fn: Any, default: Any = None) -> Any:
    try:
        return fn()
    except (RuntimeError, NotImplementedError, AttributeError, TypeError):
        return default


def fits_storage(t: torch.Tensor) -> bool:
    """Whether every element of `t` lies inside its storage. A storage resized below the tensor's
    geometry (resize_storage_bytes_, as FSDP does) leaves a tensor that reading would read past the
    end of its memory (a crash, not an error): such a tensor's values are unreadable."""
    if t.numel() == 0 or is_subclass(t):
        return True
    try:
        nbytes = t.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError):  # no storage to hold it against (meta, a wrapper's)
        return True
    last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
    return (last + 1) * t.element_size() <= nbytes


def tensor_state(t: torch.Tensor, *, with_storage: bool = True) -> TensorState:
    sub = is_subclass(t)
    inner: dict[str, TensorState] = {}
    if sub:
        names, _ctx = type(t).__tensor_flatten__(t)  # type: ignore[attr-defined]  # subclass protocol
        for name in names:
            inner[name] = tensor_state(getattr(t, name), with_storage=with_storage)
    values = None if sub or not fits_storage(t) else _safe(
        lambda: t.detach().clone(memory_format=torch.contiguous_format))
    storage_values = None
    if with_storage and not sub:
        storage_values = _safe(lambda: _whole_storage(t))
    return TensorState(
        type=f"{type(t).__module__}.{type(t).__qualname__}",
        dtype=str(t.dtype),
        device=str(t.device),
        shape=dims(t.shape),
        stride=_safe(lambda: dims(t.stride())),
        storage_offset=_safe(t.storage_offset),
        requires_grad=_autograd_field(t, "requires_grad"),
        is_leaf=_autograd_field(t, "is_leaf"),
        version=_safe(lambda: t._version),
        storage=storage_key(t),
        storage_object=storage_object(t),
        values=values,
        storage_values=storage_values,
        inner=inner,
        layout=str(t.layout),
        conj=bool(_safe(t.is_conj, False)),
        neg=bool(_safe(t.is_neg, False)),
        inference=bool(_safe(t.is_inference, False)),
        retains_grad=_autograd_field(t, "retains_grad"),
    )


def _autograd_field(t: torch.Tensor, name: str) -> bool | str:
    """A view whose base was written in place can refuse to answer (multi-output views, views
    made under no_grad); the refusal itself is then what eager and compiled must agree on."""
    try:
        return bool(getattr(t, name))
    except RuntimeError as exc:
        return refusal(exc)


def refusal(exc: BaseException) -> str:
    """An autograd refusal by kind: its type and first sentence, without the node that made the view
    (eager's `Output 1 of Unbind` is compiled's `Output 0 of Select` or `of CompiledFunction`, where
    the runtime wrapper regenerates the view: one refusal in two wordings)."""
    first = str(exc).split(".")[0]
    return f"raises {type(exc).__name__}: " + re.sub(r"\bOutput \d+ of \w+", "A view's output", first)


def whole_storage_view(t: torch.Tensor) -> torch.Tensor | None:
    """A tensor over the full storage `t` lives in, as its dtype (None if it has no such storage)."""
    st = t.untyped_storage()
    if st.nbytes() % t.element_size():
        return None
    st.data_ptr()  # raises for a wrapper subclass's storage, which set_ would crash on (segfault)
    whole = torch.empty(0, dtype=t.dtype, device=t.device)
    whole.set_(st, 0, (st.nbytes() // t.element_size(),), (1,))
    return whole


def _whole_storage(t: torch.Tensor) -> torch.Tensor | None:
    """The full storage's contents: catches writes outside the tensor's geometry."""
    whole = whole_storage_view(t)
    return None if whole is None else whole.detach().clone()


def restore(t: torch.Tensor, state: TensorState | None) -> None:
    """Put back the storage contents `state` saw (recursing into a subclass's inner tensors)."""
    if state is None:
        return
    for name, inner in state.inner.items():
        restore(getattr(t, name), inner)
    if state.storage_values is not None:
        whole = _safe(lambda: whole_storage_view(t))
        if whole is not None and whole.shape == state.storage_values.shape:
            with torch.no_grad():
                whole.copy_(state.storage_values)


@dataclass
class Relation:
    """How output k relates to the inputs and earlier outputs of the same call."""

    is_input: str | None
    view_of_input: str | None
    shares_storage_with: tuple[str, ...]
    requires_grad: bool = False


def relations(named_inputs: dict[str, Any], outputs: Sequence[Any]) -> list[Relation | None]:
    """For each output: is it an input object, a view whose `_base` is (the base of) an input,
    and which inputs/outputs share its storage. Names: input names, and `out[k]`."""
    input_storage: dict[tuple[str, int], list[str]] = {}
    for name, value in named_inputs.items():
        if isinstance(value, torch.Tensor):
            key = storage_key(value)
            if key is not None:
                input_storage.setdefault(key, []).append(name)
    out_storage: dict[tuple[str, int], list[str]] = {}
    rels: list[Relation | None] = []
    for k, out in enumerate(outputs):
        if not isinstance(out, torch.Tensor):
            rels.append(None)
            continue
        same = next((n for n, v in named_inputs.items() if v is out), None)
        base = out._base
        view_of = None
        if base is not None:
            view_of = next(
                (n for n, v in named_inputs.items() if isinstance(v, torch.Tensor) and (v is base or v._base is base)),
                "<intermediate>",
            )
        key = storage_key(out)
        sharing: list[str] = []
        if key is not None:
            sharing = [*input_storage.get(key, []), *out_storage.get(key, [])]
            out_storage.setdefault(key, []).append(f"out[{k}]")
        rels.append(Relation(is_input=same, view_of_input=view_of, shares_storage_with=tuple(sorted(sharing)),
                             requires_grad=out.requires_grad))
    return rels


def storage_sharing(tensors: dict[str, torch.Tensor]) -> dict[str, tuple[str, ...]]:
    """For each tensor, the others that live in the same storage (e.g. after `x.set_(y)`)."""
    by_key: dict[tuple[str, int], list[str]] = {}
    for name, t in tensors.items():
        key = storage_key(t)
        if key is not None:
            by_key.setdefault(key, []).append(name)
    return {name: tuple(sorted(n for n in group if n != name)) for group in by_key.values() for name in group}


@dataclass
class Ambient:
    """Global modes a call may legitimately change (and then eager changes them too), and the
    thread's dispatch keys (included, excluded), which no call may leave changed: a key left behind
    breaks every later compile in the process (None where the build does not expose them)."""

    grad_enabled: bool
    inference_mode: bool
    autocast: tuple[tuple[str, bool], ...]
    dispatch: tuple[tuple[str, ...], tuple[str, ...]] | None = None


def dispatch_keys() -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The thread's local dispatch key sets by name (read from torch internals: None where absent)."""
    def names(keyset: Any) -> tuple[str, ...]:
        inner = re.fullmatch(r"DispatchKeySet\((.*)\)", str(keyset), re.S)
        return tuple(sorted(k.strip() for k in inner.group(1).split(",") if k.strip())) if inner else (str(keyset),)

    try:
        return (names(torch._C._dispatch_tls_local_include_set()),
                names(torch._C._dispatch_tls_local_exclude_set()))
    except (AttributeError, RuntimeError):
        return None


def _restore_dispatch(before: tuple[tuple[str, ...], tuple[str, ...]] | None) -> None:
    now = dispatch_keys()
    if before is None or now is None or now == before:
        return
    for setter, was, is_now in ((torch._C._dispatch_tls_set_dispatch_key_included, before[0], now[0]),
                                (torch._C._dispatch_tls_set_dispatch_key_excluded, before[1], now[1])):
        for name in set(was) ^ set(is_now):
            key = getattr(torch._C.DispatchKey, name, None)
            if key is not None:
                setter(key, name in was)


def restore_ambient(before: Ambient) -> None:
    """Put grad mode, autocast and the dispatch keys back as they were (a caller action may have
    changed the modes and left the reset to an `after:` block that did not run: the probe replays
    `before:` only; a failed compile can leave dispatch keys set, and every later compile in the
    worker would then fail)."""
    torch.set_grad_enabled(before.grad_enabled)
    for dev, enabled in before.autocast:
        if _safe(lambda d=dev: torch.is_autocast_enabled(d), None) != enabled:
            _safe(lambda d=dev, e=enabled: torch.set_autocast_enabled(d, e), None)
    _restore_dispatch(before.dispatch)


def ambient() -> Ambient:
    autocast = []
    for dev in ("cpu", "cuda"):
        enabled = _safe(lambda d=dev: torch.is_autocast_enabled(d), None)
        if enabled is not None:
            autocast.append((dev, bool(enabled)))
    return Ambient(
        grad_enabled=torch.is_grad_enabled(),
        inference_mode=torch.is_inference_mode_enabled(),
        autocast=tuple(autocast),
        dispatch=dispatch_keys(),
    )
