"""Time merging N findings (explore --merge's Totals.absorb): prints seconds per N, so that the growth is read
off one run (linear: ten times the findings, about ten times the time).

    python scripts/bench_merge.py [N ...]      # default 2000 20000 200000
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from conformance.explore.findings import Totals


def _finding(i: int) -> dict[str, Any]:
    sig = f"values | output | compiled {i}, eager 0 | aot_eager | ValueError: message number {i}"
    return {"signature": sig, "found_after_s": float(i), "statements": 3, "seen": 1, "examples": [], "case": "",
            "reproducer": ""}


def main(sizes: list[int]) -> None:
    for n in sizes:
        state = {"findings": [_finding(i) for i in range(n)] + [_finding(i) for i in range(0, n, 10)]}
        totals = Totals()
        start = time.perf_counter()
        totals.absorb(state, Path.cwd())
        print(f"{n:>8} findings (+{n // 10} seen again): {time.perf_counter() - start:8.2f} s, "
              f"{len(totals.findings)} kept")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [2000, 20000, 200000])
