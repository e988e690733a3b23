"""What the explorer counts as a cause of a record: what follows from a call that raised is none."""

from __future__ import annotations

from conformance.explore.engine import signatures_of
from conformance.results import MismatchRecord, ResultRecord


def _record(*mismatches: MismatchRecord) -> ResultRecord:
    return ResultRecord.model_validate({
        "case_id": "x", "behavior": "mutation_epilogue", "device": "cpu", "backend": "aot_eager",
        "mode": "inference", "variant": "cpu-aot_eager-inference", "status": "fail",
        "mismatches": [m.model_dump() for m in mismatches]})


def test_what_later_calls_show_after_a_call_raised_compiled_only_is_no_cause_of_its_own() -> None:
    raised = MismatchRecord(check="exception", where="call 1: call", path="call", call=1,
                            expected="no exception", actual="IndexError: list index out of range")
    action = MismatchRecord(check="exception", where="call 2: calls[0].before", path="calls[0].before", call=2,
                            expected="no exception", actual="AttributeError: 'NoneType' object has no attribute 'mul_'")
    later = MismatchRecord(check="values", where="call 2: input a", path="input a", role="input", subject="a",
                           call=2, expected="[1.0]", actual="[2.0]")
    assert signatures_of(_record(raised, action, later)) == [
        "torch.compile | exception | the call | compiled raises where eager does not | "
        "IndexError: list index out of range"]
    # without the raise, the later call's difference is a cause
    assert len(signatures_of(_record(action, later))) == 2
