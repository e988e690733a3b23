"""The build's own generated functions, captured while it compiles and exec'd for timing.

Note [Timing the build's generated code]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The build publishes the source of every function it generates (see Note [Capture forms] in
:mod:`conformance.probe.capture`). To time one step in isolation, a program shaped like the row
(so many arguments, aliases, mutations) is compiled once under a capture, the source of the
wanted function (``def _runtime_wrapper(``, ``def unwrap_fn(``...) is picked from what was
captured, whatever artifact name or packaging the build used, and exec'd again here.

The exec'd function is the build's code, byte for byte; only its *free names* (the globals
the build bound next to it: the compiled graph, the epilogues it delegates to, baked types)
are rebound to stubs chosen by the row, so that the step itself dominates the time. Which
names were stubbed is reported with the row. A free name that no stub covers makes the
build column ``unusable`` with that name, never a silent guess. A build that generates no
such function gives ``absent``.
"""

from __future__ import annotations

import builtins
import dis
import re
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.probe.capture import CaptureResult, capture_generated_sources

__all__ = [
    "BuildFunction",
    "capture_sources",
    "exec_generated",
    "find_def",
    "free_names",
]


@dataclass
class BuildFunction:
    """The outcome for one generated function: ``measured`` (fn set), ``absent`` or ``unusable``."""

    status: str
    source: str | None = None
    artifact: str | None = None
    fn: Callable[..., Any] | None = None
    stubbed: tuple[str, ...] = ()
    reason: str = ""
    seen: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "artifact": self.artifact,
            "stubbed": list(self.stubbed),
            "reason": self.reason,
            "source": self.source,
            "artifacts_seen": list(self.seen),
        }


def capture_sources(program: Callable[[], Any]) -> CaptureResult:
    """Run ``program`` (which compiles and calls something) under a capture."""
    with capture_generated_sources(warn=False) as cap:
        program()
    return cap


def find_def(cap: CaptureResult, def_name: str) -> tuple[str, str] | None:
    """``(artifact name, source)`` of the first captured function named ``def_name``."""
    pattern = re.compile(rf"^\s*def {re.escape(def_name)}\(", re.MULTILINE)
    for art in cap.artifacts:
        if pattern.search(art.source):
            return art.name, art.source
    return None


def _globals_of(code: types.CodeType, out: dict[str, None]) -> None:
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL") and isinstance(ins.argval, str):
            out.setdefault(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _globals_of(const, out)


def free_names(source: str, def_name: str) -> tuple[str, ...]:
    """Global names the function ``def_name`` in ``source`` reads (builtins excluded)."""
    module = compile(source, "<generated>", "exec")
    fn_code = next(
        (c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == def_name), None
    )
    if fn_code is None:
        raise ValueError(f"no function {def_name!r} in the source")
    found: dict[str, None] = {}
    _globals_of(fn_code, found)
    return tuple(n for n in found if not hasattr(builtins, n))




def exec_generated(
    source: str,
    def_name: str,
    stubs: Mapping[str, Any],
    patterns: Iterable[tuple[str, Any]] = (),
    *,
    artifact: str | None = None,
) -> BuildFunction:
    """Exec the build's ``source`` and return its ``def_name`` with free names stubbed.

    ``stubs`` binds exact names; ``patterns`` binds names matching a regex (``fullmatch``),
    e.g. ``(r"_subclass_type_\\d+", TwoTensor)`` for the numbered globals a build bakes.
    """
    try:
        names = free_names(source, def_name)
    except (SyntaxError, ValueError) as exc:
        return BuildFunction("unusable", source, artifact, reason=f"does not compile here: {exc}")
    pats = [(re.compile(p), v) for p, v in patterns]
    namespace: dict[str, Any] = {"__name__": "torch_conformance_bench_generated"}
    stubbed = []
    for name in names:
        if name in stubs:
            namespace[name] = stubs[name]
        else:
            hit = next((v for p, v in pats if p.fullmatch(name)), _MISSING)
            if hit is _MISSING:
                return BuildFunction("unusable", source, artifact,
                                     reason=f"free name {name!r} has no stub in this benchmark")
            namespace[name] = hit
        if name != "torch":
            stubbed.append(name)
    exec(compile(source, f"<build:{artifact or def_name}>", "exec"), namespace)
    fn = namespace[def_name]
    return BuildFunction("measured", source, artifact, fn=fn, stubbed=tuple(stubbed))


_MISSING = object()
