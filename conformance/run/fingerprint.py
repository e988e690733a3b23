"""The build fingerprint carried by every result record."""

from __future__ import annotations

import datetime as _dt
import functools
import platform
import sys
from typing import Any

import conformance
from conformance.data.devices import device_type


@functools.cache
def build_fingerprint() -> dict[str, Any]:
    """What identifies the torch build and the machine; computed once per process."""
    import torch  # lazy: start-up

    version = getattr(torch, "version", None)
    return {
        "torch_version": torch.__version__,
        "torch_git": getattr(version, "git_version", None),
        "cuda": getattr(version, "cuda", None),
        "hip": getattr(version, "hip", None),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "harness_version": conformance.__version__,
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "argv0": sys.argv[0].rsplit("/", 1)[-1] if sys.argv else "",
    }


@functools.cache
def device_fingerprint(device: str) -> dict[str, Any]:
    """Name and capability of the device an item ran on (never initialises an absent device)."""
    import torch  # lazy: start-up

    dtype = device_type(device)
    info: dict[str, Any] = {"device": device, "device_name": platform.processor() or platform.machine()}
    if dtype == "cpu":
        return info
    module = getattr(torch, dtype, None)
    try:
        if module is not None and module.is_available():
            index = int(device.partition(":")[2] or 0)
            name_fn = getattr(module, "get_device_name", None)
            cap_fn = getattr(module, "get_device_capability", None)
            info["device_name"] = name_fn(index) if name_fn else dtype
            if cap_fn is not None:
                info["capability"] = ".".join(str(x) for x in cap_fn(index))
        else:
            info["device_name"] = None
    except Exception as exc:  # a broken driver is reported, not raised
        info["device_error"] = repr(exc)
    return info
