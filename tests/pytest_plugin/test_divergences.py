"""A passing item whose internals probe diverges is untriaged unless a reviewed divergence declares it:
the run says so and ends non-zero (the probe made to diverge by a conftest, as a build would)."""

from __future__ import annotations

import pytest

from tests.pytest_plugin.test_plugin import add_case, records, run

DIVERGE = """\
from dataclasses import replace

import conformance.probe as probe

_original = probe.PROBES["runtime_wrapper"]


def _diverging(one):
    result = _original(one)
    return replace(result, status="diverges", diff="seeded: captured inputs differ")


probe.PROBES["runtime_wrapper"] = _diverging
"""

DECLARED = """\
divergences:
  - when: {backend: [aot_eager]}
    probe: runtime_wrapper
    diff: "^seeded"
    reason: the build captures its inputs another way, which no caller can see
    link: https://github.com/pytorch/pytorch/pull/181271
    kind: benign
    evidence: seeded by the test's conftest
"""


def _probe_of(record: dict[str, object]) -> dict[str, object]:
    results = record["probes"]["results"]  # type: ignore[index]  # a record as JSON
    return next(r for r in results if r["behavior"] == "runtime_wrapper")


def test_an_undeclared_divergence_on_a_passing_item_needs_a_person(pytester: pytest.Pytester) -> None:
    add_case(pytester, "runtime_wrapper/sin.yaml")
    pytester.makeconftest(DIVERGE)
    result = run(pytester, "cases")
    result.assert_outcomes(passed=1)  # the contract holds: the item passes ...
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # ... and the run still needs a person
    result.stdout.fnmatch_lines(["*1 passing items whose internals probe diverges, undeclared*",
                                 "*runtime_wrapper/sin [[]cpu-aot_eager-inference[]]: runtime_wrapper*"])
    (record,) = records(pytester)
    assert (record["status"], _probe_of(record)["status"], _probe_of(record)["declared"]) == ("pass", "diverges", "")


def test_a_declared_divergence_is_reviewed_and_the_run_ends_well(pytester: pytest.Pytester) -> None:
    add_case(pytester, "runtime_wrapper/sin.yaml", extra=DECLARED)
    pytester.makeconftest(DIVERGE)
    result = run(pytester, "cases")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "internals probe diverges, undeclared" not in result.stdout.str()
    (record,) = records(pytester)
    assert str(_probe_of(record)["declared"]).startswith("benign https://github.com/pytorch/pytorch/pull/181271 at ")


def test_a_declaration_for_another_build_or_diff_declares_nothing(pytester: pytest.Pytester) -> None:
    add_case(pytester, "runtime_wrapper/sin.yaml", extra=DECLARED.replace("^seeded", "^other"))
    pytester.makeconftest(DIVERGE)
    result = run(pytester, "cases")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (record,) = records(pytester)
    assert _probe_of(record)["declared"] == ""


def test_a_divergence_naming_no_behaviour_is_a_case_error(pytester: pytest.Pytester) -> None:
    add_case(pytester, "runtime_wrapper/sin.yaml", extra=DECLARED.replace("probe: runtime_wrapper", "probe: wrapper"))
    result = run(pytester, "cases")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*sin.yaml:*: divergences[[]0[]].probe: *unknown behaviour 'wrapper'; one of: *"])
