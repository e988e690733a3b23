"""The structural evaluator on shapes of generated code that stress it."""

from __future__ import annotations

from reference_impl.structural import trace_function


def _counter_bumped_under_runtime_tests(n: int) -> str:
    # The 2.15 subclass wrapper's optional-SymInt output layout: an index bumped under
    # conditions that read the index itself, n times; unbounded, the terms grow as 2**n.
    lines = ["def inner_fn(args):", "    outs = compiled_fn(args)", "    idx = 0"]
    for k in range(n):
        lines += [
            f"    rem_{k} = len(outs) - idx",
            f"    inc_{k} = rem_{k} - 1 >= 1 and is_symint(outs[idx])",
            f"    if inc_{k}:",
            "        idx += 1",
        ]
    lines += ["    return (outs[idx],)"]
    return "\n".join(lines) + "\n"


def test_values_chosen_by_nested_branches_stay_small() -> None:
    trace = trace_function(_counter_bumped_under_runtime_tests(8), ["args"])
    described = "\n".join(trace.describe())
    assert len(described) < 2000, (len(described), described[:500])
    assert "branch-dependent value" in described, described


def test_a_value_chosen_by_one_branch_is_kept_as_a_conditional() -> None:
    described = "\n".join(trace_function(_counter_bumped_under_runtime_tests(1), ["args"]).describe())
    assert "if" in described and "branch-dependent" not in described, described
