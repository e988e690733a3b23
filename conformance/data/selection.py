"""Checking a run's filters (--devices, --backends, --modes) against what this build knows.

A filter value that names nothing (a typo such as `indcutor`, or `gpu`) would silently select
no item; it is a usage error instead, naming the valid values. A name the harness declares itself
(the default devices and backends, its own entry points) selects the items that name it, so it is
not looked up: the run's process then never imports torch for the check (a few seconds, the largest
part of its start-up). Whether this build has it is observed when the items run, as in a run
without the filter: an item on a backend the build does not register is a skip that says so.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from conformance.core.entry import DEFAULT_BACKENDS, DYNAMO_EAGER, NONE, WITHOUT_DYNAMO
from conformance.schema import MODES
from conformance.schema.common import DEFAULT_DEVICES

OWN_ENTRIES = (*WITHOUT_DYNAMO, NONE)  # entry points that are not torch.compile backends
DECLARED_BACKENDS = (*DEFAULT_BACKENDS, DYNAMO_EAGER, *OWN_ENTRIES)


def registered_backends() -> tuple[str, ...]:
    """Every torch.compile backend name registered on this build (debug ones included)."""
    import torch._dynamo  # lazy: start-up

    try:
        names = torch._dynamo.list_backends(exclude_tags=())
    except TypeError:  # a build whose list_backends takes no exclude_tags
        names = torch._dynamo.list_backends()
    return tuple(sorted(set(names) | {DYNAMO_EAGER}))


def _suggest(value: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(value, choices, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def device_error(device: str) -> str | None:
    """Why `device` is not a device string this torch build knows, or None."""
    import torch  # lazy: start-up

    try:
        torch.device(device)
    except (RuntimeError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"{device!r} is not a device this torch build knows ({first}); write e.g. cpu, cuda or cuda:1"
    return None


def check_selection(devices: Sequence[str], backends: Sequence[str], modes: Sequence[str]) -> list[str]:
    """Usage errors for filter values that select nothing, each naming the valid values."""
    errors = []
    for mode in modes:
        if mode not in MODES:
            errors.append(f"--modes {mode}: not a mode; choose from {', '.join(MODES)}{_suggest(mode, MODES)}")
    asked = [b for b in backends if b not in DECLARED_BACKENDS]
    if asked:
        known = (*registered_backends(), *OWN_ENTRIES)
        for backend in asked:
            if backend not in known:
                errors.append(f"--backends {backend}: not a torch.compile backend registered on this build, nor "
                              f"{' or '.join(OWN_ENTRIES)}{_suggest(backend, known)}; registered: "
                              f"{', '.join(registered_backends())}")
    for device in (d for d in devices if d not in DEFAULT_DEVICES):
        why = device_error(device)
        if why is not None:
            errors.append(f"--devices {device}: {why}")
    return errors
