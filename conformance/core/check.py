"""A whole variant: every pass and every call, eager against compiled, with fresh inputs each.

`run_passes` is the loop the harness runs and a full reproducer runs; `Hooks` is what a caller
adds around it (the harness: region recording, source capture, the probe, timing; the
self-check: faults), without the loop knowing of any of it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.core.build import BuiltInputs, CallPoint, Spec, build_inputs, call_points
from conformance.core.call import (
    Side,
    backward,
    call,
    compare_call,
    eager_must_not_raise,
    mark_dynamic,
    program_raised,
    snapshot,
    write_through,
)
from conformance.core.compile import CountingBackend, fresh_compile_caches, isolated, make_compiled, make_function
from conformance.core.entry import AOT_FUNCTION
from conformance.core.mismatch import Mismatch

# How a reproducer script exits (the short and the full one alike); 1 and 2 are Python's own
# (a crash, a bad command line), so they never mean a verdict.
REPRO_MATCHES, REPRO_DIFFERS, REPRO_CANNOT_TELL = 0, 3, 4


class Hooks:
    """Extension points of the loop; every default does nothing."""

    def program_exception(self, exc: BaseException) -> bool:
        """Whether an exception out of the program is the program's own (else it stops the run)."""
        return program_raised(exc)

    def counting(self, inner: Callable[..., Any], aot: bool) -> CountingBackend:
        """The backend wrapper that counts (and may describe) the graphs compiled."""
        return CountingBackend(inner)

    def compiled(self, compiled: Callable[..., Any]) -> Callable[..., Any]:
        """The compiled callable the loop calls (a seeded fault wraps it)."""
        return compiled

    def around_pass(self, index: int) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def pass_done(self, index: int, counter: CountingBackend) -> None:
        """After pass `index` (0 cold, 1 warm), with the counter of its compiles."""

    def calling(self, counter: CountingBackend, inputs: BuiltInputs | None) -> None:
        """Right before the compiled call (its inputs) and right after it (None)."""

    def timed(self, bucket: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def spent(self, bucket: str, seconds: float) -> None:
        """Time measured by the loop itself (the compiled call: `compile` or `compiled_calls`)."""


@dataclass
class Outcome:
    mismatches: list[Mismatch] = field(default_factory=list)
    compile_counts: dict[str, int | None] = field(default_factory=dict)
    calls: int = 0


@dataclass(frozen=True)
class Target:
    """What a variant runs: the program (and where its lines come from) on a device and backend."""

    program: str
    function: str
    filename: str
    device: str
    backend: str
    mode: str
    kiim: bool = False


def compile_count_mismatch(case: Spec, target: Target, pass_name: str, calls: int, count: int) -> Mismatch | None:
    expected = case["expect"]["compiles"]
    if expected is None or target.backend == AOT_FUNCTION or count == expected:
        return None
    return Mismatch("graphs compiled", f"{pass_name} pass over {calls} call(s)", str(expected), str(count),
                    "a recompile per value" if count >= calls > 1 else "", source="expect.compiles")


def run_passes(case: Spec, target: Target, hooks: Hooks | None = None) -> Outcome:
    """Every pass of the variant (a second, with caches warm, where the case asks), isolated."""
    import torch._dynamo

    hooks = hooks or Hooks()
    points = call_points(case)
    warm = case["expect"]["warm_rerun"]
    outcome = Outcome()
    with contextlib.ExitStack() as stack:
        if warm:
            stack.enter_context(fresh_compile_caches())
        stack.enter_context(isolated(case, target.backend))
        for p in range(2 if warm else 1):
            pass_name = "cold" if p == 0 else "warm"
            if p:
                torch._dynamo.reset()
            eager_fn = make_function(target.program, target.function, target.filename)
            compiled, counter = make_compiled(make_function(target.program, target.function, target.filename),
                                              case, target.backend, target.kiim, hooks.counting)
            with hooks.around_pass(p):
                outcome.mismatches += _run_pass(
                    case, target, hooks, eager_fn=eager_fn, compiled=hooks.compiled(compiled), counter=counter,
                    points=points, warm_prefix="warm rerun, " if p else "")
            outcome.calls += len(points)
            outcome.compile_counts[f"{pass_name}_graphs"] = counter.count
            hooks.pass_done(p, counter)
            miscount = compile_count_mismatch(case, target, pass_name, len(points), counter.count)
            if miscount is not None:
                outcome.mismatches.append(miscount)
    return outcome


def _run_pass(case: Spec, target: Target, hooks: Hooks, *, eager_fn: Callable[..., Any], compiled: Callable[..., Any],
              counter: CountingBackend, points: list[CallPoint], warm_prefix: str) -> list[Mismatch]:
    training = target.mode == "training"
    found: list[Mismatch] = []
    for i, point in enumerate(points):
        prefix = warm_prefix + (f"{point.label}: " if len(points) > 1 else "")
        with hooks.timed("build_inputs"):
            e_in = build_inputs(case, target.device, target.mode, point)
            c_in = build_inputs(case, target.device, target.mode, point)
        with hooks.timed("eager"):
            eager = call(eager_fn, e_in, case, hooks.program_exception)
        # a broken case is broken whatever compiled does; do not run it (it might hang or allocate again)
        eager_must_not_raise(eager, case, prefix)
        with hooks.timed("oracles"):
            if eager.exc is None:
                snapshot(eager)
        if target.backend != AOT_FUNCTION:
            mark_dynamic(c_in)
        comp = _compiled_call(case, hooks, compiled, counter, c_in, first=i == 0 and not warm_prefix)
        with hooks.timed("oracles"):
            if comp.exc is None:
                snapshot(comp)
        if training:
            with hooks.timed("eager"):
                if eager.exc is None:
                    backward(eager, case, hooks.program_exception)
            with hooks.timed("compiled_calls"):
                if comp.exc is None:
                    backward(comp, case, hooks.program_exception)
        with hooks.timed("oracles"):
            if case["expect"]["write_through"]:
                for side in (eager, comp):
                    if side.exc is None:
                        write_through(side)
            found += compare_call(eager, comp, case, prefix, training)
    return found


def _compiled_call(case: Spec, hooks: Hooks, compiled: Callable[..., Any], counter: CountingBackend,
                   inputs: BuiltInputs, *, first: bool) -> Side:
    before = counter.count
    hooks.calling(counter, inputs)
    start = time.perf_counter()
    try:
        comp = call(compiled, inputs, case, hooks.program_exception)
    finally:
        hooks.calling(counter, None)
    # a call during which the backend compiled counts as compile time
    hooks.spent("compile" if counter.count > before or first else "compiled_calls", time.perf_counter() - start)
    return comp
