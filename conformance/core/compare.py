"""The eager-differential oracle: compiled must leave exactly what eager leaves.

Each check returns `Mismatch` records; a check never raises for a difference. Messages read
"<where>: <what> is <actual>, but eager gives <expected>" so a failure says what differs
without opening the results file.

Note [View-ness of outputs]
An output that aliases an input or an intermediate must share its storage and see writes
made through the other (always checked: `shares storage with`, and the write-through pass).
Whether it is an autograd *view* (`_base` set) is compared only where the eager output
requires grad: where it does not, AOTAutograd may legitimately hide view-ness from autograd
(upstream Note [Intermediate Bases Optimization], pytorch/pytorch#97786, whose own tests
compare `_is_view()` only for outputs that require grad), and inductor returns such aliases
as plain tensors over the same storage.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from conformance.core.checks import (
    NOTHING_IN_PARTICULAR,
    About,
    C,
    Check,
    dims,
    is_ndarray,
    show_keys,
    significant_strides,
)
from conformance.core.mismatch import Mismatch, Tolerance, short
from conformance.core.spec import VersionMode
from conformance.core.state import Ambient, Relation, TensorState, same_storage


def compare_values(
    where: str, actual: torch.Tensor | None, expected: torch.Tensor | None, tol: Tolerance,
    check: Check = C.VALUES, *, of: About = NOTHING_IN_PARTICULAR,
) -> list[Mismatch]:
    """`of`: what the tensor is (see Mismatch)."""
    if actual is None or expected is None:
        if (actual is None) == (expected is None):
            return []
        return [check.mismatch(where, "unreadable" if expected is None else "readable",
                              "unreadable" if actual is None else "readable", of=of)]
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return []  # reported by the metadata checks
    found = check.judged(where, actual, expected, tol, show=lambda t: short(t.flatten()[:8].tolist()), of=of)
    return [] if found is None else [found]


def compare_state(
    where: str,
    actual: TensorState,
    expected: TensorState,
    tol: Tolerance,
    *,
    strides: bool | str = True,
    grad_fields: bool = True,
    storage: bool = True,
    of: About = NOTHING_IN_PARTICULAR,
) -> list[Mismatch]:
    """Metadata, values (and the whole storage's values) of one tensor, recursing into subclasses; `strides`: those
    of dims longer than 1 (true), of every dim ("all"), or none (false)."""
    out: list[Mismatch] = []

    def field(check: Check, a: Any, e: Any) -> None:
        if (m := check.judged(where, a, e, of=of)) is not None:
            out.append(m)

    field(C.TYPE, actual.type, expected.type)
    field(C.DTYPE, actual.dtype, expected.dtype)
    field(C.DEVICE, actual.device, expected.device)
    field(C.LAYOUT, actual.layout, expected.layout)
    field(C.CONJUGATE_BIT, actual.conj, expected.conj)
    field(C.NEGATIVE_BIT, actual.neg, expected.neg)
    field(C.INFERENCE_TENSOR, actual.inference, expected.inference)
    field(C.SHAPE, actual.shape, expected.shape)
    if strides == "all":  # expect.strides: all, as upstream's assertEqual(out.stride(), ref.stride())
        field(C.STRIDE_EVERY_DIM, actual.stride, expected.stride)
    elif strides:
        field(C.STRIDE, significant_strides(actual.shape, actual.stride),
              significant_strides(expected.shape, expected.stride))
    if strides:
        field(C.STORAGE_OFFSET, actual.storage_offset, expected.storage_offset)
    if grad_fields:
        field(C.REQUIRES_GRAD, actual.requires_grad, expected.requires_grad)
        field(C.IS_LEAF, actual.is_leaf, expected.is_leaf)
        field(C.RETAINS_GRAD, actual.retains_grad, expected.retains_grad)
    if out:
        return out
    out += compare_values(where, actual.values, expected.values, tol, of=of)
    if storage and not out and actual.storage_values is not None and expected.storage_values is not None:
        if actual.storage_values.shape != expected.storage_values.shape:
            field(C.STORAGE_SIZE, tuple(actual.storage_values.shape), tuple(expected.storage_values.shape))
        else:
            out += compare_values(where, actual.storage_values, expected.storage_values, tol,
                                  C.STORAGE_CONTENTS, of=of)
    for name in sorted(set(actual.inner) | set(expected.inner)):
        a, e = actual.inner.get(name), expected.inner.get(name)
        if a is None or e is None:
            field(C.INNER_TENSORS, sorted(actual.inner), sorted(expected.inner))
            break
        out += compare_state(f"{where}.{name}", a, e, tol, strides=strides, grad_fields=False, storage=storage,
                             of=dataclasses.replace(of, inner=(*of.inner, name)))
    return out


def compare_plain(where: str, actual: Any, expected: Any, tol: Tolerance, *,
                  of: About = NOTHING_IN_PARTICULAR) -> list[Mismatch]:
    """A non-tensor output (Python number, None, string, NumPy array...); a nested int (a jagged size
    returned) by its form, as `dims` shows it."""
    if isinstance(actual, torch.SymInt) and isinstance(expected, torch.SymInt):
        actual, expected = dims((actual,))[0], dims((expected,))[0]
    # the type is judged every time, not only where it differs: a reproducer reads what the core judges
    m = C.TYPE.judged(where, type(actual), type(expected), show=lambda t: t.__name__, of=of)
    if m is None:
        m = C.VALUE.judged(where, actual, expected, tol, show=show_plain, of=of)
    return [] if m is None else [m]


def show_plain(value: Any) -> str:
    """A plain value as `short` shows it; a NumPy array on one line, with its dtype."""
    if not is_ndarray(value):
        return short(value)
    text = f"{' '.join(repr(value).split())} (dtype {value.dtype}, shape {tuple(value.shape)})"
    return text if len(text) <= 160 else text[:157] + "..."


@dataclass(frozen=True)
class InputChange:
    """What a call did to one input: compared by default as 'did it happen', not 'how much'."""

    storage_swapped: bool
    version_delta: int | None


def input_change(before: TensorState, after: TensorState) -> InputChange:
    delta = None
    if before.version is not None and after.version is not None:
        delta = after.version - before.version
    return InputChange(storage_swapped=not same_storage(before, after), version_delta=delta)


def compare_change(where: str, actual: InputChange, expected: InputChange, version: VersionMode, *,
                   of: About = NOTHING_IN_PARTICULAR) -> list[Mismatch]:
    found = [C.STORAGE_SWAPPED.judged(where, actual.storage_swapped, expected.storage_swapped,
                                                      show=str, of=of)]
    a, e = actual.version_delta, expected.version_delta
    if version != "ignore" and a is not None and e is not None:
        if version == "exact":
            found.append(C.VERSION_DELTA.judged(where, a, e, show=str, of=of))
        else:
            found.append(C.VERSION_MOVED.judged(where, a, e, show=lambda d: f"{d > 0} (delta {d})", of=of))
    return [m for m in found if m is not None]


def compare_relations(actual: Sequence[Relation | None], expected: Sequence[Relation | None]) -> list[Mismatch]:
    """Aliasing of each output. See Note [View-ness of outputs]."""
    out: list[Mismatch | None] = []
    for k, (a, e) in enumerate(zip(actual, expected, strict=False)):
        if a is None or e is None:
            continue
        where = f"out[{k}]"
        of = About("output", where)
        out.append(C.IS_THE_INPUT_OBJECT.judged(where, a.is_input, e.is_input, of=of))
        if e.requires_grad:
            out.append(C.VIEW_OF.judged(where, a.view_of_input, e.view_of_input, of=of))
        out.append(C.SHARES_STORAGE_WITH.judged(where, list(a.shares_storage_with),
                                                        list(e.shares_storage_with), of=of))
    return [m for m in out if m is not None]


def compare_ambient(actual: Ambient, expected: Ambient) -> list[Mismatch]:
    found = [C.GRAD_MODE.judged("after the call", actual.grad_enabled, expected.grad_enabled, show=str),
             C.INFERENCE_MODE.judged("after the call", actual.inference_mode, expected.inference_mode,
                                             show=str),
             C.AUTOCAST.judged("after the call", actual.autocast, expected.autocast),
             C.DISPATCH_KEYS.judged("after the call", actual.dispatch, expected.dispatch, show=show_keys)]
    return [m for m in found if m is not None]


def matches_exception(exc: BaseException | None, type_name: str, pattern: str | None) -> bool:
    if exc is None:
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    if type_name not in names:
        return False
    return pattern is None or re.search(pattern, str(exc)) is not None
