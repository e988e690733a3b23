"""Functions a short reproducer carries as its own source (short.py pastes them, without their
annotations and docstrings, a check named `C.<CHECK>.id` written as its id): how one side's
observations are made and how two sides are judged.

They run in the script, whose globals they read: OBSERVE (check -> how a tensor shows it, from
each check's `observe`), JUDGES (check -> the core's judge), ALLOWED (check -> what the core's
allowances accept, on the sides as the core shows them), SHOW (check -> that show) and TOL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from conformance.core.checks import C
from conformance.core.compare import matches_exception
from conformance.core.mismatch import short
from conformance.core.state import refusal

OBSERVE: dict[str, Callable[[Any], Any]] = {}
JUDGES: dict[str, Callable[[Any, Any, Any], str | None]] = {}
ALLOWED: dict[str, tuple[Callable[[str, str], bool], ...]] = {}
SHOW: dict[str, Callable[[Any], str]] = {}
TOL: Any = None


def look(t: Any, *checks: str) -> dict[str, Any]:
    """What one side shows of `t` for each check: a copy, so that later calls leave it as it was."""
    seen: dict[str, Any] = {}
    for check in checks:
        try:
            value = OBSERVE[check](t)
        except Exception as exc:  # a view whose base changed in place may refuse: the refusal is what it shows
            value = refusal(exc)
        seen[check] = value.clone() if isinstance(value, torch.Tensor) else value
    return seen


def observed(get: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`get()`, or what reaching its tensor raised (an output or inner tensor that this side lacks)."""
    try:
        return get()
    except Exception as exc:
        return {"unobservable": raised(exc)}


def raised(exc: BaseException) -> str:
    """The exception's type and first line, and the whole of the one it wraps (a backend's failure says
    only `backend=... raised:`; its cause is the bug)."""
    text = f"{type(exc).__name__}: " + next((s for s in str(exc).splitlines() if s.strip()), "")
    inner = exc.__cause__ or getattr(exc, "inner_exception", None)
    if isinstance(inner, BaseException) and inner is not exc:
        text += f" (caused by {type(inner).__name__}: {str(inner).strip()})"
    return text


def as_declared(exc: BaseException | None, listed: bool, type_name: str, pattern: str | None) -> str | None:
    """What a caller's action whose raise the case declares (a call's `raises` with `at: after`) shows on one
    side: None where it did as declared (raised that where the side is `listed`, nothing where it is not),
    else what it did, against the declaration where the side is listed."""
    if listed and matches_exception(exc, type_name, pattern):
        return None
    if not listed:
        return None if exc is None else raised(exc)
    did = "no exception" if exc is None else raised(exc)
    return f"{did} (the case declares {type_name}" + (f" matching {pattern!r})" if pattern else ")")


def shown(value: Any) -> str:
    return short(value.flatten()[:8].tolist() if isinstance(value, torch.Tensor) else value)


def judged(check: str, compiled: Any, eager: Any) -> str | None:
    """The core's judge of the check: None where compiled agrees with eager (or an allowance accepts
    the difference), else a detail."""
    try:
        detail = JUDGES[check](compiled, eager, TOL)
    except Exception:  # a side that could not be observed shows what it raised: the same or not
        detail = None if repr(compiled) == repr(eager) else ""
    show = SHOW.get(check, str)
    if detail is not None and any(accepts(show(compiled), show(eager)) for accepts in ALLOWED.get(check, ())):
        print(f"allowed: {check} is {show(compiled)}, eager gives {show(eager)} (a documented difference)")
        return None
    return detail


def differences(eager: list[dict[str, dict[str, Any]]], compiled: list[dict[str, dict[str, Any]]],
                pass_name: str = "") -> int:
    """Every check of every call, compiled against eager; each difference printed with both sides."""
    found = 0
    for k, (e_call, c_call) in enumerate(zip(eager, compiled, strict=False)):  # compiled may stop early
        where_call = pass_name + (f"call {k + 1}: " if len(eager) > 1 else "")
        for where, checks in e_call.items():
            if where not in c_call:
                continue  # compiled raised before it: that differs above
            lacking = c_call[where].get("unobservable")
            if lacking is not None and "unobservable" not in checks:  # one line, not one per check it lacks
                found += 1
                print(f"MISMATCH: {where_call}{where}: compiled has none ({lacking}), but eager does")
                continue
            for check, e in checks.items():
                c = c_call[where].get(check)
                detail = judged(check, c, e)
                if detail is not None:
                    found += 1
                    # an exception in full: its innermost message is what a maintainer needs
                    sides = (c, e) if check == C.EXCEPTION.id else (shown(c), shown(e))
                    print(f"MISMATCH: {where_call}{where}: {check} is {sides[0]}, but eager gives {sides[1]}"
                          + (f" ({detail})" if detail else ""))
                    if check == C.GRAD.id:  # one side has no gradient: nothing of it to compare (as the harness)
                        break
    return found
