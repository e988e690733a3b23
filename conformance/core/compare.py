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
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from conformance.core.mismatch import Mismatch, Tolerance, short
from conformance.core.state import Ambient, Relation, TensorState, same_storage


def compare_values(
    where: str, actual: torch.Tensor | None, expected: torch.Tensor | None, tol: Tolerance, check: str = "values",
    *, role: str = "", subject: str = "", inner: tuple[str, ...] = (),
) -> list[Mismatch]:
    """`role`, `subject`, `inner`: what the tensor is (see Mismatch)."""
    about = About(role, subject, inner)
    if actual is None or expected is None:
        if (actual is None) != (expected is None):
            return [about.on(Mismatch(check, where, "readable" if expected is not None else "unreadable",
                             "readable" if actual is not None else "unreadable"))]
        return []
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return []  # reported by the metadata checks
    rtol, atol = tol.rtol, tol.atol
    if (rtol is None) != (atol is None):  # assert_close takes both or neither
        rtol, atol = rtol or 0.0, atol or 0.0
    try:
        torch.testing.assert_close(
            actual.cpu(),
            expected.cpu(),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            check_device=False,
            check_stride=False,
        )
    except AssertionError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        detail = "; ".join(lines[:4])
        return [about.on(Mismatch(check, where, short(expected.flatten()[:8].tolist()),
                                  short(actual.flatten()[:8].tolist()), detail))]
    return []


def compare_state(
    where: str,
    actual: TensorState,
    expected: TensorState,
    tol: Tolerance,
    *,
    strides: bool = True,
    grad_fields: bool = True,
    storage: bool = True,
    role: str = "",
    subject: str = "",
    inner: tuple[str, ...] = (),
) -> list[Mismatch]:
    """Metadata, values (and the whole storage's values) of one tensor, recursing into subclasses."""
    out: list[Mismatch] = []
    about = About(role, subject, inner)

    def field(name: str, a: Any, e: Any) -> None:
        if a != e:
            out.append(about.on(Mismatch(name, where, short(e), short(a))))

    field("type", actual.type, expected.type)
    field("dtype", actual.dtype, expected.dtype)
    field("device", actual.device, expected.device)
    field("shape", actual.shape, expected.shape)
    if strides:
        field("stride", actual.stride, expected.stride)
        field("storage_offset", actual.storage_offset, expected.storage_offset)
    if grad_fields:
        field("requires_grad", actual.requires_grad, expected.requires_grad)
        field("is_leaf", actual.is_leaf, expected.is_leaf)
    if out:
        return out
    out += compare_values(where, actual.values, expected.values, tol, role=role, subject=subject, inner=inner)
    if storage and not out and actual.storage_values is not None and expected.storage_values is not None:
        if actual.storage_values.shape != expected.storage_values.shape:
            field("storage size", tuple(actual.storage_values.shape), tuple(expected.storage_values.shape))
        else:
            out += compare_values(where, actual.storage_values, expected.storage_values, tol, "storage contents",
                                  role=role, subject=subject, inner=inner)
    for name in sorted(set(actual.inner) | set(expected.inner)):
        a, e = actual.inner.get(name), expected.inner.get(name)
        if a is None or e is None:
            out.append(about.on(Mismatch("inner tensors", where, short(sorted(expected.inner)),
                                         short(sorted(actual.inner)))))
            break
        out += compare_state(f"{where}.{name}", a, e, tol, strides=strides, grad_fields=False, storage=storage,
                             role=role, subject=subject, inner=(*inner, name))
    return out


def compare_plain(where: str, actual: Any, expected: Any, tol: Tolerance, *, role: str = "",
                  subject: str = "") -> list[Mismatch]:
    """A non-tensor output (Python number, None, string...)."""
    about = About(role, subject)
    if type(actual) is not type(expected):
        return [about.on(Mismatch("type", where, type(expected).__name__, type(actual).__name__))]
    if isinstance(expected, float) and isinstance(actual, float):
        rtol = tol.rtol if tol.rtol is not None else 1.3e-6
        atol = tol.atol if tol.atol is not None else 1e-5
        both_nan = math.isnan(actual) and math.isnan(expected)
        if not (abs(actual - expected) <= atol + rtol * abs(expected) or both_nan):
            return [about.on(Mismatch("value", where, short(expected), short(actual)))]
        return []
    if actual != expected:
        return [about.on(Mismatch("value", where, short(expected), short(actual)))]
    return []


@dataclass(frozen=True)
class About:
    """What tensor a check read (see Mismatch): placed on each mismatch the check makes."""

    role: str = ""
    subject: str = ""
    inner: tuple[str, ...] = ()

    def on(self, m: Mismatch) -> Mismatch:
        return dataclasses.replace(m, role=self.role, subject=self.subject, inner=self.inner)


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


def compare_change(where: str, actual: InputChange, expected: InputChange, version: str, *, role: str = "",
                   subject: str = "") -> list[Mismatch]:
    out = []
    about = About(role, subject)
    if actual.storage_swapped != expected.storage_swapped:
        out.append(about.on(Mismatch("storage swapped (set_)", where, str(expected.storage_swapped),
                            str(actual.storage_swapped))))
    if version != "ignore" and actual.version_delta is not None and expected.version_delta is not None:
        if version == "exact":
            if actual.version_delta != expected.version_delta:
                out.append(about.on(Mismatch("_version delta", where, str(expected.version_delta),
                                             str(actual.version_delta))))
        elif (actual.version_delta > 0) != (expected.version_delta > 0):
            out.append(about.on(Mismatch("_version moved", where,
                                         f"{expected.version_delta > 0} (delta {expected.version_delta})",
                                         f"{actual.version_delta > 0} (delta {actual.version_delta})")))
    return out


def compare_relations(actual: Sequence[Relation | None], expected: Sequence[Relation | None]) -> list[Mismatch]:
    """Aliasing of each output. See Note [View-ness of outputs]."""
    out = []
    for k, (a, e) in enumerate(zip(actual, expected, strict=False)):
        if a is None or e is None:
            continue
        where = f"out[{k}]"
        about = About("output", where)
        if a.is_input != e.is_input:
            out.append(about.on(Mismatch("is the input object", where, short(e.is_input), short(a.is_input))))
        if e.requires_grad and (
            (a.view_of_input is None) != (e.view_of_input is None)
            or (a.view_of_input != e.view_of_input and "<intermediate>" not in (a.view_of_input, e.view_of_input))
        ):
            out.append(about.on(Mismatch("view of (_base)", where, short(e.view_of_input), short(a.view_of_input))))
        if a.shares_storage_with != e.shares_storage_with:
            out.append(about.on(Mismatch("shares storage with", where, short(list(e.shares_storage_with)),
                                         short(list(a.shares_storage_with)))))
    return out


def compare_ambient(actual: Ambient, expected: Ambient) -> list[Mismatch]:
    out = []
    if actual.grad_enabled != expected.grad_enabled:
        out.append(Mismatch("grad mode", "after the call", str(expected.grad_enabled), str(actual.grad_enabled)))
    if actual.inference_mode != expected.inference_mode:
        out.append(
            Mismatch("inference mode", "after the call", str(expected.inference_mode), str(actual.inference_mode))
        )
    if actual.autocast != expected.autocast:
        out.append(Mismatch("autocast", "after the call", short(expected.autocast), short(actual.autocast)))
    return out


def matches_exception(exc: BaseException | None, type_name: str, pattern: str | None) -> bool:
    if exc is None:
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    if type_name not in names:
        return False
    return pattern is None or re.search(pattern, str(exc)) is not None
