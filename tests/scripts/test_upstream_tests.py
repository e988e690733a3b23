"""scripts/upstream_tests.py: the rule picks the right upstream tests, and coverage by the mapping is counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import upstream_tests

CODEGEN = """
class TestCodegenThing(TestCase):
    def _helper(self):
        pass

    def test_one(self):
        pass

    def test_two(self):
        pass
"""

UNSPEC = """
class UnspecTests(TestCase):
    def test_unspec_float_input(self):
        torch.compile(f)(x, 2.5)

    @torch._dynamo.config.patch(specialize_float=False)
    def test_plain(self):
        self.check(x)

    def test_other(self):
        self.assertIn("specialize_float", "text is not code")
        torch.compile(f)(x)

    def check(self, x):
        return self.run_it(x)

    def run_it(self, x):
        return torch.compile(lambda y: y)(x)

    def test_named_float_but_compiles_nothing_with_one(self):
        x = 2.5


def test_module_level():
    pass
"""

MAPPING = """\
revisions:
  test/functorch/test_codegen_thing.py: abc
  test/dynamo/test_unspec.py: abc
tests:
  - {file: test/functorch/test_codegen_thing.py, test: TestCodegenThing.test_one, cases: [some/case]}
  - {file: test/dynamo/test_unspec.py, test: UnspecTests.test_plain, white_box: asserts graph text}
  - {file: test/dynamo/test_unspec.py, test: UnspecTests.test_other, cases: [some/case]}
  - {file: test/dynamo/test_unspec.py, test: UnspecTests.test_gone, cases: [some/case]}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "test/functorch").mkdir(parents=True)
    (tmp_path / "test/dynamo").mkdir(parents=True)
    (tmp_path / "test/functorch/test_codegen_thing.py").write_text(CODEGEN)
    (tmp_path / "test/dynamo/test_unspec.py").write_text(UNSPEC)
    (tmp_path / "UPSTREAM.yaml").write_text(MAPPING)
    return tmp_path


def _reports(tree: Path) -> dict[str, upstream_tests.FileReport]:
    mapping = upstream_tests.load_mapping(tree / "UPSTREAM.yaml")
    files = upstream_tests.files_to_read(tree, mapping)
    return {f: upstream_tests.report_file(tree, f, mapping) for f in files}


def test_the_rule_picks_every_codegen_test_and_unspec_tests_by_what_their_bodies_do(tree: Path) -> None:
    reports = _reports(tree)
    assert reports["test/functorch/test_codegen_thing.py"].relevant == [
        "TestCodegenThing.test_one",
        "TestCodegenThing.test_two",
    ]
    unspec = reports["test/dynamo/test_unspec.py"]
    assert unspec.tests == 5  # four methods named test*, one module-level test; the helpers are not tests
    # a float literal in a compiled call; the setting in its decorator, compiling through two of the file's own
    # helpers; a string that says specialize_float is not code, and a float without a compile selects nothing
    assert unspec.relevant == ["UnspecTests.test_unspec_float_input", "UnspecTests.test_plain"]


AOTDISPATCH = """
class TestAOTAutograd(AOTTestCase):
    def verify_aot_autograd(self, f, inp):
        return aot_function(f, nop)(*inp)

    def test_input_mutation_simple(self):
        def f(a):
            a.mul_(2)
            return a
        self.verify_aot_autograd(f, [x])

    def test_tensorfiy_python_scalars_1(self):
        def f(a):
            return a.view(-1)
        self.verify_aot_autograd(f, [x])

    def test_batchnorm(self):
        with torch.no_grad():
            aot_module(mod, nop)(x)

    def test_only_backward(self):
        self.verify_aot_autograd(lambda a: a.sin(), [x])
        out.sum().backward()

    def test_mutation_in_name_only(self):
        x.add_(1)

    def test_writes_through_subscript_and_out(self):
        def f(a, b):
            a[0] = 1
            torch.sin(b, out=b)
        torch.compile(f)(x, y)

    def test_dupe_arg(self):
        self.verify_aot_autograd(lambda a, b: a + b, [x, x])

    def test_distinct_args(self):
        self.verify_aot_autograd(lambda a, b: a + b, [x, y])
"""


def test_names_are_not_the_rule_bodies_are(tmp_path: Path) -> None:
    """Upstream's typo'd `test_tensorfiy_python_scalars_1` and `test_batchnorm` are found by what they do; a
    test that only backwards through a compiled function is left out by design, and one that mutates without
    compiling anything selects nothing."""
    (tmp_path / "test/functorch").mkdir(parents=True)
    (tmp_path / "test/functorch/test_aotdispatch.py").write_text(AOTDISPATCH)
    rep = upstream_tests.report_file(tmp_path, "test/functorch/test_aotdispatch.py", None)
    assert rep.relevant == [
        "TestAOTAutograd.test_input_mutation_simple",
        "TestAOTAutograd.test_tensorfiy_python_scalars_1",
        "TestAOTAutograd.test_batchnorm",
        "TestAOTAutograd.test_writes_through_subscript_and_out",
        "TestAOTAutograd.test_dupe_arg",  # one tensor passed twice: aliased inputs
    ]


def test_coverage_counts_listed_mapped_missing_and_the_mappings_extra_entries(tree: Path) -> None:
    reports = _reports(tree)
    codegen, unspec = reports["test/functorch/test_codegen_thing.py"], reports["test/dynamo/test_unspec.py"]
    assert (codegen.listed, codegen.mapped, codegen.missing) == (
        ["TestCodegenThing.test_one"],
        ["TestCodegenThing.test_one"],
        ["TestCodegenThing.test_two"],
    )
    assert unspec.listed == ["UnspecTests.test_plain"]  # white_box still counts as listed
    assert unspec.mapped == []
    assert unspec.missing == ["UnspecTests.test_unspec_float_input"]
    assert unspec.outside_rule == ["UnspecTests.test_other"]
    assert unspec.not_in_tree == ["UnspecTests.test_gone"]
    assert not reports["test/functorch/test_aotdispatch.py"].present  # named by a rule, absent here: no error


def test_the_summary_line_and_json(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert upstream_tests.main([str(tree), "--against", str(tree / "UPSTREAM.yaml")]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[-1] == "listed 2 of 4 relevant (50%), mapped 1 (25%)"
    assert "  missing TestCodegenThing.test_two" in text
    assert "  not in the tree UnspecTests.test_gone" in text

    assert upstream_tests.main([str(tree), "--against", str(tree / "UPSTREAM.yaml"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {k: data["summary"][k] for k in ("relevant", "listed", "mapped", "listed_pct", "mapped_pct")} == {
        "relevant": 4,
        "listed": 2,
        "mapped": 1,
        "listed_pct": 50.0,
        "mapped_pct": 25.0,
    }


def test_without_a_mapping_it_lists_the_relevant_tests(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert upstream_tests.main([str(tree)]) == 0
    out = capsys.readouterr().out
    assert "test/dynamo/test_unspec.py: 2 relevant of 5 tests\n  UnspecTests.test_unspec_float_input\n" in out
    assert "listed" not in out


def test_a_folder_without_test_is_a_usage_error_that_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        upstream_tests.main([str(tmp_path)])
    assert exc.value.code == 2


def test_the_docstring_states_a_rule_for_every_file_in_rules() -> None:
    doc = upstream_tests.__doc__ or ""
    for rule in upstream_tests.RULES:
        assert rule.files in doc, f"the module docstring does not state the rule for {rule.files}"


SUBCLASSES = """
class Scaled(torch.Tensor):
    def __tensor_flatten__(self):
        return ["_data"], None


class OnlyTorchFunction(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs)


class SubclassTests(TestCase):
    def test_torch_function_subclass_recompiles(self):
        torch.compile(f)(OnlyTorchFunction(torch.ones(2)))

    def test_guards_on_scaled(self):
        torch.compile(f)(Scaled(torch.ones(2)))

    def test_two(self):
        torch.compile(f)(TwoTensor(a, b))

    def test_local_wrapper(self):
        class Local(torch.Tensor):
            def __tensor_flatten__(self):
                return [], None
        torch.compile(f)(Local())

    def test_two_never_compiled(self):
        TwoTensor(a, b)


class TestNestedTensor(TestCase):
    def _get_jagged(self):
        return torch.nested.nested_tensor_from_jagged(v, o)

    def test_jagged(self):
        torch.compile(f)(torch.nested.nested_tensor_from_jagged(v, o))

    def test_jagged_through_a_helper(self):
        torch.compile(f)(self._get_jagged())
"""


def test_subclass_tests_are_relevant_only_where_a_wrapper_subclass_reaches_the_wrapper(tmp_path: Path) -> None:
    """A __torch_function__-only subclass never reaches AOTAutograd's subclass wrapper; a traceable
    wrapper subclass does, whether the test names TwoTensor, one the file defines, or its own."""
    (tmp_path / "test/dynamo").mkdir(parents=True)
    (tmp_path / "test/dynamo/test_subclasses.py").write_text(SUBCLASSES)
    rep = upstream_tests.report_file(tmp_path, "test/dynamo/test_subclasses.py", None)
    assert rep.relevant == [
        "SubclassTests.test_guards_on_scaled",
        "SubclassTests.test_two",
        "SubclassTests.test_local_wrapper",
        "TestNestedTensor.test_jagged",
        "TestNestedTensor.test_jagged_through_a_helper",
    ]


def test_a_file_pinned_by_content_says_whether_the_tree_holds_that_text(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    (tmp_path / "test/functorch").mkdir(parents=True)
    path = tmp_path / "test/functorch/test_codegen_thing.py"
    path.write_text(CODEGEN)
    digest = hashlib.sha256(CODEGEN.encode()).hexdigest()
    pinned = (f"revisions:\n  test/functorch/test_codegen_thing.py: 'index copy 1, sha256 {digest}'\n"
              "tests:\n  - {file: test/functorch/test_codegen_thing.py, test: TestCodegenThing.test_gone, "
              "cases: [some/case]}\n")
    (tmp_path / "UPSTREAM.yaml").write_text(pinned)
    assert upstream_tests.main([str(tmp_path), "--against", str(tmp_path / "UPSTREAM.yaml")]) == 0
    same = capsys.readouterr().out
    assert "  not in the tree TestCodegenThing.test_gone" in same and "not the pinned one" not in same
    path.write_text(CODEGEN + "\n# a later revision\n")
    assert upstream_tests.main([str(tmp_path), "--against", str(tmp_path / "UPSTREAM.yaml")]) == 0
    assert f"the tree's text is not the pinned one (sha256 {digest[:12]})" in capsys.readouterr().out
