"""What `validate` checks with torch at hand, beyond the schema: the classes block runs, every
class a case names resolves to the right kind of class, every config flag and backend exists
here (and the packages a backend imports).

The schema (conformance/schema) checks what the file says; these checks what the build makes of
it, so they run only where torch imports, and report like the schema: `path:line: field: message`.
A run makes the same checks (but for backends and config flags: one this build lacks is a skip
there, with its reason, as another build may have it) when it collects the case, so that a wrong
class is a line error, not a failed item.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

import torch

from conformance.core.build import load_classes, resolve_class
from conformance.core.compile import backend_missing, config_flag
from conformance.core.entry import NONE, WITHOUT_DYNAMO
from conformance.core.mismatch import CaseBroken, FeatureUnavailable
from conformance.data.loader import CaseError, LoadedCase, field_name
from conformance.data.selection import device_error, registered_backends
from conformance.schema.case import class_refs

CLASSES_SECONDS = 30  # a classes block defines things; one that runs longer is broken


class _TooLong(BaseException):  # past the classes block's own except Exception
    pass


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    """Interrupt the block after `seconds` (main thread only: the checks run outside any item, so
    no --timeout guards them)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _TooLong

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def torch_problems(lc: LoadedCase, *, backends: bool) -> list[CaseError]:
    """`backends`: also report what this build lacks but another may have (a backend, a config
    flag), as validate does; a run skips such items instead."""
    errors: list[CaseError] = []
    try:
        with _time_limit(CLASSES_SECONDS):
            classes = load_classes(lc.classes_source, lc.classes_filename)
    except CaseBroken as exc:
        return [CaseError(lc.display_path, exc.line or lc.line_of("classes"), "classes", str(exc))]
    except _TooLong:
        return [CaseError(lc.display_path, lc.line_of("classes"), "classes",
                          f"the classes block ran for more than {CLASSES_SECONDS} s; it should only define things")]
    for i, device in enumerate(lc.case.devices or ()):
        why = device_error(device)
        if why is not None:
            errors.append(CaseError(lc.display_path, lc.line_of("devices", i), f"devices[{i}]", why))
    bases: dict[str, tuple[type, str]] = {
        "subclass": (torch.Tensor, "subclass"), "module": (torch.nn.Module, "module"),
        "optimizer": (torch.optim.Optimizer, "optimizer"),
    }
    for loc, ref in class_refs(lc.case):
        kind = str(loc[-2])
        base, what = bases.get(kind, bases["subclass"])  # subclass specs nest under args/a/b/parameters
        try:
            resolve_class(ref, classes, base, what)
        except CaseBroken as exc:
            errors.append(CaseError(lc.display_path, lc.line_of(*loc), field_name(loc), str(exc)))
    for key in lc.case.config:
        try:
            config_flag(key)
        except CaseBroken as exc:
            errors.append(CaseError(lc.display_path, lc.line_of("config", key), f"config.{key}", str(exc)))
        except FeatureUnavailable as exc:
            if backends:
                errors.append(CaseError(lc.display_path, lc.line_of("config", key), f"config.{key}",
                                        f"{exc}; a run skips the case with this reason"))
    if backends:
        errors += _backend_problems(lc)
    return errors


def _backend_problems(lc: LoadedCase) -> list[CaseError]:

    errors: list[CaseError] = []
    known = registered_backends()
    for i, name in enumerate(lc.case.backends):
        if name in (*WITHOUT_DYNAMO, NONE):
            continue
        if name not in known:
            errors.append(CaseError(lc.display_path, lc.line_of("backends", i), f"backends[{i}]",
                                    f"{name!r} is not a torch.compile backend registered on this build "
                                    f"(registered: {', '.join(known)}); a run skips it with this reason"))
        elif (missing := backend_missing(name)) is not None:
            errors.append(CaseError(lc.display_path, lc.line_of("backends", i), f"backends[{i}]",
                                    f"{missing}; a run skips it with this reason"))
    return errors


def checker(*, backends: bool) -> Callable[[LoadedCase], list[CaseError]]:
    def check(lc: LoadedCase) -> list[CaseError]:
        return torch_problems(lc, backends=backends)

    return check
