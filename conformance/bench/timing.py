"""Per-call timing: warm-up, calibrated inner loops, many repeats, GC out of the timed region.

Note [How a row is timed]
~~~~~~~~~~~~~~~~~~~~~~~~~
A *form* is a zero-argument callable doing one call of the thing measured. For each form:

1. warm-up: call it until ``warmup_s`` has passed (at least ``min_warmup`` calls), so caches,
   lazy imports and dynamo's first-call work are out of the way;
2. calibrate ``number``, the calls per repeat, so that one repeat lasts about ``target_s``
   (timer resolution and loop overhead then vanish in the figure);
3. time ``repeat`` repeats. Before each, ``gc.collect()`` runs *outside* the timed region and
   the collector is disabled *inside* it (restored afterwards, also on error), so a collection
   triggered by someone else's garbage never lands in one repeat;
4. forms compared side by side are timed *interleaved* (A B C A B C ...), so a drift of the
   machine's speed during the run moves every form alike instead of biasing the ratio.

A :class:`Stats` keeps every repeat's µs/call: the median is the figure, the IQR and min-max
the spread, ``noise`` the IQR relative to the median. A ratio of two forms comes with a
bootstrap 95 % interval of the ratio of medians (seeded: the same samples give the same
interval), which says whether a small effect can be told apart from the noise.
"""

from __future__ import annotations

import gc
import math
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from conformance.bench.document import StatsDoc

__all__ = [
    "Ratio",
    "Settings",
    "Stats",
    "gc_disabled",
    "measure",
    "measure_interleaved",
    "ratio",
    "ratio_of_products",
]


@dataclass(frozen=True)
class Settings:
    """How hard to measure. ``quick()`` is for tests: tiny repeats, numbers meaningless."""

    repeat: int = 21
    target_s: float = 0.02
    warmup_s: float = 0.05
    min_warmup: int = 3
    max_number: int = 1_000_000

    @staticmethod
    def quick() -> Settings:
        return Settings(repeat=3, target_s=0.0005, warmup_s=0.0, min_warmup=1, max_number=50)

    def scaled(self, factor: float) -> Settings:
        """More repeats (e.g. for an effect of a few percent)."""
        return Settings(max(3, round(self.repeat * factor)), self.target_s, self.warmup_s, self.min_warmup,
                        self.max_number)


@dataclass(frozen=True)
class Stats:
    """µs per call over the repeats of one form."""

    samples: tuple[float, ...]
    number: int

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def _quantile(self, q: float) -> float:
        xs = sorted(self.samples)
        if len(xs) == 1:
            return xs[0]
        pos = q * (len(xs) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    @property
    def q1(self) -> float:
        return self._quantile(0.25)

    @property
    def q3(self) -> float:
        return self._quantile(0.75)

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def noise(self) -> float:
        """IQR relative to the median: 0.02 means the middle half of repeats spans 2 %."""
        m = self.median
        return self.iqr / m if m > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "median_us": self.median,
            "q1_us": self.q1,
            "q3_us": self.q3,
            "min_us": min(self.samples),
            "max_us": max(self.samples),
            "noise": self.noise,
            "repeats": len(self.samples),
            "calls_per_repeat": self.number,
            "samples_us": list(self.samples),
        }

    @staticmethod
    def from_doc(doc: StatsDoc) -> Stats:
        return Stats(tuple(doc.samples_us), doc.calls_per_repeat)


@dataclass(frozen=True)
class Ratio:
    """``before / after`` as a ratio of medians, with a bootstrap 95 % interval."""

    value: float
    low: float
    high: float

    @property
    def distinguishable(self) -> bool:
        """The interval excludes 1.0: a difference the noise cannot explain."""
        return self.low > 1.0 or self.high < 1.0

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "ci95": [self.low, self.high], "distinguishable": self.distinguishable}


@contextmanager
def gc_disabled() -> Iterator[None]:
    """The collector off for the block, restored to its previous state afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _time_once(fn: Callable[[], Any], number: int) -> float:
    """Seconds for ``number`` calls, GC collected before and disabled during."""
    gc.collect()
    loop = range(number)
    with gc_disabled():
        start = time.perf_counter()
        for _ in loop:
            fn()
        return time.perf_counter() - start


def _warm(fn: Callable[[], Any], s: Settings) -> None:
    deadline = time.perf_counter() + s.warmup_s
    calls = 0
    while calls < s.min_warmup or time.perf_counter() < deadline:
        fn()
        calls += 1


def _calibrate(fn: Callable[[], Any], s: Settings) -> int:
    number = 1
    while number < s.max_number:
        t = _time_once(fn, number)
        if t >= s.target_s / 4:
            return max(1, min(s.max_number, math.ceil(number * s.target_s / max(t, 1e-9))))
        number *= 4
    return s.max_number


def measure(fn: Callable[[], Any], settings: Settings | None = None) -> Stats:
    """One form on its own (see Note [How a row is timed])."""
    return measure_interleaved([fn], settings)[0]


def measure_interleaved(fns: Sequence[Callable[[], Any]], settings: Settings | None = None) -> list[Stats]:
    """Several forms, repeats interleaved so that drift hits them alike."""
    s = settings or Settings()
    for fn in fns:
        _warm(fn, s)
    numbers = [_calibrate(fn, s) for fn in fns]
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(s.repeat):
        for k, fn in enumerate(fns):
            samples[k].append(_time_once(fn, numbers[k]) / numbers[k] * 1e6)
    return [Stats(tuple(xs), n) for xs, n in zip(samples, numbers, strict=True)]


def ratio(before: Stats, after: Stats, *, resamples: int = 2000, seed: int = 0) -> Ratio:
    """``before.median / after.median`` with a seeded bootstrap 95 % interval."""
    value = before.median / after.median if after.median > 0 else math.inf
    rng = random.Random(seed)  # noqa: S311  # a reproducible bootstrap, not cryptography
    b, a = before.samples, after.samples
    draws = []
    for _ in range(resamples):
        mb = statistics.median(rng.choices(b, k=len(b)))
        ma = statistics.median(rng.choices(a, k=len(a)))
        draws.append(mb / ma if ma > 0 else math.inf)
    draws.sort()
    low = draws[int(0.025 * (resamples - 1))]
    high = draws[int(0.975 * (resamples - 1))]
    return Ratio(value, low, high)


def ratio_of_products(
    numerators: Sequence[Stats], denominators: Sequence[Stats], *, resamples: int = 2000, seed: int = 0
) -> Ratio:
    """``prod(median(n)) / prod(median(d))`` with a seeded bootstrap 95 % interval over every
    sample set (e.g. a before/after corrected by a yardstick timed in both runs)."""

    def value(ns: Sequence[float], ds: Sequence[float]) -> float:
        top = math.prod(ns)
        bottom = math.prod(ds)
        return top / bottom if bottom > 0 else math.inf

    point = value([n.median for n in numerators], [d.median for d in denominators])
    rng = random.Random(seed)  # noqa: S311  # a reproducible bootstrap, not cryptography

    def draw(st: Stats) -> float:
        return statistics.median(rng.choices(st.samples, k=len(st.samples)))

    draws = sorted(value([draw(n) for n in numerators], [draw(d) for d in denominators]) for _ in range(resamples))
    return Ratio(point, draws[int(0.025 * (resamples - 1))], draws[int(0.975 * (resamples - 1))])
