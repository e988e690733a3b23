"""Issue drafts: one per cause on the newest build, in PyTorch's bug template, plain PyTorch inside."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conformance.report import merge
from conformance.report.causes import cause_of
from conformance.report.write import write_report
from conformance.results import KnownFailureRef
from tests.helpers.records import changed, record, write_results

VALUES = {"check": "values", "where": "out[0]", "path": "out[0]", "role": "output", "subject": "out[0]",
          "expected": "[1.0]", "actual": "[2.0]"}
RAISES = {"check": "exception", "where": "call", "path": "call", "expected": "no exception",
          "actual": "BackendCompilerFailed: backend='inductor' raised: (caused by AssertionError: expected size 3==3, "
                    "stride 1==4 at dim=0)"}


def _fail(case: str, mismatch: dict[str, Any], build: str = "2.14.1", variant: str = "cpu-inductor-inference",
          **kw: Any) -> Any:
    return changed(record(case, variant=variant, status="fail", build=build), mismatches=(mismatch,),
                   reason="x", **kw)


def _drafts(tmp_path: Path, records: list[Any]) -> dict[str, str]:
    report = merge([write_results(tmp_path / "r.jsonl", records)])
    write_report(report, tmp_path / "out")
    folder = tmp_path / "out" / "issue-drafts"
    return {p.name: p.read_text() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def test_one_draft_per_cause_however_many_cases_show_it(tmp_path: Path) -> None:
    found = _drafts(tmp_path, [_fail("mutation_epilogue/a", VALUES), _fail("runtime_wrapper/b", VALUES),
                               _fail("mutation_epilogue/a", RAISES, variant="cpu-aot_eager-inference")])
    assert len(found) == 2, list(found)
    text = next(t for t in found.values() if "wrong values" in t)
    assert "in 2 programs" in text


def test_a_cause_is_apart_from_names_indices_and_numbers() -> None:
    other = {**RAISES, "actual": RAISES["actual"].replace("3==3", "7==7").replace("dim=0", "dim=2")}
    moved = {**VALUES, "where": "out[3]", "path": "out[3]", "subject": "out[3]"}
    a, b = (cause_of(_fail("x/a", m)) for m in (RAISES, other))
    assert a == b and a is not None and a.exception == "AssertionError: expected size N==N, stride N==N at dim=N"
    assert cause_of(_fail("x/a", VALUES)) == cause_of(_fail("x/b", moved))
    # an inner error of another type is another cause, though the outer type is the same
    expand = {**RAISES, "actual": "BackendCompilerFailed: backend='inductor' raised: (caused by RuntimeError: "
                                  "expand: the number of sizes provided (2) must be greater)"}
    assert cause_of(_fail("x/a", expand)) != a
    # where in its case file a caller's action raised is no part of the cause
    at = [{**RAISES, "path": "calls[0].after", "actual": f"RuntimeError: During the backward, we met a subclass at "
                                                        f"calls[{i}].after of cases/x/{name}"}
          for i, name in ((0, "one.yaml:3"), (1, "two.ya"))]
    # nor the program's names: inputs in parentheses, the autograd node that made a tensor, a guard's text
    for first, second in (
        ("AssertionError: input 0 (a) and input 1 (b) share storage",
         "AssertionError: input 1 (v3) and input 0 (x) share storage"),
        ("RuntimeError: modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of Clamp1, "
         "is at version 2",
         "RuntimeError: modified by an inplace operation: [torch.FloatTensor [4]], which is output 0 "
         "of torch::autograd::CopySlices, is at version 1"),
        ("RuntimeError: modified by an inplace operation: [torch.FloatTensor []], which is output 0 of Fill1, "
         "is at version 2",
         "RuntimeError: modified by an inplace operation: [torch.DoubleTensor [3, 3]] is at version 2"),  # a leaf
        ("AssertionError: Guard failed. Guard fail reason: 0/0: a.size()[0] != 3 # (_functorch/x.py:12)",
         "AssertionError: Guard failed. Guard fail reason: 0/1: c.stride()[1] <= 2 # a.mul_(2) # <program of y>"),
        ("AssertionError: mixed ._base states: ['a', 'b'] have", "AssertionError: mixed ._base states: ['c'] have"),
    ):
        pair = [cause_of(_fail("x/a", {**RAISES, "actual": text})) for text in (first, second)]
        assert pair[0] == pair[1], pair
    one, two = cause_of(_fail("x/a", at[0])), cause_of(_fail("x/b", at[1]))
    assert one == two and one is not None and one.exception == "RuntimeError: During the backward, we met a subclass"


def test_a_draft_is_plain_pytorch_with_a_short_title_and_the_versions_as_observed(tmp_path: Path) -> None:
    script = tmp_path / "reproducers" / "mutation_epilogue__a__cpu-inductor-inference.py"
    script.parent.mkdir()
    script.write_text('#!/usr/bin/env python3\n"""Docstring naming cases/mutation_epilogue/a.yaml.\n"""\nimport '
                      'torch\n\n\ndef f(x):\n    return x + 1\n')
    failing = changed(_fail("mutation_epilogue/a", VALUES), reproducer=str(script),
                      summary="An input doubled in place.")
    found = _drafts(tmp_path, [failing, record("mutation_epilogue/a", variant="cpu-inductor-inference",
                                               build="2.13.0")])
    (text,) = found.values()
    title = text.splitlines()[0].removeprefix("# ")
    assert len(title) < 90 and title.startswith("[torch.compile (inductor)]"), title
    assert "### 🐛 Describe the bug" in text and "### Versions" in text
    assert "```python\nimport torch\n\n\ndef f(x):\n    return x + 1\n```" in text
    assert "Docstring naming" not in text
    assert "- Regressed in 2.14.1+cpu (2.13.0+cpu does not show it)" in text
    body = text.split("\n---\n")[0]
    assert not re.search(r"CompileCounter|conformance\.|kiim|mutation_epilogue/a", body), body


def test_no_regression_is_claimed_where_no_older_build_passes(tmp_path: Path) -> None:
    found = _drafts(tmp_path, [_fail("mutation_epilogue/a", VALUES), _fail("mutation_epilogue/a", VALUES,
                                                                            build="2.13.0")])
    (text,) = found.values()
    assert "Regressed" not in text and "- Shows this on: 2.13.0+cpu, 2.14.1+cpu" in text


@pytest.mark.parametrize(("link", "drafted"), [("https://github.com/pytorch/pytorch/issues/2", False),
                                               ("https://github.com/pytorch/pytorch/pull/1", True)])
def test_a_known_failure_gets_a_draft_unless_it_links_an_issue(tmp_path: Path, link: str, drafted: bool) -> None:
    kf = KnownFailureRef(reason="why", link=link, source="cases/x.yaml")
    xfail = changed(record("mutation_epilogue/a", variant="cpu-inductor-inference", status="xfail", build="2.14.1"),
                    mismatches=(VALUES,), known_failure=kf)
    assert bool(_drafts(tmp_path, [xfail])) == drafted


def test_a_cause_fixed_on_the_newest_build_is_history_not_a_draft(tmp_path: Path) -> None:
    assert _drafts(tmp_path, [_fail("mutation_epilogue/a", VALUES, build="2.13.0"),
                              record("mutation_epilogue/a", variant="cpu-inductor-inference", build="2.14.1")]) == {}


def test_a_draft_reads_no_file_a_record_names_outside_its_reproducers_folder(tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("not for the report\n")
    leaky = changed(_fail("mutation_epilogue/a", VALUES), case_file="../secret.yaml", reproducer=str(tmp_path /
                                                                                                  "secret.py"))
    (text,) = _drafts(tmp_path, [leaky]).values()
    assert "not for the report" not in text


def test_the_innermost_error_is_found_in_a_summary_cut_short() -> None:
    from conformance.report.causes import innermost

    cut = ("BackendCompilerFailed: backend='inductor' raised: (caused by RuntimeError: one of the variables needed for "
           "gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]] is at ver")
    assert innermost(cut)[0] == "RuntimeError"
    assert innermost("IndexError: list index out of range") == ("IndexError", "list index out of range")


def test_aot_function_with_kept_input_mutations_is_aot_function_in_a_users_words(tmp_path: Path) -> None:
    kiim = _fail("mutation_epilogue/a", VALUES, variant="cpu-aot_function-kiim-inference")
    plain = _fail("runtime_wrapper/b", VALUES, variant="cpu-aot_function-inference")
    cause = cause_of(kiim)
    assert cause is not None and cause == cause_of(plain) and cause.entry == "aot_function"
    (text,) = _drafts(tmp_path, [kiim, plain]).values()
    assert text.startswith("# [aot_function]") and "kiim" not in text
    assert "aot_function, keep_inference_input_mutations=True (inference)" in text


def test_causes_whose_words_start_alike_get_a_draft_each(tmp_path: Path) -> None:
    inner = "AssertionError: " + "x" * 90
    first = {**RAISES, "actual": f"BackendCompilerFailed: backend='inductor' raised: (caused by {inner})"}
    second = {**first, "actual": first["actual"].replace("AssertionError", "AssertionError2")}
    found = _drafts(tmp_path, [_fail("mutation_epilogue/a", first), _fail("runtime_wrapper/b", second)])
    assert len(found) == 2, list(found)


def test_a_draft_shows_what_the_program_prints_not_the_reproducers_exit_status(tmp_path: Path) -> None:
    from conformance.reproducer import VERDICT_LINE

    script = tmp_path / "reproducers" / "mutation_epilogue__a__cpu-inductor-inference.py"
    script.parent.mkdir()
    script.write_text("\n".join(['"""Doc."""', "import sys", "", "import torch", "", "eager = torch.ones(1)",
                                 "compiled = torch.ones(1) * 2", "print('eager:   ', eager)",
                                 "print('compiled:', compiled)", VERDICT_LINE,
                                 "same = bool((compiled == eager).all())", "sys.exit(0 if same else 3)", ""]))
    (text,) = _drafts(tmp_path, [changed(_fail("mutation_epilogue/a", VALUES), reproducer=str(script))]).values()
    program = text.split("```python\n")[1].split("```")[0]
    assert program == ("import torch\n\neager = torch.ones(1)\ncompiled = torch.ones(1) * 2\nprint('eager:   ', eager)"
                       "\nprint('compiled:', compiled)\n"), program


@pytest.mark.parametrize(("kind", "drafted"), [("bug", True), ("eager_bug", True), ("benign", False),
                                               ("by_design", False)])
def test_only_a_known_bug_gets_a_draft_not_a_benign_or_by_design_difference(tmp_path: Path, kind: str,
                                                                            drafted: bool) -> None:
    known = KnownFailureRef(reason="r", link="https://github.com/pytorch/pytorch/pull/1", source="x", kind=kind)
    found = _drafts(tmp_path, [changed(_fail("mutation_epilogue/a", VALUES), status="xfail", known_failure=known)])
    assert bool(found) == drafted


@pytest.mark.parametrize(("actual", "expected", "says"), [("False", "True", "stays where eager's moves"),
                                                          ("True", "False", "moves where eager's stays")])
def test_a_version_counter_title_says_which_way_in_words(actual: str, expected: str, says: str) -> None:
    from conformance.report.drafts import title
    from conformance.results import ResultRecord

    m = {"check": "_version moved", "where": "input a", "path": "input a", "role": "input", "subject": "a",
         "expected": expected, "actual": actual}
    rec = ResultRecord.model_validate({"case_id": "c", "variant": "cpu-aot_eager-training", "status": "fail",
                                       "backend": "aot_eager", "mismatches": [m]})
    cause = cause_of(rec)
    assert cause is not None
    text = title(cause, ["aot_eager", "inductor"])
    assert text.endswith(f"an input's version counter {says}") and len(text) < 90, text


def test_a_draft_quotes_the_innermost_error_as_the_build_wrote_it(tmp_path: Path) -> None:
    """The cause's key normalises numbers and shapes away; the maintainer reads the message itself."""
    raised = {**RAISES, "actual": "InductorError: AssertionError: size=[12], stride=[4, 1] "
                                  "(caused by AssertionError: size=[12], stride=[4, 1])"}
    (text,) = _drafts(tmp_path, [_fail("mutation_epilogue/a", raised)]).values()
    assert "The innermost error: `AssertionError: size=[12], stride=[4, 1]`." in text, text


@pytest.mark.parametrize(("actual", "expected", "says"), [
    ("RuntimeError: boom", "no exception", "raises RuntimeError where eager runs"),
    ("no exception", "RuntimeError: boom", "does not raise the RuntimeError eager raises"),
    ("TypeError: other", "RuntimeError: boom", "raises TypeError where eager raises otherwise"),
])
def test_an_exception_title_says_which_side_raised(actual: str, expected: str, says: str) -> None:
    """A compiled call that stays silent where eager raises was titled "raises ... where eager runs"."""
    from conformance.report.drafts import title
    from conformance.results import ResultRecord

    m = {"check": "exception", "where": "call", "path": "call", "expected": expected, "actual": actual}
    rec = ResultRecord.model_validate({"case_id": "c", "variant": "cpu-aot_eager-inference", "status": "fail",
                                       "backend": "aot_eager", "mismatches": [m]})
    cause = cause_of(rec)
    assert cause is not None
    assert title(cause, ["aot_eager"]) == f"[torch.compile (aot_eager)] {says}"


def test_an_item_with_a_by_design_difference_beside_a_bug_gets_a_draft_for_the_bug_only(tmp_path: Path) -> None:
    structure = {"check": "number of outputs", "where": "outputs", "path": "outputs", "expected": "2", "actual": "3"}
    grad = {"check": ".grad", "where": "grad of la", "path": "grad of la", "role": "grad", "subject": "la",
            "expected": "None", "actual": "a tensor"}
    design = KnownFailureRef(reason="on purpose", link="https://github.com/pytorch/pytorch/pull/3", kind="by_design",
                             source="cases/x.yaml:9")
    bug = KnownFailureRef(reason="a zero grad", link="https://github.com/pytorch/pytorch/pull/4", kind="bug",
                          source="cases/x.yaml:3")
    xfail = changed(record("runtime_wrapper/a", variant="cpu-inductor-training", status="xfail", build="2.14.1"),
                    mismatches=({**structure, "known": 0}, {**grad, "known": 1}), known_failures=(design, bug))
    (text,) = _drafts(tmp_path, [xfail]).values()
    first = text.splitlines()[0]
    assert first == "# [torch.compile (inductor)] an input's leaf gets a .grad where eager leaves it None", first
    assert "grad of la: .grad is a tensor, eager gives None" in text and "number of outputs" not in text
    assert "pull/4" in text and "pull/3" not in text
    assert _drafts(tmp_path / "only", [changed(xfail, mismatches=({**structure, "known": 0},),
                                               known_failures=(design,))]) == {}


@pytest.mark.parametrize("check", ["shares storage with", "is the input object", "inner tensors", "storage size",
                                   "dtype", "storage_offset"])
def test_a_title_reads_as_a_sentence_and_is_never_cut(check: str) -> None:
    from conformance.report.drafts import title
    from conformance.results import ResultRecord

    m = {"check": check, "where": "out[0]", "path": "out[0]", "role": "output", "subject": "out[0]",
         "expected": "x" * 200, "actual": "y" * 200}
    cause = cause_of(ResultRecord.model_validate({"case_id": "c", "variant": "cpu-aot_eager-training",
                                                  "status": "fail", "backend": "aot_eager", "mismatches": [m]}))
    assert cause is not None
    text = title(cause, ["aot_eager", "inductor", "a-backend-with-a-very-long-name-that-makes-the-title-long"])
    assert "…" not in text and " of an output differs" not in text and text.startswith("[torch.compile ("), text


def _scripted(tmp_path: Path) -> Any:
    script = tmp_path / "reproducers" / "mutation_epilogue__a__cpu-inductor-inference.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text('#!/usr/bin/env python3\n"""Docstring.\n"""\nimport torch\n\nprint("compiled differs")\n')
    return changed(_fail("mutation_epilogue/a", VALUES), reproducer=str(script))


def test_a_draft_shows_what_its_program_printed_never_the_record(tmp_path: Path) -> None:
    from conformance.report.draft_output import Captured, key
    from conformance.report.drafts import drafts

    report = merge([write_results(tmp_path / "r.jsonl", [_scripted(tmp_path)])])
    (pending,) = drafts(report)
    assert "Not yet run as published on torch 2.14.1+cpu" in pending.text and "compiled: [2.0]" not in pending.text
    assert pending.program == 'import torch\n\nprint("compiled differs")\n'
    ran = {key(pending.program, pending.torch_version): Captured("2.14.1+cpu", 3, "compiled differs\nMISMATCH")}
    (shown,) = drafts(report, ran)
    assert "it prints (and exits with status 3):\n\n```\ncompiled differs\nMISMATCH\n```" in shown.text
    other = {key(pending.program + "# changed\n", pending.torch_version): Captured("2.14.1+cpu", 0, "other")}
    assert "Not yet run" in drafts(report, other)[0].text  # another program's output is not this one's


def test_a_draft_program_runs_as_a_file_of_its_own_and_its_output_is_kept(tmp_path: Path) -> None:
    from conformance.report.draft_output import load, run, save

    ran = run("import sys\nprint('eager: 1')\nprint('compiled: 2', file=sys.stderr)\nraise SystemExit(3)\n",
              "2.14.1+cpu")
    assert (ran.exit_status, ran.output) == (3, "eager: 1\ncompiled: 2")
    slow = run("import time\nprint('started', flush=True)\ntime.sleep(30)\n", "x", timeout=2)
    assert slow.exit_status == -1 and slow.output.startswith("started") and "stopped after 2 s" in slow.output
    crash = run("raise RuntimeError('boom')\n", "x")
    assert crash.exit_status == 1 and 'File "repro.py", line 1' in crash.output and "draft-" not in crash.output
    # torch's own frames and warnings name the installed package, not the folder this machine installed it in
    warned = run("import warnings, torch\nwarnings.warn_explicit('w', UserWarning, torch.__file__, 7)\n", "x")
    assert "<site-packages>/torch/__init__.py:7: UserWarning: w" in warned.output, warned.output
    assert "/site-packages" not in warned.output.replace("<site-packages>/", ""), warned.output
    save(tmp_path, {"k": ran})
    assert load(tmp_path) == {"k": ran}
    (tmp_path / ".captured.json").write_text("{not json")
    assert load(tmp_path) == {}


def test_a_draft_says_how_upstream_was_searched(tmp_path: Path) -> None:
    from conformance.schema.known import Searched

    searched = Searched(queries=("aot_function zero grad", "unused mutated input grad"),
                        nearest="https://github.com/pytorch/pytorch/issues/5", why_not="about inductor only")
    kf = KnownFailureRef(reason="why", link="https://github.com/pytorch/pytorch/pull/1", source="cases/x.yaml:3",
                         searched=searched)
    xfail = changed(record("mutation_epilogue/a", variant="cpu-inductor-inference", status="xfail", build="2.14.1"),
                    mismatches=({**VALUES, "known": 0},), known_failures=(kf,))
    (text,) = _drafts(tmp_path, [xfail]).values()
    assert "- Queries: `aot_function zero grad`; `unused mutated input grad`" in text
    assert "- Nearest: https://github.com/pytorch/pytorch/issues/5 (not this bug: about inductor only)" in text
    bare = changed(xfail, known_failures=(kf.model_copy(update={"searched": None}),))
    (text,) = _drafts(tmp_path / "bare", [bare]).values()
    assert "Not yet searched for an existing issue." in text


def test_a_captured_output_is_kept_beside_the_drafts_for_the_next_report(tmp_path: Path) -> None:
    from conformance.report.draft_output import CAPTURED, Captured

    report = merge([write_results(tmp_path / "r.jsonl", [_scripted(tmp_path)])])
    asked: list[str] = []

    def capture(program: str, build: str) -> Captured | None:
        asked.append(build)
        return Captured(build, 3, "compiled differs") if build == "2.14.1+cpu" else None

    out = tmp_path / "out"
    write_report(report, out, capture=capture)
    (text,) = (p.read_text() for p in (out / "issue-drafts").glob("*.md"))
    assert "it prints (and exits with status 3):\n\n```\ncompiled differs\n```" in text and asked == ["2.14.1+cpu"]
    write_report(report, out)  # no capture: what was printed is still shown
    (again,) = (p.read_text() for p in (out / "issue-drafts").glob("*.md"))
    assert again == text and (out / "issue-drafts" / CAPTURED).is_file()
    write_report(report, out, capture=capture)
    assert asked == ["2.14.1+cpu"]  # kept: not run again


def test_report_capture_drafts_refuses_a_python_without_torch_and_says_so(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.report import draft_output
    from conformance.report.cli import _capture

    monkeypatch.setattr(draft_output, "installed_torch", lambda: None)
    assert _capture() is None and "imports no torch" in capsys.readouterr().err
    monkeypatch.setattr(draft_output, "installed_torch", lambda: "2.14.1+cpu")
    monkeypatch.setattr(draft_output, "run", lambda program, version: draft_output.Captured(version, 0, program))
    capture = _capture()
    assert capture is not None and capture("p", "2.13.0+cpu") is None and capture("p", "2.14.1+cpu") is not None


def test_a_drafts_versions_say_where_its_cause_shows_not_where_its_item_fails(tmp_path: Path) -> None:
    structure = {"check": "number of outputs", "where": "outputs", "path": "outputs", "expected": "2", "actual": "3"}
    design = KnownFailureRef(reason="on purpose", link="https://github.com/pytorch/pytorch/pull/3", kind="by_design",
                             source="cases/x.yaml:9")
    older = changed(record("runtime_wrapper/a", variant="cpu-inductor-inference", status="xfail", build="2.13.0"),
                    mismatches=({**structure, "known": 0},), known_failures=(design,))
    newer = changed(_fail("runtime_wrapper/a", VALUES), mismatches=({**structure, "known": 0}, VALUES),
                    known_failures=(design,))
    (text,) = _drafts(tmp_path, [older, newer]).values()
    assert "- Shows this on: 2.14.1+cpu" in text and "- Not on: 2.13.0+cpu" in text
    assert "- Regressed in 2.14.1+cpu (2.13.0+cpu does not show it)" in text


def test_a_case_error_is_never_a_draft(tmp_path: Path) -> None:
    broken = changed(record("runtime_wrapper/a", variant="cpu-inductor-inference", status="error", build="2.14.1"),
                     reason="case error: out[0]: values ... is covered by 2 known failures (c.yaml:3, c.yaml:9)")
    assert _drafts(tmp_path, [broken]) == {}


def test_a_draft_for_a_bug_of_eager_says_eager_is_the_one_that_is_wrong(tmp_path: Path) -> None:
    eager = KnownFailureRef(reason="eager skips the bump", link="https://github.com/pytorch/pytorch/pull/8",
                            kind="eager_bug", source="cases/x.yaml:3")
    xfail = changed(record("mutation_epilogue/a", variant="cpu-inductor-inference", status="xfail", build="2.14.1"),
                    mismatches=({**VALUES, "known": 0},), known_failures=(eager,))
    (text,) = _drafts(tmp_path, [xfail]).values()
    assert text.splitlines()[0].endswith("(eager is the one that is wrong)")
    assert "Eager differs from compiled at out[0], and eager is the one that is wrong" in text


def test_a_draft_program_runs_without_the_callers_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.report.draft_output import run

    monkeypatch.setenv("GITHUB_TOKEN", "s3cret")
    ran = run("import os\nprint(os.environ.get('GITHUB_TOKEN'), 'PATH' in os.environ)\n", "x")
    assert ran.output == "None True"


def test_one_bug_that_shows_as_several_mismatches_is_one_draft(tmp_path: Path) -> None:
    def flag(check: str, where: str, role: str, actual: str, expected: str) -> dict[str, Any]:
        return {"check": check, "where": where, "path": where, "role": role, "subject": where.rsplit(maxsplit=1)[-1],
                "expected": expected, "actual": actual}

    grad = flag(".grad", "grad of a.leaf", "grad", "a tensor", "None")
    bug = KnownFailureRef(reason="enable_grad under inference mode", link="https://github.com/pytorch/pytorch/pull/1",
                          kind="bug", source="cases/a.yaml:3")
    other = KnownFailureRef(reason="a zero grad", link="https://github.com/pytorch/pytorch/pull/2", kind="bug",
                            source="cases/b.yaml:3")
    three = changed(record("runtime_wrapper/a", variant="cpu-inductor-training", status="xfail", build="2.14.1"),
                    known_failures=(bug,), mismatches=(
                        {**flag("requires_grad", "out[0]", "output", "True", "False"), "known": 0},
                        {**flag("is_leaf", "out[0]", "output", "False", "True"), "known": 0}, {**grad, "known": 0}))
    one = changed(record("runtime_wrapper/b", variant="cpu-inductor-training", status="xfail", build="2.14.1"),
                  known_failures=(other,), mismatches=({**grad, "known": 0},))
    found = _drafts(tmp_path, [three, one])
    assert len(found) == 2, list(found)
    (joint,) = (t for t in found.values() if "requires grad" in t.splitlines()[0])
    assert "The same bug shows too:\n- at out[0]: is_leaf is False, eager gives True\n- at grad of a.leaf" in joint
    (alone,) = (t for t in found.values() if t is not joint)
    assert "gets a .grad where eager leaves it None" in alone.splitlines()[0]


def test_one_bug_seen_through_more_or_fewer_checks_in_two_variants_is_one_draft(tmp_path: Path) -> None:
    def flag(check: str, where: str, role: str) -> dict[str, Any]:
        return {"check": check, "where": where, "path": where, "role": role, "subject": where.rsplit(maxsplit=1)[-1],
                "expected": "True", "actual": "False", "known": 0}

    entry = KnownFailureRef(reason="requires_grad_ not replayed", link="https://github.com/pytorch/pytorch/pull/1",
                            kind="bug", source="cases/a.yaml:3")
    inference = changed(record("runtime_wrapper/a", variant="cpu-aot_function-inference", status="xfail",
                               build="2.14.1"), known_failures=(entry,), mismatches=(
        flag("requires_grad", "out[0]", "output"), flag("requires_grad", "input a", "input")))
    training = changed(record("runtime_wrapper/a", variant="cpu-aot_function-training", status="xfail",
                              build="2.14.1"), known_failures=(entry,), mismatches=(
        flag("requires_grad", "input a", "input"),))
    (text,) = _drafts(tmp_path, [inference, training]).values()
    assert "Seen with aot_function (inference), aot_function (training)." in text
    other = changed(training, known_failures=(entry.model_copy(update={"link": "https://github.com/pytorch/pytorch/"
                                                                               "pull/2"}),))
    assert len(_drafts(tmp_path / "two", [inference, other])) == 2  # another upstream link: another bug
