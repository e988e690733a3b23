"""Statements from torch's operator registry (conformance/explore/registry.py): every family is
found, random ops never are, an op that ends the validating process costs only itself, and the
programs drawn with them are cases the loader accepts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.explore import registry
from conformance.explore.grammar import Program, programs
from conformance.explore.registry import Form, FormTable

SHAPES = ((3, 4),)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> FormTable:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        return FormTable(registry.forms(SHAPES))


def test_each_family_holds_the_ops_its_schemas_say(table: FormTable) -> None:
    ops = {(f.family, f.op.split(".")[0]) for f in table.forms}
    for expected in [("inplace", "add_"), ("inplace", "index_fill_"), ("metadata", "transpose_"),
                     ("metadata", "t_"), ("view", "transpose"), ("view", "diagonal"), ("functional", "sin")]:
        assert expected in ops, expected
    assert not {op for _, op in ops} & {"bernoulli_", "normal_", "uniform_", "random_", "exponential_", "dropout"}
    assert {f.dtype for f in table.forms} >= {"float32", "float64", "bfloat16", "int64", "uint8", "bool", "complex64"}
    t_ = next(f for f in table.forms if f.op == "t_.default" and f.dtype == "float32")
    assert (t_.shape, t_.result) == ((3, 4), (4, 3))  # a metadata form says the target's new shape


def test_a_form_is_kept_only_where_eager_accepts_it(table: FormTable) -> None:
    ints = {f.op for f in table.of("inplace", (3, 4), "int64")}
    floats = {f.op for f in table.of("inplace", (3, 4), "float32")}
    assert "sin_.default" in floats and "sin_.default" not in ints  # sin_ of an integer tensor: eager refuses


def test_an_op_that_ends_the_validating_process_costs_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    form = {"family": "inplace", "op": "a_.default", "call": "{t}.a_()", "shape": [4], "dtype": "int64",
            "result": [4]}
    runs: list[list[str]] = []

    def child(args: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        runs.append(args)
        if len(runs) == 1:  # the second attempt ends the process (an integer division by zero: SIGFPE)
            lines = [{"try": "a_|(4,)|int64"}, {"form": form}, {"try": "b_|(4,)|int64"}]
            return subprocess.CompletedProcess(args, -8, "\n".join(map(json.dumps, lines)), "")
        lines = [{"try": "c_|(4,)|int64"}, {"form": {**form, "op": "c_.default", "call": "{t}.c_()"}}]
        return subprocess.CompletedProcess(args, 0, "\n".join(map(json.dumps, lines)), "")

    monkeypatch.setattr(registry.subprocess, "run", child)
    made = registry._validate(((4,),))
    assert [f.op for f in made] == ["a_.default", "c_.default"]
    assert runs[1][-1] == "b_|(4,)|int64"  # the next child leaves out what ended the last one


def test_the_table_is_cached_per_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(registry, "_validate", lambda shapes: [Form("inplace", "x_.default", "{t}.x_()", (4,),
                                                                    "float32", (4,))])
    first = registry.forms(((4,),))
    monkeypatch.setattr(registry, "_validate", lambda shapes: pytest.fail("validated again"))
    assert registry.forms(((4,),)) == first


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=__import__("hypothesis").strategies.data())
def test_programs_with_registry_forms_are_cases_the_loader_accepts(data: Any, table: FormTable,
                                                                    tmp_path: Path) -> None:
    from conformance.explore.engine import Explorer, case_text

    program: Program = data.draw(programs(table=table))
    lc = Explorer(tmp_path).load(case_text(program))
    assert lc.case.program.startswith("def f(")
    for s in program.statements:
        if s.form is not None:
            assert s.kind.startswith("op:") and s.op is not None
            assert s.line().replace("\n", " ") in lc.case.program.replace("\n", " ")


def test_an_op_meant_for_neither_eager_code_nor_graphs_is_not_offered() -> None:
    """slice_inverse exists for fake-ification only (#117041); drawn, every program with it was a
    'finding' that fake tensors refuse its two tensor arguments."""
    names = {op.split(".")[0] for _, op, _, _ in registry.candidates(((4,),))}
    assert "slice_inverse" not in names and "slice_scatter" in names
