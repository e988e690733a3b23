"""Device availability, probed at run time (never assumed, never initialising CUDA at import)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from conformance.schema.common import DEFAULT_DEVICES


@dataclass(frozen=True)
class DeviceStatus:
    device: str
    available: bool
    reason: str = ""


def _accelerator_module(device_type: str, torch: object) -> object | None:
    return getattr(torch, device_type, None)


def device_status(device: str, torch_module: object | None = None) -> DeviceStatus:
    """Whether `device` (e.g. 'cpu', 'cuda:1', 'xpu') can run a case here, and if not, why."""
    if torch_module is None:
        import torch as torch_module  # lazy: start-up
    torch = torch_module
    dtype, _, index = device.partition(":")
    if dtype == "cpu":
        return DeviceStatus(device, True)
    module = _accelerator_module(dtype, torch)
    is_available: Callable[[], bool] | None = getattr(module, "is_available", None)
    if is_available is None:
        return DeviceStatus(
            device, False, f"device type {dtype!r} is not known to this torch build (no torch.{dtype})"
        )
    try:
        available = bool(is_available())
    except Exception as exc:  # a broken driver must skip the device, not crash the run
        return DeviceStatus(device, False, f"torch.{dtype}.is_available() raised {exc!r}")
    if not available:
        return DeviceStatus(device, False, f"torch.{dtype}.is_available() is False on this machine")
    if index:
        count_fn: Callable[[], int] | None = getattr(module, "device_count", None)
        count = count_fn() if count_fn is not None else 1
        if int(index) >= count:
            return DeviceStatus(device, False, f"{device} requested but only {count} {dtype} device(s)")
    return DeviceStatus(device, True)


def default_devices(torch_module: object | None = None) -> tuple[str, ...]:
    """cpu and cuda (cuda skips with a reason where absent), plus any other available accelerator."""
    if torch_module is None:
        import torch as torch_module  # lazy: start-up
    extra: list[str] = []
    accelerator = getattr(torch_module, "accelerator", None)
    current: Callable[[], object] | None = getattr(accelerator, "current_accelerator", None)
    if current is not None:
        try:
            dev = current()
        except Exception:  # probing must never fail a run
            dev = None
        dtype = getattr(dev, "type", None)
        if isinstance(dtype, str) and dtype not in DEFAULT_DEVICES:
            extra.append(dtype)
    return (*DEFAULT_DEVICES, *extra)


def device_type(device: str) -> str:
    return device.partition(":")[0]
