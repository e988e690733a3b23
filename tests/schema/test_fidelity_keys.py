"""The keys that bring a case closer to upstream's test (a call's `fresh`, the case's `backward`, `expect.strides:
all`): bad values are line errors naming the field, a version-1 file that uses them is told so, and `fresh` is a
call's own key (no input takes its name)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.core.build import call_points
from conformance.data.loader import CaseLoadError, load_case

HEAD = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
devices: [cpu]
backends: [aot_eager]
inputs:
  x: {tensor: {shape: [4], requires_grad: true}}
program: |
  def f(x):
      return x * 2
"""


def errors(tmp_path: Path, body: str, head: str = HEAD) -> list[str]:
    path = tmp_path / "cases" / "bad.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + textwrap.dedent(body))
    try:
        load_case(path, tmp_path / "cases", display="bad.yaml")
    except CaseLoadError as exc:
        return [str(e) for e in exc.errors]
    return []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "modes: [training]\nbackward: summed\n",
            "bad.yaml:12: backward: Input should be 'seeded', 'sum' or 'sum_once' (got 'summed', a str)",
        ),
        (
            "backward: sum\n",
            "bad.yaml:11: backward: sum is how training runs its backward; the modes (inference) run "
            "none: add training, or leave backward out",
        ),
        (
            "expect: {strides: every}\n",
            "bad.yaml:11: expect.strides: give true (the strides of dims longer than 1), all "
            "(every dim's) or false; got 'every'",
        ),
        (
            "expect: {strides: 2}\n",
            "bad.yaml:11: expect.strides: give true (the strides of dims longer than 1), all "
            "(every dim's) or false; got 2",
        ),
        (
            "calls:\n  - fresh: maybe\n",
            "bad.yaml:12: calls[0].fresh: Input should be False, True, 'keep_cache' or 'new_backend' "
            "(got 'maybe', a str)",
        ),
    ],
)
def test_bad_values_are_line_errors(tmp_path: Path, body: str, message: str) -> None:
    assert errors(tmp_path, body) == [message]


def test_a_version_1_file_using_them_names_each(tmp_path: Path) -> None:
    assert errors(
        tmp_path,
        """\
        version: 1
        modes: [training]
        backward: sum
        expect: {strides: all}
        calls:
          - fresh: true
        """,
    ) == [
        "bad.yaml:13: backward: backward is schema version 2; write version: 2 (or leave version out)",
        "bad.yaml:14: expect.strides: strides: all is schema version 2; write version: 2 (or leave version out)",
        "bad.yaml:16: calls[0].fresh: fresh is schema version 2; write version: 2 (or leave version out)",
    ]


def test_fresh_is_a_call_s_own_key(tmp_path: Path) -> None:
    head = HEAD.replace("  x: {tensor", "  fresh: {tensor").replace("f(x)", "f(fresh)").replace("x * 2", "fresh * 2")
    assert errors(tmp_path, "", head=head) == [
        "bad.yaml:6: inputs: input name 'fresh' must be a Python identifier other than torch, before, after, raises, "
        "fresh, compiles, function"
    ]
    path = tmp_path / "cases" / "good.yaml"
    path.write_text(HEAD + "calls:\n  - fresh: true\n  - x: {tensor: {shape: [2]}}\n")
    first, fresh, later = call_points(load_case(path, tmp_path / "cases").data)
    assert (first.fresh, fresh.fresh, later.fresh) == (False, True, False)
    assert fresh.overrides == {} and fresh.label == "call 2 (compiled afresh)"
