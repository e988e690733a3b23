"""The explorer's loop: draw programs (grammar.py), run each as a case through the runner and
oracles every case goes through, confirm and shrink each discrepancy with Hypothesis, and keep
one finding per signature.

Hypothesis drives generation and shrinking. A discrepancy raises an exception of a class made
for its signature, so that Hypothesis shrinks each distinct one on its own
(report_multiple_bugs); once shrunk, a signature is known and no longer raises, and the next
round (a new seed) looks for others. A round ends when Hypothesis has shrunk what it found or
the time budget is spent.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis.reporting
import yaml
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from conformance.core.checks import C
from conformance.core.entry import counts_graphs
from conformance.core.ways import RaiseWays
from conformance.data.loader import CaseLoadError, LoadedCase, load_case
from conformance.data.variants import Variant, variants_of
from conformance.explore.grammar import Program, programs, registry_table
from conformance.explore.layout import EXAMPLES, RUNNING
from conformance.probe.scalar_recompile import NOT_MODELLED, predicted
from conformance.report.causes import cause_of, causes_of
from conformance.results import TORCH_BUCKETS, ResultRecord, undeclared
from conformance.run.probe_driver import scalar_sweep
from conformance.run.runner import RunOptions, run_variant

ROUND_EXAMPLES = 100  # programs per Hypothesis round: each round shrinks what it found before the next
SHRINK_GRACE = 0.25  # of the time budget, for shrinking what the last round found


def signature_of(record: ResultRecord) -> str:
    """What a discrepancy is, apart from the program that shows it: its cause (conformance.report.causes:
    the entry point, the first check that differed, the kind of place and the direction, an
    exception's innermost type and normalised message), so that findings and the corpus's items
    group the same way."""
    cause = cause_of(record)
    return cause.key() if cause is not None else f"{record.status}"


def signatures_of(record: ResultRecord) -> list[str]:
    """Every cause of a record, one per mismatch (a program that shows two causes is two discrepancies),
    but none of a call after one whose compiled side raised where eager did not: what the later
    calls and their caller actions do follows from that (`out` is None there), it is no cause."""
    found = causes_of(record)
    raised = [m.call or 0 for c, m in found if m is not None and c.check == C.EXCEPTION.id
              and c.direction == RaiseWays.RAISES and c.place == "the call"]
    last = min(raised) if raised else None
    keys = list(dict.fromkeys(c.key() for c, m in found
                              if last is None or m is None or m.call is None or m.call <= last))
    return keys or [signature_of(record)]


@dataclass
class Ran:
    """One program's records, and what they say."""

    program: Program
    text: str
    records: list[ResultRecord]
    compiles: int | None = None  # the sweep's compile count the case expects (see sweep_expectation)

    @property
    def rejected(self) -> bool:
        """Eager rejects the program (a negative case: compiled rejected it too, or it is a finding)."""
        return any(r.status == "error" and r.reason.startswith("case error") for r in self.records)

    def discrepancies(self) -> dict[str, ResultRecord]:
        """Each cause of a failing record, and each undeclared divergence of the internals probe on a
        passing one (the reference and the build disagree where the contract holds: a finding of its own)."""
        out: dict[str, ResultRecord] = {}
        for r in self.records:
            if r.status == "fail" or (r.status == "error" and not r.reason.startswith("case error")):
                for sig in signatures_of(r):
                    out.setdefault(sig, r)
            for p in undeclared(r):
                out.setdefault(divergence_signature(p.behavior, p.diff), r)
        return out


def divergence_signature(behavior: str, diff: str) -> str:
    """A probe divergence by behaviour and the first field of the structural form that differs."""
    changed = next((line[1:] for line in diff.splitlines()
                    if line[:1] in "+-" and not line.startswith(("---", "+++"))), diff.splitlines()[0] if diff else "")
    field_ = changed.split(":", 1)[0].strip()[:60] or "its generated code"
    return f"internals probe: {behavior} diverges from the reference on {field_}"


def sweep_expectation(lc: LoadedCase, records: Sequence[ResultRecord]) -> int | None:
    """The compile count the reference predicts for the case's float sweep (with the fix), where
    a passing record compiled another: only where every compiling variant compiled one graph on
    its first call (the prediction is per compiled region; a graph break makes several) and the
    variants agree on the prediction; ``None`` otherwise, or where the case sets a count."""
    if lc.case.expect.compiles is not None:
        return None
    expected: set[int] = set()
    differs = False
    for r in records:
        if r.backend is None or not counts_graphs(r.backend) or r.status != "pass":
            continue
        sweep = scalar_sweep(lc, r.compile_counts.get("cold_graphs") or 0)
        if sweep is None or sweep.uses.kinds & NOT_MODELLED or r.compile_counts.get("cold_first_call") != 1:
            return None
        want = predicted(sweep)
        expected.add(want)
        differs |= sweep.compile_count != want
    return expected.pop() if differs and len(expected) == 1 else None


@dataclass
class Finding:
    signature: str
    program: Program
    record: ResultRecord
    found_after: float  # seconds into the exploration when first seen (before shrinking)
    programs_before: int
    case_path: str = ""
    reproducer_path: str = ""
    reproduces: bool | None = None
    shrunk: bool = True  # False: kept as first seen, the run interrupted before Hypothesis shrank it
    compiles: int | None = None  # the compile count its case expects (a sweep the reference predicts otherwise)


@dataclass
class Stats:
    programs: int = 0
    rejected: int = 0
    flaky: list[str] = field(default_factory=list)
    seconds_in_runs: float = 0.0  # in the runner (inputs, eager, compile, compiled calls, oracles)
    seconds_compiling: float = 0.0  # of which compiling
    seconds_in_torch: float = 0.0  # of which in torch: eager calls, compiling and compiled calls
    seconds: float = 0.0

    def count(self, records: Sequence[ResultRecord], seconds: float) -> None:
        """The runner's time for these records (every run: first, shrinking or confirming)."""
        self.seconds_in_runs += seconds
        self.seconds_compiling += sum(r.durations.get("compile", 0.0) for r in records)
        self.seconds_in_torch += sum(r.durations.get(b, 0.0) for r in records for b in TORCH_BUCKETS)

    @property
    def valid_share(self) -> float:
        """Of the programs run, the share eager accepted."""
        return 1 - self.rejected / max(self.programs, 1)

    @property
    def per_hour(self) -> int:
        return round(self.programs / self.seconds * 3600) if self.seconds else 0

    @property
    def compile_share(self) -> float:
        """Of the exploration's time, the share spent compiling."""
        return self.seconds_compiling / self.seconds if self.seconds else 0.0

    @property
    def torch_share(self) -> float:
        """Of the exploration's time, the share spent in torch (eager calls, compiling, compiled calls)."""
        return self.seconds_in_torch / self.seconds if self.seconds else 0.0


class _Stop(Exception):
    """The time or example budget is spent."""


class FindingError(AssertionError):
    def __init__(self, signature: str, ran: Ran, record: ResultRecord) -> None:
        super().__init__(signature)
        self.signature, self.ran, self.record = signature, ran, record


_CLASSES: dict[str, type[FindingError]] = {}


def _error_class(signature: str) -> type[FindingError]:
    """One exception class per signature: Hypothesis tells bugs apart by their exception's type."""
    if signature not in _CLASSES:
        digest = hashlib.sha1(signature.encode()).hexdigest()[:10]  # noqa: S324  # a name, not security
        _CLASSES[signature] = type(f"Finding_{digest}", (FindingError,), {})
    return _CLASSES[signature]


def case_text(program: Program, **kw: Any) -> str:
    return yaml.safe_dump(program.case(**kw), sort_keys=False, width=120)


@dataclass
class Explorer:
    """One exploration: where it writes, what it runs, its budgets."""

    out: Path
    backends: tuple[str, ...] = ("aot_eager",)
    modes: tuple[str, ...] = ("inference", "training")
    extensions: Sequence[Any] = ()
    time_budget: float = 60.0
    max_examples: int = 1_000_000
    seed: int = 0
    float_sweeps: bool = True
    registry: bool = True  # also the forms torch's operator registry offers (explore/registry.py)
    progress: Callable[[str], None] | None = None
    shard: tuple[int, int] = (0, 1)  # (index, count): this explorer runs rounds index, index + count, ...
    first_round: int = 0  # of this shard's rounds: where a restarted worker goes on
    on_finding: Callable[[Finding], None] | None = None  # each finding as soon as it is shrunk
    on_round: Callable[[int], None] | None = None  # the next round of this shard, after each round
    findings: dict[str, Finding] = field(default_factory=dict)
    interrupted: bool = False
    stopping: bool = False  # set (by a signal handler) to stop before the next program
    stats: Stats = field(default_factory=Stats)
    _cache: dict[str, Ran] = field(default_factory=dict)
    _start: float = 0.0
    _said: float = 0.0
    _first_seen: dict[str, tuple[float, int]] = field(default_factory=dict)
    _pending: dict[str, FindingError] = field(default_factory=dict)  # raised, not yet shrunk
    sightings: dict[str, list[Program]] = field(default_factory=dict)  # per cause: up to EXAMPLES programs
    seen: dict[str, int] = field(default_factory=dict)  # per cause: the programs that showed it

    def _sighted(self, signature: str, program: Program) -> None:
        """One more program showed the cause: counted, and kept where its ingredients are new."""
        self.seen[signature] = self.seen.get(signature, 0) + 1
        kept = self.sightings.setdefault(signature, [])
        if len(kept) < EXAMPLES and all(program.ingredients() != p.ingredients() for p in kept):
            kept.append(program)

    def load(self, text: str) -> LoadedCase:
        """The program's case, loaded as any case is (validation included) from the one file every
        program passes through, running.yaml: left there if the program kills the process (a segfault
        in the build), overwritten by the next. No file per program is kept."""
        name = "explore_" + hashlib.sha1(text.encode()).hexdigest()[:16]  # noqa: S324  # a name, not security
        path = self.out / RUNNING
        path.write_text(text, encoding="utf-8")
        loaded = load_case(path, self.out, display=name)
        return dataclasses.replace(loaded, id=loaded.case.id or name)

    def records(self, lc: LoadedCase, only: set[str] | None = None) -> list[tuple[Variant, ResultRecord]]:
        """Every CPU variant of a case (or those labelled in `only`), run as the runner runs it (no
        probe: speed), with the extensions; their time is counted in the stats."""
        options = RunOptions(probe=False, extensions=tuple(self.extensions))
        start = time.perf_counter()
        ran = [(v, run_variant(lc, v, options)) for v in variants_of(lc.case, devices=["cpu"])
               if only is None or v.label in only]
        self.stats.count([r for _, r in ran], time.perf_counter() - start)
        return ran

    def text(self, program: Program, compiles: int | None = None) -> str:
        return case_text(program, seed=self.seed, backends=self.backends, modes=self.modes, compiles=compiles)

    def run(self, program: Program) -> Ran:
        """The program's records; where its sweep compiled other than the reference predicts, those
        of its case with that count expected (so that the runner's own check says so)."""
        text = self.text(program)
        if text in self._cache:
            return self._cache[text]
        lc, records = self._run_text(text)
        expected = sweep_expectation(lc, records)
        ran_text = text if expected is None else self.text(program, compiles=expected)
        if expected is not None:
            lc, records = self._run_text(ran_text)
        ran = Ran(program, ran_text, records, expected)
        self._cache[text] = ran
        return ran

    def _run_text(self, text: str) -> tuple[LoadedCase, list[ResultRecord]]:
        try:
            lc = self.load(text)
        except CaseLoadError as exc:  # the grammar wrote a case the schema refuses: a bug of ours
            raise AssertionError(f"the explorer wrote an invalid case:\n{exc}\n{text}") from None
        records = [r for _, r in self.records(lc)]
        return lc, records

    def _body(self, program: Program) -> None:
        if self.stopping:
            raise KeyboardInterrupt
        cached = self.text(program) in self._cache
        spent = time.monotonic() - self._start
        # a program already run costs nothing: Hypothesis replays a shrunk finding, which must fail again
        if not cached and (spent > self.time_budget * (1 + SHRINK_GRACE) or self.stats.programs >= self.max_examples):
            raise _Stop
        ran = self.run(program)
        if not cached:
            self.stats.programs += 1
            self.stats.rejected += ran.rejected
            self._say()
        for sig, record in ran.discrepancies().items():
            if not cached:
                self._sighted(sig, ran.program)
            if sig in self.findings:
                continue
            # confirmed once (the first program that showed it) is enough while it shrinks: the shrunk
            # program's case file is run again when it is written (emit), and says whether it reproduces
            if not cached and sig not in self._first_seen and not self._confirmed(ran, sig):
                self.stats.flaky.append(sig)
                continue
            self._first_seen.setdefault(sig, (time.monotonic() - self._start, self.stats.programs))
            error = _error_class(sig)(sig, ran, record)
            self._pending.setdefault(sig, error)
            raise error

    def _confirmed(self, ran: Ran, sig: str) -> bool:
        """A discrepancy counts only if a second run of the same program shows it again (of the
        variants that showed it: the others have nothing to confirm)."""
        showed = {r.variant for r in ran.records
                  if sig in Ran(ran.program, ran.text, [r], ran.compiles).discrepancies()}
        again = [r for _, r in self.records(self.load(ran.text), only=showed)]
        return sig in Ran(ran.program, ran.text, again, ran.compiles).discrepancies()

    def _say(self, *, now: bool = False) -> None:
        if self.progress is None or (not now and time.monotonic() - self._said < 0.5):
            return
        self._said = time.monotonic()
        spent = time.monotonic() - self._start
        rate = self.stats.programs / spent if spent > 0 else 0.0
        valid = self.stats.valid_share
        self.progress(f"{self.stats.programs} programs, {rate:.2f}/s, {valid:.0%} valid, "
                      f"{len(self.findings)} finding(s), {spent:.0f}/{self.time_budget:.0f} s")

    def explore(self) -> dict[str, Finding]:
        """Rounds of search and shrink until a budget is spent or the user interrupts (then the
        discrepancies seen but not yet shrunk are kept as they were first seen); the distinct findings."""
        # the registry's forms are validated once per build (a minute, then cached): not the search's time
        strategy = programs(float_sweeps=self.float_sweeps, table=registry_table() if self.registry else None)
        self._start = time.monotonic()
        database = DirectoryBasedExampleDatabase(str(self.out / "hypothesis"))
        index, count = self.shard
        try:
            for local in itertools.count(self.first_round):
                if self._round(database, strategy, self.seed * 10_000 + local * count + index):
                    break
                if self.on_round is not None:
                    self.on_round(local + 1)
                if time.monotonic() - self._start > self.time_budget or self.stats.programs >= self.max_examples:
                    break
        except KeyboardInterrupt:
            self.interrupted = True
            for sig, error in list(self._pending.items()):
                if sig not in self.findings:
                    self._add(error, shrunk=False)
        self.stats.seconds = time.monotonic() - self._start
        return self.findings

    def _round(self, database: DirectoryBasedExampleDatabase, strategy: Any, round_seed: int) -> bool:
        """One Hypothesis round; True when a budget stopped it."""
        @settings(database=database, max_examples=ROUND_EXAMPLES, deadline=None, report_multiple_bugs=True,
                  suppress_health_check=list(HealthCheck), phases=(Phase.reuse, Phase.generate, Phase.shrink),
                  print_blob=False)
        @seed(round_seed)
        @given(strategy)
        def search(program: Program) -> None:
            self._body(program)

        stop = False
        try:
            with _quiet():
                search()
        except BaseException as exc:  # Hypothesis raises what the body raised, grouped
            for leaf in _leaves(exc):
                if isinstance(leaf, FindingError) and leaf.signature not in self.findings:
                    self._add(leaf)
                elif isinstance(leaf, _Stop):
                    stop = True
                elif not isinstance(leaf, FindingError):
                    raise
        return stop

    def reduce(self, ran: Ran, signature: str) -> tuple[Ran, ResultRecord]:
        """After Hypothesis's shrinking, every single removal it left (Program.reductions) that still
        shows the same cause, until none does or the time budget's grace is spent."""
        record = ran.discrepancies()[signature]
        deadline = self.time_budget * (1 + SHRINK_GRACE)
        smaller = True
        while smaller and time.monotonic() - self._start < deadline and not self.stopping:
            smaller = False
            for candidate in ran.program.reductions():
                if time.monotonic() - self._start >= deadline or self.stopping:
                    break
                tried = self.run(candidate)
                if signature in tried.discrepancies():
                    ran, record, smaller = tried, tried.discrepancies()[signature], True
                    break
        return ran, record

    def _add(self, error: FindingError, shrunk: bool = True) -> None:
        first = self._first_seen.get(error.signature, (time.monotonic() - self._start, self.stats.programs))
        ran, record = self.reduce(error.ran, error.signature) if shrunk else (error.ran, error.record)
        finding = Finding(error.signature, ran.program, record, *first, shrunk=shrunk, compiles=ran.compiles)
        self.findings[error.signature] = finding
        self._pending.pop(error.signature, None)
        self._say(now=True)
        if self.on_finding is not None:
            self.on_finding(finding)


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions in an exception group (Hypothesis's several bugs), or the one."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, tuple | list) and all(isinstance(e, BaseException) for e in inner):
        for e in inner:
            yield from _leaves(e)
    else:
        yield exc


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Hypothesis prints each falsifying example; the explorer writes its own report."""
    with hypothesis.reporting.with_reporter(lambda _value: None):
        yield
