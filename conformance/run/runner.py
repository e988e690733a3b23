"""Run one case variant and make its one record: the library entry point of the harness.

`run_variant(loaded_case, variant, options) -> ResultRecord` never raises for a case or build
problem. It composes small parts, each with one job:

* conformance/core/loop.py runs every pass and call, eager against compiled (the same loop a
  full reproducer runs), with the harness's `_Harness` callbacks around it:
* conformance/run/compiles.py records each compile's region for the probe;
* conformance/probe/capture.py captures the generated sources of the cold pass, and
  conformance/run/probe_driver.py compares them with the reference;
* conformance/run/status.py turns mismatches and known failures into the status;
* conformance/run/extensions.py lets the self-check change a run from outside.
"""

from __future__ import annotations

import contextlib
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.core.build import BuiltInputs
from conformance.core.compile import CountingBackend
from conformance.core.loop import LoopCallbacks, Outcome, Target, run_passes
from conformance.core.mismatch import CaseBroken, FeatureUnavailable, exception_summary
from conformance.core.state import ambient, restore_ambient
from conformance.data.devices import device_status
from conformance.data.expectations import BuildFacts
from conformance.data.loader import LoadedCase
from conformance.data.variants import Variant
from conformance.probe.capture import CaptureResult, capture_generated_sources
from conformance.probe.generated import judge
from conformance.pytest_plugin.guard import program_exception
from conformance.results import GeneratedRecord, MismatchRecord, ProbeRecord, ResultRecord
from conformance.run.compiles import CompileCounter, counting
from conformance.run.extensions import ExtensionNotApplicable, RunExtension
from conformance.run.fingerprint import build_fingerprint, device_fingerprint
from conformance.run.probe_driver import run_probe
from conformance.run.status import decide, declare, strict_mismatches
from conformance.schema import KnownFailure


@dataclass
class RunOptions:
    strict_internals: bool = False
    probe: bool = True
    extra_known_failures: Callable[[str], tuple[tuple[KnownFailure, str], ...]] | None = None
    extensions: Sequence[RunExtension] = ()


@dataclass
class Timer:
    spent: dict[str, float] = field(default_factory=dict)

    @contextlib.contextmanager
    def __call__(self, bucket: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(bucket, time.perf_counter() - start)

    def add(self, bucket: str, seconds: float) -> None:
        self.spent[bucket] = self.spent.get(bucket, 0.0) + seconds


class _Harness(LoopCallbacks):
    """What the harness adds around the core loop: timing, regions, capture and the probe of
    the cold pass, and the run's extensions (see conformance/core/loop.py)."""

    def __init__(self, lc: LoadedCase, variant: Variant, options: RunOptions, timer: Timer) -> None:
        self.lc, self.variant, self.options, self.timer = lc, variant, options, timer
        self.capture: CaptureResult | None = None
        self.probes = ProbeRecord()
        self.generated: tuple[GeneratedRecord, ...] = judge(
            lc.case.generated, None, variant.backend_label, variant.mode, variant.device)
        self.classes: dict[str, Any] = {}

    def program_exception(self, exc: BaseException) -> bool:
        return program_exception(exc)

    def counting(self, inner: Callable[..., Any], aot: bool) -> CountingBackend:
        return counting(inner, aot)

    def compiled(self, compiled: Callable[..., Any]) -> Callable[..., Any]:
        for extension in self.options.extensions:
            compiled = extension.compiled(compiled)
        return compiled

    @contextlib.contextmanager
    def around_pass(self, index: int) -> Iterator[None]:
        if index or not self.options.probe:
            yield
            return
        with capture_generated_sources(warn=False) as capture:
            self.capture = capture
            try:
                yield
            finally:
                self.generated = judge(self.lc.case.generated, capture, self.variant.backend_label, self.variant.mode,
                                       self.variant.device)

    def loaded(self, classes: dict[str, Any]) -> None:
        self.classes = classes

    def pass_done(self, index: int, counter: CountingBackend) -> None:
        if index == 0 and self.capture is not None and isinstance(counter, CompileCounter):
            with self.timer("probe"):
                self.probes = run_probe(self.lc, self.variant, self.capture, counter, self.classes)

    def calling(self, counter: CountingBackend, inputs: BuiltInputs | None) -> None:
        if isinstance(counter, CompileCounter):
            counter.current = inputs

    def timed(self, bucket: str) -> contextlib.AbstractContextManager[None]:
        return self.timer(bucket)

    def spent(self, bucket: str, seconds: float) -> None:
        self.timer.add(bucket, seconds)


def target_of(lc: LoadedCase, variant: Variant) -> Target:
    return Target(lc.program_source, lc.case.function_name, lc.program_filename, variant.device, variant.backend,
                  variant.mode, variant.kiim, lc.classes_source, lc.classes_filename, tuple(lc.case.compile.closure))


def build_facts(variant: Variant) -> BuildFacts:
    return BuildFacts(torch.__version__, variant.device, variant.backend_label, variant.mode)


def _base_fields(lc: LoadedCase, variant: Variant, nodeid: str) -> dict[str, Any]:
    case = lc.case
    return {
        "case_id": lc.id, "variant": variant.label, "nodeid": nodeid, "behavior": case.behavior,
        "device": variant.device, "backend": variant.backend_label, "mode": variant.mode, "summary": case.summary,
        "upstream": case.upstream, "case_file": lc.display_path, "case_sha256": lc.sha256,
        "fingerprint": {**build_fingerprint(), **device_fingerprint(variant.device)},
    }


def error_record(lc: LoadedCase, variant: Variant, reason: str, nodeid: str = "") -> ResultRecord:
    """An `error` record for an item the runner could not finish (e.g. a timeout)."""
    return ResultRecord(status="error", reason=reason, **_base_fields(lc, variant, nodeid))


def _execute(lc: LoadedCase, variant: Variant, harness: _Harness) -> Outcome:
    """The variant's passes, with the run's extensions open around them and the build's warnings kept."""
    with contextlib.ExitStack() as stack:
        for extension in harness.options.extensions:
            stack.enter_context(extension.around_variant())
        return run_passes(lc.data, target_of(lc, variant), harness)


def run_variant(lc: LoadedCase, variant: Variant, options: RunOptions | None = None,
                nodeid: str = "") -> ResultRecord:
    """One (case, variant) -> one result record. Never raises for a case or build problem."""
    options = options or RunOptions()
    timer = Timer()
    start = time.perf_counter()
    caught: list[warnings.WarningMessage] = []

    def done(status: str, **kw: Any) -> ResultRecord:
        timer.spent["total"] = time.perf_counter() - start
        seen = dict.fromkeys(f"{w.category.__name__}: {w.message}"[:300] for w in caught)
        return ResultRecord(status=status, durations=timer.spent, warnings=tuple(seen)[:10],
                            **_base_fields(lc, variant, nodeid), **kw)

    dev = device_status(variant.device)
    if not dev.available:
        return done("skip", reason=f"device {variant.device}: {dev.reason}", skip_kind="device")
    harness = _Harness(lc, variant, options, timer)
    modes = ambient()  # an item leaves the worker's modes as it found them, whatever its actions did
    try:
        # the build's warnings are data for the record, never errors of ours (pytest may run
        # with filterwarnings=error)
        with warnings.catch_warnings(record=True) as log:
            warnings.simplefilter("always")
            try:
                outcome = _execute(lc, variant, harness)
            finally:
                caught.extend(log)
                restore_ambient(modes)
    except FeatureUnavailable as exc:
        return done("skip", reason=str(exc), skip_kind="feature")
    except ExtensionNotApplicable as exc:
        return done("skip", reason=str(exc), skip_kind="fault")
    except CaseBroken as exc:
        return done("error", reason=f"case error: {exc}")
    except BaseException as exc:
        if not program_exception(exc):
            raise
        tb = "".join(traceback.format_exception(exc)[-6:])
        return done("error", reason=f"harness error: {exception_summary(exc)}\n{tb}")
    facts = build_facts(variant)
    probes = harness.probes
    if probes is not None:
        probes = declare(probes, [(d, f"{lc.display_path}:{lc.line_of('divergences', i)}")
                                  for i, d in enumerate(lc.case.divergences)], facts)
    kw: dict[str, Any] = {"compile_counts": outcome.compile_counts, "calls": outcome.calls, "probes": probes,
                          "recompiles": outcome.recompiles, "generated": harness.generated}
    mismatches = list(outcome.mismatches)
    if options.strict_internals and probes is not None:
        mismatches += strict_mismatches(probes)
    known = [(k, f"{lc.display_path}:{lc.line_of('known_failures', i)}") for i, k in enumerate(lc.case.known_failures)]
    if options.extra_known_failures is not None:
        known += list(options.extra_known_failures(lc.id))
    verdict = decide(mismatches, known, facts)
    covered = verdict.covered_by or (None,) * len(mismatches)
    records = tuple(MismatchRecord.of(m, i) for m, i in zip(mismatches, covered, strict=True))
    return done(verdict.status, reason=verdict.reason, known_failures=verdict.known_failures, mismatches=records,
                allowed=tuple(f"{a}: {m.message()}" for a, m in outcome.allowed), raised=tuple(outcome.raised), **kw)
