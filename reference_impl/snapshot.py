"""A tensor's observable state at one moment, for the reference's observation (observe.py): its
values (unreadable ones as empty), geometry, storage and version, and the storages and extents it
covers, read through public torch API only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from reference_impl.subclass_wrapper import is_wrapper_subclass

__all__ = [
    "TensorState",
    "aliasing_storages",
    "extents",
    "leaves",
    "same_values",
    "snapshot",
    "storage_ptr",
    "storages",
]


def storage_ptr(t: torch.Tensor) -> int:
    """Data pointer of the storage; -1 for wrapper subclasses, which have none."""
    if is_wrapper_subclass(t):
        return -1
    ptr = _data_ptr(t)
    return -1 if ptr is None else ptr


def _data_ptr(t: torch.Tensor) -> int | None:
    """The storage's data pointer; None for a wrapper without the flatten protocol, whose
    storage is a placeholder that refuses the question (and whose values we cannot name)."""
    try:
        return int(t.untyped_storage().data_ptr())
    except RuntimeError:
        return None


def storages(t: torch.Tensor) -> frozenset[int]:
    """Storage pointers holding ``t``'s values: its own, or its inner tensors' for a wrapper
    subclass (which has no storage). Empty tensors hold nothing and share nothing."""
    return frozenset(
        p for leaf in leaves(t) if leaf.numel() and (p := _data_ptr(leaf))
    )


def aliasing_storages(t: torch.Tensor, held: list[object]) -> frozenset[object]:
    """The storage by which AOTAutograd tells whether ``t`` aliases another tensor: the outer
    one. A wrapper subclass's outer storage is a placeholder of its own, shared only by what
    its ``__torch_dispatch__`` made an alias of it (a view through
    ``return_and_correct_aliasing``), not by a new wrapper that holds the same inner tensor;
    it has no data pointer, so it is told apart by the identity of its (preserved) Python
    object, which ``held`` keeps alive while keys are compared."""
    if not is_wrapper_subclass(t):
        return storages(t)
    storage = t.untyped_storage()
    held.append(storage)
    return frozenset({("outer", id(storage))})


def extents(t: torch.Tensor) -> frozenset[tuple[int, int, int]]:
    """The byte ranges ``t``'s values span: (storage, first byte, past the last byte)."""
    spans = set()
    for leaf in leaves(t):
        if leaf.numel() and (storage := _data_ptr(leaf)):
            reach = sum((n - 1) * abs(s) for n, s in zip(leaf.size(), leaf.stride(), strict=True))
            first = leaf.data_ptr()
            spans.add((storage, first, first + (reach + 1) * leaf.element_size()))
    return frozenset(spans)


def leaves(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The plain tensors holding ``t``'s values (``t`` itself unless a wrapper subclass)."""
    if not is_wrapper_subclass(t):
        return (t.detach(),)
    names, _ = t.__tensor_flatten__()  # type: ignore[attr-defined]  # protocol method
    return tuple(leaf for n in names for leaf in leaves(getattr(t, n)))


@dataclass(frozen=True)
class TensorState:
    """What an input looks like at one moment. ``values`` are read at this geometry."""

    type_name: str
    dtype: torch.dtype
    size: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int
    storage_ptr: int
    version: int
    requires_grad: bool
    is_leaf: bool
    grad_fn: object = field(compare=False, repr=False)
    values: tuple[torch.Tensor, ...] = field(compare=False, repr=False)
    storages: frozenset[int] = field(default=frozenset(), compare=False, repr=False)
    #: the storage object itself (None for a wrapper subclass): two storages emptied to zero
    #: bytes share a null data pointer, so only identity tells a swap (``set_``) between them
    storage: object = field(default=None, compare=False, repr=False)

    def same_storage(self, other: TensorState) -> bool:
        if self.storage is not None and other.storage is not None:
            return self.storage is other.storage
        return self.storage_ptr == other.storage_ptr

    @property
    def geometry(self) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        return self.size, self.stride, self.storage_offset


def _readable(t: torch.Tensor) -> bool:
    """Whether every element lies inside the storage: a storage resized below the tensor's geometry
    (resize_storage_bytes_) would be read past its end, which crashes rather than raises."""
    if t.numel() == 0:
        return True
    last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
    return (last + 1) * t.element_size() <= t.untyped_storage().nbytes()


def _values(t: torch.Tensor) -> torch.Tensor:
    """A copy of the values, or an empty tensor of the dtype where they cannot be read."""
    return t.clone() if _readable(t) else torch.empty(0, dtype=t.dtype, device=t.device)


def snapshot(t: torch.Tensor) -> TensorState:
    """Record a tensor's observable state (values are cloned, detached; unreadable: empty)."""
    return TensorState(
        type_name=type(t).__name__,
        dtype=t.dtype,
        size=tuple(t.size()),
        stride=tuple(t.stride()),
        storage_offset=int(t.storage_offset()),
        storage_ptr=storage_ptr(t),
        version=-1 if t.is_inference() else t._version,  # an inference tensor has no version counter
        requires_grad=t.requires_grad,
        is_leaf=t.is_leaf,
        grad_fn=t.grad_fn,
        values=tuple(_values(v) for v in leaves(t)),
        storages=storages(t),
        storage=None if is_wrapper_subclass(t) else t.untyped_storage(),
    )


def same_values(xs: Sequence[torch.Tensor], ys: Sequence[torch.Tensor]) -> bool:
    return len(xs) == len(ys) and all(_same(a, b) for a, b in zip(xs, ys, strict=True))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.equal(a.isnan(), b.isnan())) and bool(
            torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
        )
    return bool(torch.equal(a, b))
