"""Where the explorer's time goes is counted from every run it makes (first, shrinking,
confirming), and a confirmation reruns only what it confirms."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.explore.engine import Explorer
from conformance.explore.grammar import Input, Program, Statement

# a write to an input: the fault that drops input mutations fails both modes of it
PROGRAM = Program((Input("a", (4,), True, False, "contiguous"),), (Statement("mul_", "a"),), ("a",))


def test_time_in_torch_is_the_records_eager_compile_and_compiled_call_time(tmp_path: Path) -> None:
    explorer = Explorer(tmp_path, backends=("aot_eager",))
    ran = explorer.run(PROGRAM)
    s = explorer.stats
    assert s.seconds_in_torch == pytest.approx(sum(
        r.durations.get(b, 0.0) for r in ran.records for b in ("eager", "compile", "compiled_calls")))
    assert 0 < s.seconds_compiling <= s.seconds_in_torch <= s.seconds_in_runs
