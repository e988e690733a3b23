"""What the explorer counts as a cause of a record: what follows from a call that raised is none."""

from __future__ import annotations

from conformance.explore.engine import signatures_of
from conformance.results import MismatchRecord, ResultRecord


def _record(*mismatches: MismatchRecord) -> ResultRecord:
    return ResultRecord.model_validate({
        "case_id": "x", "behavior": "mutation_epilogue", "device": "cpu", "backend": "aot_eager",
        "mode": "inference", "variant": "cpu-aot_eager-inference", "status": "fail",
        "mismatches": mismatches})


def test_what_later_calls_show_after_a_call_raised_compiled_only_is_no_cause_of_its_own() -> None:
    raised = MismatchRecord(check="exception", path="call", call=1, call_label="call 1",
                            expected="no exception", actual="IndexError: list index out of range")
    action = MismatchRecord(check="exception", path="calls[0].before", call=2, call_label="call 2",
                            expected="no exception", actual="AttributeError: 'NoneType' object has no attribute 'mul_'")
    later = MismatchRecord(check="values", path="input a", call_label="call 2", role="input", subject="a",
                           call=2, expected="[1.0]", actual="[2.0]")
    assert signatures_of(_record(raised, action, later)) == [
        "torch.compile | exception | the call | compiled raises where eager does not | "
        "IndexError: list index out of range"]
    # without the raise, the later call's difference is a cause
    assert len(signatures_of(_record(action, later))) == 2


def test_a_storage_move_onto_a_wider_tensor_is_not_made() -> None:
    """The control found two eager runs differing: `v0 = a.clamp_min(lr)` (int16 to float32), then v0
    set_ onto a's storage with a's geometry reached past the storage, which set_ grew with memory
    nobody wrote. The statement moves storage only between tensors of one dtype."""
    import torch

    from conformance.explore.statements import TEMPLATES

    base = torch.zeros(24, dtype=torch.int16)
    a = base.as_strided((3, 4), (8, 2))
    v0 = a.clamp_min(0.5)
    before = a.untyped_storage().nbytes()
    exec(TEMPLATES["set_storage"].format(t="v0", o="a"), {"v0": v0, "a": a})  # the drawn statement
    assert a.untyped_storage().nbytes() == before
    same = a.clone()
    exec(TEMPLATES["set_storage"].format(t="same", o="a"), {"same": same, "a": a})  # the drawn statement
    assert same.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
