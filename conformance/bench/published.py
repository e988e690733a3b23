"""The per-call figures the upstream change descriptions publish (shared/seeds/), verbatim.

``before``/``after`` are µs/call as published; ``ratio`` is the published speedup where the
description states one (else before/after). Nothing here is measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MUTATION_EPILOGUE", "ORCHESTRATION", "SUBCLASS", "UNWRAP", "Published"]


@dataclass(frozen=True)
class Published:
    before_us: float | None
    after_us: float | None
    ratio: float | None
    source: str
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"before_us": self.before_us, "after_us": self.after_us, "ratio": self.ratio,
                "source": self.source, "note": self.note}


_RW = "pytorch#181271 (RuntimeWrapper orchestration step in isolation)"
_BU = "pytorch#178927 (unwrap step in isolation)"
_SW = "pytorch#176741 (AOTDispatchSubclassWrapper, µs/call)"
_ME = "pytorch#179600 (mutation epilogue, end to end)"

# (aliases, mutations, args) -> figures
ORCHESTRATION: dict[tuple[int, int, int], Published] = {
    (0, 0, 5): Published(0.35, 0.17, 2.1, _RW),
    (2, 0, 5): Published(0.41, 0.17, 2.5, _RW),
    (0, 2, 5): Published(0.74, 0.25, 3.0, _RW),
    (3, 1, 10): Published(0.79, 0.25, 3.2, _RW),
    (5, 3, 20): Published(0.93, 0.32, 2.9, _RW),
}

UNWRAP: dict[int, Published] = {
    5: Published(0.78, 0.14, 5.5, _BU),
    10: Published(1.43, 0.15, 9.5, _BU),
    20: Published(2.70, 0.16, 16.9, _BU),
    50: Published(6.61, 0.20, 33.1, _BU),
}

SUBCLASS: dict[str, Published] = {
    "twotensor": Published(114.6, 80.2, 114.6 / 80.2, _SW),
    "nested_twotensor": Published(194.1, 125.1, 194.1 / 125.1, _SW),
}

# The description gives a range of speedups, no per-row µs: the range's ends are kept.
MUTATION_EPILOGUE = Published(None, None, 1.02, _ME, note="published as 1.01-1.03x across its benchmarks")
