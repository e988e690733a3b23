"""compat.md, index.html, compat.json and the run's last line tell one story, read from one model
(issue 42, item 6): the headline agrees with what needs a person, matrix cells say what they hold,
a difference by design or benign never makes a build look worse, a cause carries its entry point,
a link says what it links to, long lists are folded with their counts."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.report import merge, model, words, write_report
from conformance.report.document import KindCountDoc
from conformance.report.model import Report
from conformance.report.trend import scores
from conformance.report.words import verdict_line
from conformance.results import ResultRecord
from tests.helpers.records import full_build, record, write_results

OLD, NEW = "2.13.0+cpu@cf30153c4c13", "2.14.1+cpu@5c4886908584"
PR = "https://github.com/pytorch/pytorch/pull/177764"
ISSUE = "https://github.com/pytorch/pytorch/issues/90507"  # a known bug with its issue: no draft to file
BLOB = "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_functorch/_aot_autograd/utils.py"


Items = Mapping[str, tuple[str, str | None]]  # case id: (status, known failure kind)


def _known(kind: str, link: str = PR) -> dict[str, str]:
    return {"reason": f"a {kind}", "link": link, "source": "cases/x.yaml:9", "kind": kind}


def _mismatch(**kw: Any) -> dict[str, Any]:
    return {"check": "values", "where": "out[0]", "expected": "[1.0]", "actual": "[2.0]", "role": "output",
            "subject": "out[0]", "path": "out[0]", **kw}


def _build(build: str, items: Items, link: str = PR) -> list[ResultRecord]:
    """full_build, with (status, known failure kind) per case id, each known failure linking `link`."""
    out = []
    for r in full_build(build):
        if r.case_id not in items:
            out.append(r)
            continue
        status, kind = items[r.case_id]
        out.append(record(r.case_id, r.variant, status, build, known_failure=_known(kind, link) if kind else None,
                          mismatches=(_mismatch(),) if status in ("xfail", "fail") else ()))
    return out


def _report(tmp_path: Path, old: Items, new: Items, link: str = PR) -> Report:
    return merge([write_results(tmp_path / "a.jsonl", _build("2.13.0", old, link)),
                  write_results(tmp_path / "b.jsonl", _build("2.14.1", new, link))])


# 2.14.1: runtime_wrapper/a newly fails as a known bug; mutation_epilogue/a is a known bug on both builds;
# subclass_wrapper/a differs by design on both
BOTH = {"mutation_epilogue/a": ("xfail", "bug"), "subclass_wrapper/a": ("xfail", "by_design")}
REGRESSING = {**BOTH, "runtime_wrapper/a": ("xfail", "bug")}


def _h2(html: str, section: str) -> str:
    found = re.search(rf'<section id="{section}">\s*<h2>(.*?)</h2>', html, re.DOTALL)
    assert found is not None, section
    return re.sub(r"<[^>]+>", "", found[1])


def _summary(html: str) -> str:
    found = re.search(r'<p id="summary">(.*?)</p>', html, re.DOTALL)
    assert found is not None
    return " ".join(re.sub(r"<[^>]+>", "", found[1]).split())


def test_the_headline_agrees_with_what_needs_a_person(tmp_path: Path) -> None:
    """A known bug (its issue filed) that newly fails is triaged: nothing needs a person, and the headline,
    the page's sections and compat.md all say so and name the newly failing item."""
    report = _report(tmp_path, BOTH, REGRESSING, ISSUE)
    bad, note = report.headline()
    assert bad == "" and note.startswith("1 item(s) newly fail since the release before"), note
    write_report(report, tmp_path / "out")
    html = (tmp_path / "out" / "index.html").read_text()
    md = (tmp_path / "out" / "compat.md").read_text()
    assert _h2(html, "attention") == "Needs a person (0)"
    assert _h2(html, "newly-failing").startswith("Newly failing since the release before (1)")
    summary = _summary(html)
    assert summary.count("Nothing needs a person") == 1 and "1 item(s) newly fail" in summary, summary
    assert 'class="news"' in html  # neither the all-clear green nor the alarm red
    assert "## Needs a person (0)" in md and "## Newly failing since the release before (1)" in md
    assert "Nothing needs a person" in md.splitlines()[2] and "1 item(s) newly fail" in md.splitlines()[2]
    assert "runtime_wrapper/a" in md[md.index("## Newly failing"):md.index("## Causes")]


def test_an_untriaged_failure_is_in_the_headline_and_in_needs_a_person(tmp_path: Path) -> None:
    report = _report(tmp_path, BOTH, {**BOTH, "runtime_wrapper/a": ("fail", None)}, ISSUE)
    bad, _ = report.headline()
    assert bad.startswith("Something needs a person: 1 failing item(s)"), bad
    write_report(report, tmp_path / "out")
    html = (tmp_path / "out" / "index.html").read_text()
    md = (tmp_path / "out" / "compat.md").read_text()
    assert _h2(html, "attention") == "Needs a person (1)"
    assert "Nothing needs a person" not in _summary(html) and "Something needs a person" in _summary(html)
    assert "## Needs a person (1)" in md and "Something needs a person" in md.splitlines()[2]
    assert "fails (untriaged) on 2.14.1+cpu" in md


def test_matrix_cells_say_what_they_hold_with_a_legend(tmp_path: Path) -> None:
    report = _report(tmp_path, BOTH, REGRESSING)
    shade = {(c.behavior, c.build): c.shade for c in report.cells()}
    assert shade[("runtime_wrapper", NEW)] == "new" and shade[("runtime_wrapper", OLD)] == "pass"
    assert shade[("mutation_epilogue", NEW)] == "bug" and shade[("subclass_wrapper", NEW)] == "difference"
    assert shade[("backward_unwrap", NEW)] == "pass"
    write_report(report, tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    html = (tmp_path / "out" / "index.html").read_text()
    assert "| runtime_wrapper | **all pass** 2 pass | **NEWLY FAILING** 1 pass · 1 known bug · 1 newly failing |" in md
    assert "| subclass_wrapper | **by design / benign** 1 pass · 1 by design | " \
           "**by design / benign** 1 pass · 1 by design |" in md
    for name in ("new", "bug", "difference", "pass"):
        word = model.SHADES[name][0]
        assert f"**{word}**: " in md[md.index("## Matrix"):], name  # the legend
        assert re.search(rf'<td class="cell {name} v-\w+"', html), name
        assert f'<span class="cell {name}">{word}</span>' in html, name  # the page's legend


def test_a_difference_by_design_never_makes_a_build_look_worse(tmp_path: Path) -> None:
    design = _report(tmp_path / "d", {}, {"subclass_wrapper/a": ("xfail", "by_design")})
    bug = _report(tmp_path / "b", {}, {"subclass_wrapper/a": ("xfail", "bug")})
    newest = design.verdicts()[0]
    assert newest.new == 0 and bug.verdicts()[0].new == 1
    assert design.regressions() == [] and len(bug.regressions()) == 1
    assert design.cell("subclass_wrapper", NEW, "cpu").shade == "difference"
    assert bug.cell("subclass_wrapper", NEW, "cpu").shade == "new"
    assert scores(design, "cpu")["subclass_wrapper"] == [1.0, 1.0]
    assert scores(bug, "cpu")["subclass_wrapper"] == [1.0, 0.5]
    line = verdict_line(newest)
    assert "passes 9 of 10 items, 10 with the 1 that differ only by design or benignly" in line, line
    assert "not bugs: 1 difference(s) by design (1 items)" in line, line
    bad, note = design.headline()
    assert bad == "" and "newly fail" not in note


def test_bugs_eager_bugs_benign_and_by_design_are_counted_apart(tmp_path: Path) -> None:
    kinds = {"mutation_epilogue/a": "bug", "runtime_wrapper/a": "eager_bug", "subclass_wrapper/a": "benign",
             "backward_unwrap/a": "by_design"}
    report = _report(tmp_path, {}, {c: ("xfail", k) for c, k in kinds.items()})
    cells = {c.behavior: c.shade for c in report.cells() if c.build == NEW}
    # eager's bug is a bug of the build (its eager), benign and by design are not
    assert cells == {"mutation_epilogue": "new", "runtime_wrapper": "new", "subclass_wrapper": "difference",
                     "backward_unwrap": "difference", "scalar_recompile": "pass"}
    line = verdict_line(report.verdicts()[0])
    assert "known: 1 known bug(s) (1 items), 1 bug(s) of eager's (compiled is right) (1 items); not bugs: " \
           "1 benign difference(s) (1 items), 1 difference(s) by design (1 items)" in line, line
    write_report(report, tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    assert "**NEWLY FAILING** 1 pass · 1 eager's bug · 1 newly failing" in md


def test_a_cause_carries_its_entry_point_everywhere(tmp_path: Path) -> None:
    recs = [record(f"runtime_wrapper/{name}", variant, "xfail", "2.14.1", known_failure=_known("bug"),
                   mismatches=(_mismatch(),))
            for name, variant in (("a", "cpu-aot_eager-inference"), ("b", "cpu-aot_function-inference"))]
    report = merge([write_results(tmp_path / "r.jsonl", recs)])
    words = sorted(g.words for g in report.causes())
    assert words == ["values at an output: differs (aot_function)", "values at an output: differs (torch.compile)"]
    write_report(report, tmp_path / "out")
    html = (tmp_path / "out" / "index.html").read_text()
    md = (tmp_path / "out" / "compat.md").read_text()
    doc = json.loads((tmp_path / "out" / "compat.json").read_text())
    assert sorted(g["words"] for g in doc["causes"]) == words
    for w in words:
        assert f"<td>{w}</td>" in html and f"| {w} |" in md, w


def test_a_link_says_what_it_links_to() -> None:
    label = words.link_label
    assert label(PR) == "#177764"
    assert label("https://github.com/pytorch/pytorch/issues/90507") == "#90507"
    assert label(BLOB) == "utils.py@v2.13.0"
    assert label(BLOB + "#L120") == "utils.py@v2.13.0#L120"
    assert label("https://github.com/pytorch/vision/issues/12") == "pytorch/vision#12"
    assert label("cases/runtime_wrapper/upstream/many_outputs.yaml") == "runtime_wrapper/upstream/many_outputs"
    assert label("https://discuss.pytorch.org/t/some-topic/1234") == "discuss.pytorch.org/t/some-topic/1234"


def test_the_causes_table_links_say_what_they_link_to_and_start_clean(tmp_path: Path) -> None:
    recs = [record("runtime_wrapper/a", "cpu-aot_eager-inference", "xfail", "2.14.1", known_failure=_known("bug"),
                   mismatches=(_mismatch(),)),
            record("runtime_wrapper/b", "cpu-aot_eager-inference", "xfail", "2.14.1",
                   known_failure=_known("bug", BLOB), mismatches=(_mismatch(),))]
    write_report(merge([write_results(tmp_path / "r.jsonl", recs)]), tmp_path / "out")
    html = (tmp_path / "out" / "index.html").read_text()
    md = (tmp_path / "out" / "compat.md").read_text()
    (row,) = re.findall(r'<tr id="cause-[^"]+">(.*?)</tr>', html)
    last = re.findall(r"<td>(.*?)</td>", row)[-1]
    assert not re.sub(r"<[^>]+>", "", last).lstrip().startswith("·"), last
    assert f'<a href="{PR}">#177764</a>' in last and f'<a href="{BLOB}">utils.py@v2.13.0</a>' in last
    assert ">upstream</a>" not in html
    assert f"[#177764]({PR})" in md and f"[utils.py@v2.13.0]({BLOB})" in md


def test_long_lists_are_folded_with_their_counts_in_both(tmp_path: Path) -> None:
    n = model.FOLD_AT + 5
    recs = [record(f"runtime_wrapper/c{i}", "cpu-aot_eager-inference", "xfail", "2.14.1",
                   known_failure=_known("bug"), recompiles="2 graphs over 3 calls",
                   mismatches=(_mismatch(check="exception", actual=f"RuntimeError: {'x' * (i + 1)}",
                                         expected="no exception"),)) for i in range(n)]
    report = merge([write_results(tmp_path / "r.jsonl", recs)])
    assert len(report.causes()) == n
    write_report(report, tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    html = (tmp_path / "out" / "index.html").read_text()
    assert f"<details><summary>{n} causes</summary>" in md
    assert f"<details><summary>{n} items that recompiled</summary>" in md
    assert md.count("<details>") == md.count("</details>")
    causes = html[html.index('<section id="causes">'):html.index('<section id="matrix-section">')]
    assert re.search(rf"<details[^>]*><summary>{n} causes</summary>", causes), causes[:600]
    # a short list stays open
    few = merge([write_results(tmp_path / "few.jsonl", recs[:3])])
    write_report(few, tmp_path / "few")
    assert "<details>" not in (tmp_path / "few" / "compat.md").read_text()


def test_markdown_shows_brackets_as_written(tmp_path: Path) -> None:
    recs = [record("runtime_wrapper/a", "cpu-aot_eager-inference", "xfail", "2.14.1", known_failure=_known("bug"),
                   mismatches=(_mismatch(check="exception", expected="no exception",
                                         actual="AssertionError: expected <class 'int'>, got <class 'float'>"),))]
    write_report(merge([write_results(tmp_path / "r.jsonl", recs)]), tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    assert "&lt;" not in md and "&gt;" not in md
    assert "`AssertionError: expected <class '?'>, got <class '?'>`" in md
    # a summary in text: a bracket escaped the Markdown way, which reads as itself once rendered
    failing = [record("runtime_wrapper/a", status="fail", build="2.14.1", summary="<script>x</script> | y")]
    write_report(merge([write_results(tmp_path / "f.jsonl", failing)]), tmp_path / "f")
    md = (tmp_path / "f" / "compat.md").read_text()
    assert "\\<script\\>x\\</script\\> \\| y (runtime_wrapper)" in md and "<script>" not in md
    assert "&lt;" not in md


def test_the_cell_shades_are_declared_once_for_the_page_and_compat_json() -> None:
    from typing import get_args

    from conformance.report.document import CellShade
    from conformance.report.model import SHADES

    assert list(get_args(CellShade)) == list(SHADES)


STRUCTURE = {"check": "number of outputs", "where": "outputs", "path": "outputs", "expected": "2", "actual": "3"}
VALUES = {"check": "values", "where": "out[0]", "path": "out[0]", "role": "output", "subject": "out[0]",
          "expected": "[1.0]", "actual": "[2.0]"}


def test_an_item_with_a_by_design_difference_beside_a_bug_counts_both_causes_each_by_its_kind(tmp_path: Path) -> None:
    both = record("runtime_wrapper/z", status="xfail", build="2.14.1", mismatches=(
        {**STRUCTURE, "known": 0}, {**VALUES, "known": 1}), known_failures=(_known("by_design"), _known("bug")))
    report = merge([write_results(tmp_path / "r.jsonl", [both, *full_build("2.14.1")[1:]])])
    (v,) = report.verdicts()
    assert v.known_by_kind["bug"] == KindCountDoc(items=1, causes=1)
    assert v.known_by_kind["by_design"] == KindCountDoc(items=0, causes=1)
    assert "1 difference(s) by design (beside worse ones in the same items)" in verdict_line(v)
    kinds = {c.key.split(" | ")[1]: c.kinds for c in report.causes()}
    assert kinds == {"number of outputs": ["by_design"], "values": ["bug"]}


def test_what_needs_a_person_shows_the_difference_no_known_failure_covers(tmp_path: Path) -> None:
    from conformance.report.html import _first_failing
    from conformance.report.read import Sourced

    failing = record("runtime_wrapper/a", status="fail", build="2.14.1", reason="values differ",
                     mismatches=({**STRUCTURE, "known": 0}, VALUES), known_failures=(_known("by_design"),))
    assert _first_failing(Sourced(failing, "x", 1, "b")).startswith("out[0]: values is [2.0]")


def test_an_expectation_that_covers_a_later_mismatch_is_not_stale(tmp_path: Path) -> None:
    exp = tmp_path / "vendor.yaml"
    exp.write_text("entries:\n  - case: runtime_wrapper/a\n    reason: r\n    link: https://github.com/pytorch/pytorch/"
                   "issues/1\n    covers: [{check: values}]\n")
    vendor = {**_known("bug"), "source": f"{exp}:2"}
    item = record("runtime_wrapper/a", status="xfail", build="2.14.1", mismatches=(
        {**STRUCTURE, "known": 0}, {**VALUES, "known": 1}), known_failures=(_known("by_design"), vendor))
    report = merge([write_results(tmp_path / "r.jsonl", [item])], expectations=[exp])
    assert report.stale == []


def test_a_hostile_link_is_shown_not_followed_and_never_breaks_the_report(tmp_path: Path) -> None:
    from conformance.report.markdown import _link

    assert words.link_label("https://[x/issues/1") == "https://[x/issues/1"
    assert _link("javascript:alert(1)") == "[alert(1)](#unsafe-link)"
    assert "\n" not in _link("https://x/a\n\n<script>x</script>")
    assert not re.search(r"(?<!\\)<script", _link("https://x/<script>"))  # escaped, it reads as text
    item = record("runtime_wrapper/a", status="xfail", build="2.14.1", mismatches=({**VALUES, "known": 0},),
                  known_failures=(_known("bug", "https://[x/issues/1"),))
    write_report(merge([write_results(tmp_path / "r.jsonl", [item])]), tmp_path / "out")
    assert "https://[x/issues/1" in (tmp_path / "out" / "compat.md").read_text()


def test_a_published_text_names_no_folder_the_report_was_made_from_whatever_its_root() -> None:
    from conformance.report.write import public_text

    text = "from /gpfs/u/me/runs/2.15/results.jsonl:3, /gpfs/u/me/runs/2.15/reproducers/a.py"
    assert public_text(text, ("/gpfs/u/me/runs/2.15",)) == "from 2.15/results.jsonl:3, reproducers/a.py"


def _diverging(declared: str = "") -> dict[str, Any]:
    return {"results": [{"behavior": "runtime_wrapper", "status": "diverges", "diff": "-replays aliases: True",
                         "declared": declared}]}


def test_an_undeclared_divergence_on_a_passing_item_needs_a_person(tmp_path: Path) -> None:
    """The reference and the build disagree where the contract holds: one of them is wrong, so the
    headline, both pages and the exit status say so; declared (reviewed), it does not."""
    from tests.helpers.records import changed

    def report_with(declared: str) -> Report:
        recs = [changed(r, probes=_diverging(declared)) if r.case_id == "runtime_wrapper/a" else r
                for r in _build("2.14.1", {})]
        return merge([write_results(tmp_path / f"{bool(declared)}.jsonl", recs)])

    report = report_with("")
    bad, _ = report.headline()
    assert "1 passing item(s) whose internals probe diverges undeclared" in bad, bad
    assert report.exit_code() == 1
    write_report(report, tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    html = (tmp_path / "out" / "index.html").read_text()
    assert "## Needs a person (1)" in md
    assert "### Internals diverging where the contract passes, undeclared (1)" in md
    assert "runtime_wrapper/a" in md.split("undeclared (1)")[1].split("###")[0]
    assert _h2(html, "attention") == "Needs a person (1)"
    assert "internals probe diverges, undeclared: runtime_wrapper: -replays aliases: True" in html
    declared = report_with("benign https://github.com/pytorch/pytorch/pull/181271 at cases/x.yaml:12")
    assert declared.headline()[0] == "" and declared.exit_code() == 0
    write_report(declared, tmp_path / "out2")
    md = (tmp_path / "out2" / "compat.md").read_text()
    assert "### Internals diverging where the contract passes, undeclared (0)" in md
    from conformance.report.history import mechanism_word

    assert mechanism_word({"declared": 1, "conforms": 3}) == "diverges only as declared"
    assert mechanism_word({"diverges": 1, "declared": 1}) == "diverges"
    assert mechanism_word({"not-modelled": 2}) == "not-modelled"
