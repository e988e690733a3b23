"""How the per-tensor layout (``SymintLayout``, reference_impl/subclass_wrapper.py) reads a graph's
outputs: each optional symbolic position is taken only when it holds an integer and the outputs left
still fit what is to come; a subclass's outer size is read back from an inner tensor or rebuilt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import torch


class Outer(Protocol):
    """What the outer size and stride are read from (subclass_wrapper.SubclassMeta)."""

    @property
    def outer_size(self) -> tuple[int | None, ...]: ...
    @property
    def outer_stride(self) -> tuple[int | None, ...]: ...
    @property
    def size_from(self) -> str | None: ...
    @property
    def stride_from(self) -> str | None: ...


__all__ = ["Outputs", "after_slots", "is_optional_symint_output"]


def is_optional_symint_output(value: object) -> bool:
    """An output position the per-tensor layout may skip holds a plain integer."""
    return isinstance(value, int | torch.SymInt) and not isinstance(value, bool)


def after_slots(slots: Sequence[bool]) -> list[tuple[int, int]]:
    """Per output position: how many tensors, and how many optional SymInts, come after it (the
    bounds within which a per-tensor layout may skip an optional position)."""
    return [(sum(slots[k + 1 :]), sum(not t for t in slots[k + 1 :])) for k in range(len(slots))]


class Outputs:
    """The graph's outputs, read in order; in the per-tensor layout a symbolic position is
    taken only when it holds an integer and the outputs left still fit the tensors to come."""

    def __init__(self, outs: Sequence[Any], slots: Sequence[bool], count: int) -> None:
        self.outs, self.count, self.pos = outs, count, 0
        self.after = after_slots(slots)
        self.slot = 0

    def tensor(self) -> Any:
        value = self.outs[self.pos]
        self.pos += 1
        self.slot += 1
        return value

    def optional(self) -> None:
        tensors, optional = self.after[self.slot]
        left = self.count - self.pos - 1
        if tensors <= left <= tensors + optional and is_optional_symint_output(self.outs[self.pos]):
            self.pos += 1
        self.slot += 1

    def outer(self, meta: Outer, inner: Mapping[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The subclass's outer size and stride: read back from an inner tensor (its own
        symbolic positions optional) or rebuilt from required positions and static entries."""
        dims = []
        for entries, source, read in ((meta.outer_size, meta.size_from, "size"),
                                      (meta.outer_stride, meta.stride_from, "stride")):
            if source is not None:
                for _ in range(sum(s is None for s in entries)):
                    self.optional()
                dims.append(tuple(getattr(inner[source], read)()))
            else:
                dims.append(tuple(self.tensor() if s is None else s for s in entries))
        return dims[0], dims[1]
