"""Case schema and loader: strict validation, errors as path:line: field: message."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conformance.data.loader import CaseLoadError, case_id_for, discover, load_all, load_case
from conformance.schema import Case, json_schema

RESOURCES = Path(__file__).parent.parent / "resources" / "cases"
REPO = Path(__file__).parents[2]

MINIMAL = """\
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
inputs:
  x:
    tensor: {shape: [4]}
program: |
  def f(x):
      return x
"""


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def errors_of(path: Path) -> list[str]:
    with pytest.raises(CaseLoadError) as info:
        load_case(path, display=path.name)
    return [str(e) for e in info.value.errors]


def test_minimal_case_loads_with_defaults(tmp_path: Path) -> None:
    lc = load_case(write(tmp_path, MINIMAL, "mutation_epilogue/min.yaml"), tmp_path)
    assert lc.id == "mutation_epilogue/min"
    assert lc.case.backends == ("aot_eager", "inductor")
    assert lc.case.modes == ("inference",)
    assert lc.program_line == 8  # the line after `program: |`
    assert len(lc.sha256) == 64


def test_unknown_key_names_line_field_and_valid_keys() -> None:
    assert errors_of(RESOURCES / "broken" / "unknown_key.yaml") == [
        "unknown_key.yaml:6: inputs.x.tensor.colour: unknown key 'colour'; valid keys: shape, values, dtype, "
        "requires_grad, leaf, layout, stride, storage_offset, init, device, dynamic_dims"
    ]


def test_wrong_type_names_the_item_and_what_was_given() -> None:
    (err,) = errors_of(RESOURCES / "broken" / "wrong_type.yaml")
    assert err.startswith("wrong_type.yaml:7: inputs.x.tensor.shape[1]: Input should be a valid integer")
    assert "(got 'four', a str)" in err


def test_bad_indent_is_a_yaml_error_at_its_line() -> None:
    (err,) = errors_of(RESOURCES / "broken" / "bad_indent.yaml")
    # libyaml says "in this context", PyYAML's pure-Python parser "here"
    assert err.startswith("bad_indent.yaml:3: <yaml>: invalid YAML: mapping values are not allowed "), err


def test_literal_error_lists_the_choices(tmp_path: Path) -> None:
    (err,) = errors_of(write(tmp_path, MINIMAL.replace("mutation_epilogue", "mutation_epilog")))
    assert err.startswith("case.yaml:1: behavior: Input should be 'mutation_epilogue', 'runtime_wrapper', ")


def test_duplicate_key_is_an_error_not_last_wins(tmp_path: Path) -> None:
    (err,) = errors_of(write(tmp_path, MINIMAL + "summary: again\n"))
    assert err == "case.yaml:10: summary: duplicate key 'summary'"


def test_a_key_that_is_no_string_is_reported_at_its_own_line(tmp_path: Path) -> None:
    """`1: 2` at line 14 was reported at line 1 (the line map holds the key as its text, "1")."""
    errors = errors_of(write(tmp_path, MINIMAL + "\n\n\n\n1: 2\n"))
    assert errors == ["case.yaml:14: [1]: Keys should be strings (got 1, a int)"], errors


def test_missing_key_is_reported_at_the_owning_mapping(tmp_path: Path) -> None:
    text = MINIMAL.replace("summary: s\n", "")
    assert errors_of(write(tmp_path, text)) == ["case.yaml:1: summary: required key is missing"]


@pytest.mark.parametrize("signature", ["f(y)", "f(x, y)", "f(y, *rest)", "f(x, *, k=1)", "f(x, **kw)", "f(x, /)"])
def test_program_must_take_the_inputs_in_order(tmp_path: Path, signature: str) -> None:
    text = MINIMAL.replace("def f(x):", f"def {signature}:")
    (err,) = errors_of(write(tmp_path, text))
    assert err.startswith(f"case.yaml:7: program: f({signature[2:-1].split(',', maxsplit=1)[0]}"), err
    assert "a parameter after them must have a default" in err
    assert "must take the non-hidden inputs in order: (x), or the first of them and *args for the rest" in err


@pytest.mark.parametrize("signature", ["f(*args)", "f(x, *args)", "f(x, flag=False)"])
def test_program_may_take_the_inputs_variadic_or_keep_a_default(tmp_path: Path, signature: str) -> None:
    """Upstream's f(*args) and a parameter its call leaves to its default are the program's own signature."""
    text = MINIMAL.replace("def f(x):", f"def {signature}:").replace("return x", "return 2 * x" if "x" in signature
                                                                         else "return 2 * args[0]")
    assert load_case(write(tmp_path, text), display="case.yaml").case.program.startswith(f"def {signature}:")


def test_program_syntax_error_points_at_the_case_file_line(tmp_path: Path) -> None:
    text = MINIMAL.replace("      return x", "      return x +")
    assert errors_of(write(tmp_path, text)) == ["case.yaml:9: program: invalid syntax"]


def test_view_must_refer_to_an_earlier_input(tmp_path: Path) -> None:
    text = MINIMAL.replace("    tensor: {shape: [4]}", "    view: 'base[1:]'")
    (err,) = errors_of(write(tmp_path, text))
    assert "view of 'x' uses 'base', which is neither an earlier input nor a name the classes block defines" in err
    assert err.startswith("case.yaml:4: inputs:")


def test_a_view_may_use_what_the_classes_block_defines(tmp_path: Path, make_case: Any) -> None:
    """The classes block's names are in the scope the inputs are built in, as cases/README.md says."""
    lc = make_case("""\
        behavior: subclass_wrapper
        summary: A view built by a helper the classes block defines.
        upstream: [https://github.com/pytorch/pytorch/pull/176741]
        modes: [inference]
        backends: [aot_eager]
        classes: |
          import math as m
          SCALE = 2.0
          def doubled(t):
              return t * SCALE
        inputs:
          a: {tensor: {shape: [4]}, hidden: true}
          x: {view: "doubled(a) + m.pi"}
        program: |
          def f(x):
              return x.sin()
        """)
    from conformance.data.variants import Variant
    from conformance.run.runner import run_variant

    assert run_variant(lc, Variant("cpu", "aot_eager", "inference")).status == "pass"


def test_training_needs_an_input_that_requires_grad(tmp_path: Path) -> None:
    (err,) = errors_of(write(tmp_path, MINIMAL + "modes: [training]\n"))
    assert err == "case.yaml:10: modes: training needs at least one input with requires_grad: true"


def test_cross_field_rules_in_nested_models(tmp_path: Path) -> None:
    text = MINIMAL.replace("{shape: [4]}", "{shape: [4], leaf: false, layout: transposed}")
    (err,) = errors_of(write(tmp_path, text))
    assert err.startswith("case.yaml:6: inputs.x.tensor: leaf: false needs requires_grad: true")


def test_known_failure_needs_https_link_and_valid_specifier(tmp_path: Path) -> None:
    text = MINIMAL + textwrap.dedent("""\
        known_failures:
          - when: {torch: "<<2.12"}
            reason: r
            link: http://example.org/x
        """)
    errs = errors_of(write(tmp_path, text))
    assert any("known_failures[0].when.torch: '<<2.12' is not a version specifier" in e for e in errs)
    assert any("known_failures[0].link: link must be an https:// URL" in e for e in errs)
    # every known failure says what kind it is and what the audit measured
    assert any("known_failures[0].kind: required key is missing" in e for e in errs)
    assert any("known_failures[0].evidence: required key is missing" in e for e in errs)
    text = MINIMAL + textwrap.dedent("""\
        known_failures:
          - reason: r
            link: https://github.com/pytorch/pytorch/issues/1
            kind: harmless
            evidence: "measured\\nover two lines"
        """)
    errs = errors_of(write(tmp_path, text))
    assert any("known_failures[0].kind:" in e and "'bug'" in e for e in errs), errs
    assert any("known_failures[0].evidence: must be one line" in e for e in errs), errs


def test_calls_may_only_replace_declared_inputs(tmp_path: Path) -> None:
    text = MINIMAL + "calls:\n  - y: {tensor: {shape: [2]}}\n"
    (err,) = errors_of(write(tmp_path, text))
    assert "call 1 replaces y, not among the inputs (x)" in err


def test_several_errors_in_one_file_are_all_reported(tmp_path: Path) -> None:
    text = MINIMAL.replace("{shape: [4]}", "{shape: [4], colour: 1, dtype: float33}") + "expect: {rtol: big}\n"
    errs = errors_of(write(tmp_path, text))
    assert [e.split(":")[1] for e in errs] == ["6", "6", "10"]


def test_empty_and_non_mapping_files(tmp_path: Path) -> None:
    assert errors_of(write(tmp_path, "")) == ["case.yaml:1: <case>: the file is empty; a case file is a mapping"]
    assert errors_of(write(tmp_path, "- 1\n")) == ["case.yaml:1: <case>: a case file must be a mapping"]


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    errs = errors_of(write(tmp_path, "summary: s\nbehavior: !!python/object/apply:os.system ['true']\n"))
    assert errs == ["case.yaml:2: behavior: a YAML tag (!!python/object/apply:os.system) is not allowed"]


def test_duplicate_ids_are_errors_for_each_copy(tmp_path: Path) -> None:
    write(tmp_path, MINIMAL + "id: same\n", "a.yaml")
    write(tmp_path, MINIMAL + "id: same\n", "b.yaml")
    write(tmp_path, MINIMAL, "c.yaml")
    cases, errors = load_all([tmp_path], tmp_path)
    assert [c.id for c in cases] == ["c"]
    assert sorted(e.field for e in errors) == ["id", "id"]


def test_discovery_is_sorted_and_ids_come_from_the_path(tmp_path: Path) -> None:
    for name in ("z/b.yaml", "a/c.yml", "a/a.yaml", "notes.txt"):
        write(tmp_path, MINIMAL, name)
    found = discover([tmp_path])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a/a.yaml", "a/c.yml", "z/b.yaml"]
    assert case_id_for(found[0], tmp_path) == "a/a"


def test_committed_json_schema_is_current() -> None:
    committed = json.loads((REPO / "cases" / "schema.json").read_text())
    assert committed == json.loads(json.dumps(json_schema())), (
        "cases/schema.json is stale; regenerate: torch-conformance schema --write cases/schema.json"
    )


def test_every_committed_case_validates() -> None:
    cases, errors = load_all([REPO / "cases"], REPO / "cases")
    assert not errors, "\n".join(map(str, errors))
    assert len(cases) >= 15
    assert {c.case.behavior for c in cases} == set(Case.model_fields["behavior"].annotation.__args__)  # type: ignore[union-attr]  # a Literal


@pytest.mark.parametrize(("scalar", "error"), [
    ("{value: 2}", "inputs.s.scalar: 2 is an int: say type: int, or write 2.0 for a float"),
    ("{values: [1, 2]}", "inputs.s.scalar: 1 is an int: say type: int, or write 1.0 for a float"),
    ("{value: 2.0}", None), ("{type: int, value: 2}", None), ("{type: float, value: 2}", None),
])
def test_an_int_literal_is_never_silently_a_float(tmp_path: Path, scalar: str, error: str | None) -> None:
    """A scalar's default type is float: `value: 2` would be called with 2.0, which is not upstream's int (equal ints
    share one symbol under dynamic shapes, floats do not), so the case must say which it means."""
    text = MINIMAL.replace("    tensor: {shape: [4]}\n", f"    tensor: {{shape: [4]}}\n  s:\n    scalar: {scalar}\n")
    text = text.replace("def f(x):", "def f(x, s):")
    path = write(tmp_path, text)
    if error is None:
        assert load_case(path, display="case.yaml").case.inputs["s"].scalar is not None
    else:
        assert errors_of(path) == [f"case.yaml:8: {error}"]
