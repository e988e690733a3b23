"""The checks the harness applies to one variant's program, as the core itself applies them.

A short reproducer compares what the harness compares, no less (a script that checks only the
first mismatch can say MATCHES on a build where another check fails). Which checks apply depends
on the program (its outputs, inputs, gradients, options), so the list is not re-coded here: the
core's own loop runs the program with no compiler on both sides (backend `none`, eager against
eager: every check is judged and agrees) and every judgement it makes is recorded, placed in its
call and phase. A check that the core applies through a new judge or a new place shows up here
without a change to this file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.core import loop as core_loop
from conformance.core.build import BuiltInputs, tensor_entries
from conformance.core.checks import NOTHING_IN_PARTICULAR, Check
from conformance.core.entry import NONE
from conformance.data.loader import LoadedCase
from conformance.data.variants import Variant


@dataclass(frozen=True)
class Applied:
    """One judgement of the harness: the check, what it read (`path`, `role`, `subject`, `inner` as a
    mismatch places them), the call (1-based), the phase (empty, or the one an earlier check of the call
    opened: `Check.phase`) and how the core shows each side (an allowance reads the sides as shown)."""

    check: Check
    path: str
    role: str
    subject: str
    inner: tuple[str, ...]
    call: int
    phase: str
    show: Callable[[Any], str]


@dataclass
class _Recorder(core_loop.LoopCallbacks):
    applied: list[Applied] = field(default_factory=list)
    exprs: dict[int, dict[str, str]] = field(default_factory=dict)  # per call: input tensor -> its expression
    call: int = 0
    warm: bool = False
    judging: bool = False
    phase: str = ""
    inputs: BuiltInputs | None = None

    def around_pass(self, index: int) -> contextlib.AbstractContextManager[None]:
        self.warm, self.call = bool(index), 0
        return contextlib.nullcontext()

    def calling(self, counter: Any, inputs: BuiltInputs | None) -> None:
        if inputs is not None:
            self.inputs = inputs

    @contextlib.contextmanager
    def timed(self, bucket: str) -> Iterator[None]:
        if bucket == "build_inputs":
            self.call += 1
        if bucket != "oracles":
            yield
            return
        if self.inputs is not None and not self.warm:  # the names as they are after the call (optimizer state)
            self.exprs[self.call] = {n: e for n, e, _t in tensor_entries(self.inputs.named)}
        self.judging, self.phase = True, ""
        try:
            yield
        finally:
            self.judging = False

    def record(self, check: Check, path: str, show: Callable[[Any], str], of: Any) -> None:
        if not self.judging or self.warm:  # the warm pass applies the cold pass's checks again
            return
        self.applied.append(Applied(check, path, of.role, of.subject, tuple(of.inner), self.call, self.phase,
                                    show))
        if check.phase:  # the core compares the write-through's states after it
            self.phase = check.phase


@contextlib.contextmanager
def _recording(recorder: _Recorder) -> Iterator[None]:
    """Every `Check.judged` of the core seen by `recorder` (the core declares no observer of its
    judgements: see the report of issue 42 for the hook that would replace this)."""
    original = Check.judged

    def judged(self: Check, where: str, actual: Any, expected: Any, *args: Any, **kwargs: Any) -> Any:
        recorder.record(self, where, kwargs.get("show", repr), kwargs.get("of", NOTHING_IN_PARTICULAR))
        return original(self, where, actual, expected, *args, **kwargs)

    Check.judged = judged  # type: ignore[method-assign]  # restored below; our own class, never torch's
    try:
        yield
    finally:
        Check.judged = original  # type: ignore[method-assign]  # as above


def applied_checks(lc: LoadedCase, variant: Variant) -> tuple[list[Applied], dict[int, dict[str, str]]]:
    """Every judgement the harness makes on this variant's program (on the CPU, eagerly), and per call
    the expression of each input tensor by its name."""
    target = core_loop.Target(program=lc.program_source, function=lc.case.function_name,
                               filename=lc.program_filename, device="cpu", backend=NONE, mode=variant.mode,
                               classes=lc.classes_source, classes_filename=lc.classes_filename,
                               closure=tuple(lc.case.compile.closure))
    recorder = _Recorder()
    with torch.random.fork_rng(devices=[]), _recording(recorder):
        core_loop.run_passes(lc.data, target, recorder)
    return recorder.applied, recorder.exprs
