"""A newcomer's first run (issue 44): the report command's closing lines say what the report says needs
a person and name the files to open; a device with no item that ran gets no verdict line; compat.md
shows a record's text as written, and never as live HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.report import merge, write_report
from conformance.report.model import ATTENTION
from conformance.results import ResultRecord
from tests.helpers.records import changed, full_build, record, write_results

PR = "https://github.com/pytorch/pytorch/pull/177764"  # a fix's pull request: no issue describes the bug
ISSUE = "https://github.com/pytorch/pytorch/issues/90507"
VALUES = {"check": "values", "where": "out[0]", "path": "out[0]", "role": "output", "subject": "out[0]",
          "expected": "[1.0]", "actual": "[2.0]"}


def _known_bug(case_id: str, link: str, reproducer: Path | None = None) -> ResultRecord:
    known = {"reason": "a bug", "link": link, "source": "cases/x.yaml:9", "kind": "bug"}
    return record(case_id, status="xfail", build="2.14.1", known_failure=known, mismatches=(VALUES,),
                  reproducer=str(reproducer) if reproducer else None)


def _results(tmp_path: Path, link: str, *more: ResultRecord) -> Path:
    """A build whose runtime_wrapper/a fails as a known bug (its reproducer beside the results), the rest passing."""
    script = tmp_path / "in" / "reproducers" / "runtime_wrapper__a__cpu-aot_eager-inference.py"
    script.parent.mkdir(parents=True)
    script.write_text('"""Doc."""\nimport torch\n\nprint(torch.ones(1) + 1)\n')
    recs = [r for r in full_build("2.14.1") if r.case_id != "runtime_wrapper/a"]
    return write_results(tmp_path / "in" / "r.jsonl", [*recs, _known_bug("runtime_wrapper/a", link, script), *more])


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["report", *args])
    return code, capsys.readouterr().out.splitlines()


def test_the_closing_line_says_what_needs_a_person_as_the_report_does(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A known bug that no upstream issue describes has a draft to file: compat.md and the page count it
    under Needs a person, and the closing line says the same sentence, never 'Nothing needs a person'.
    It is work to do, not an error: the exit status stays 0."""
    out = tmp_path / "out"
    code, lines = _run(capsys, str(_results(tmp_path, PR)), "-o", str(out))
    md, html = (out / "compat.md").read_text(), (out / "index.html").read_text()
    assert code == 0
    assert "## Needs a person (1)" in md and "\n1 issue draft(s) to file, each of a known bug" in md
    assert "## Issue drafts: failures no upstream issue describes (1)" in md
    assert re.search(r"<h2>Needs a person \(1\)</h2>\s*<p class=\"news\">1 issue draft\(s\) to file", html)
    assert '<ul class="drafts"><li>issue draft to file: <a href="issue-drafts/' in html
    said = "Something needs a person: 1 issue draft(s) to file."
    assert said in lines and not any("Nothing needs a person" in line for line in lines), lines
    assert f"Exit status 0. {said}" in md.splitlines()[2]  # the first thing compat.md says, word for word
    # filed upstream, nothing is left to do, and every place says so
    out = tmp_path / "filed"
    _, lines = _run(capsys, str(_results(tmp_path / "f", ISSUE)), "-o", str(out))
    assert "## Needs a person (0)" in (out / "compat.md").read_text()
    assert any(line.startswith("Nothing needs a person:") for line in lines), lines


def test_the_closing_line_counts_each_thing_as_needs_a_person_does(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """One declaration (model.ATTENTION) for the headline, both pages, the closing line and the exit status:
    a failure, a known failure that passes and a draft to file, each counted once in each."""
    xpass = record("subclass_wrapper/c", status="xpass", build="2.14.1", known_failure={
        "reason": "r", "link": ISSUE, "source": "cases/y.yaml:3", "kind": "bug"})
    fail = record("scalar_recompile/c", status="fail", build="2.14.1", mismatches=(
        {"check": "number of outputs", "where": "outputs", "path": "outputs", "expected": "2", "actual": "3"},))
    results = _results(tmp_path, PR, xpass, fail)
    out = tmp_path / "out"
    code, lines = _run(capsys, str(results), "-o", str(out))
    report = merge([results])
    assert code == 1 == report.exit_code()
    closing = next(line for line in lines if line.startswith("Something needs a person"))
    want = [f"1 {ATTENTION[k].short}" for k in ("failures", "xpasses", "drafts")]
    assert closing == f"Something needs a person: {', '.join(want)}.", closing
    # drafts: the known bug's (to file) and the untriaged failure's (under Failures already, not counted twice)
    md = (out / "compat.md").read_text()
    assert "## Needs a person (3)" in md and "## Issue drafts: failures no upstream issue describes (2)" in md


def test_the_last_lines_name_the_page_compat_md_the_drafts_and_the_reproducers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    _, lines = _run(capsys, str(_results(tmp_path, PR)), "-o", str(out), "--exit-zero")
    assert lines[-5:] == [
        "Something needs a person: 1 issue draft(s) to file.",
        f"  page:         {out}/index.html",
        f"  compat.md:    {out}/compat.md",
        f"  issue drafts: {out}/issue-drafts/ (1 draft(s), 1 to file)",
        f"  reproducers:  {out}/reproducers/ (1 script(s))"], lines
    named = [Path(line.split(": ", 1)[1].split(" (")[0].strip()) for line in lines[-4:]]
    assert [p.exists() for p in named] == [True] * 4
    assert len(list((out / "issue-drafts").glob("*.md"))) == 1 and len(list((out / "reproducers").glob("*.py"))) == 1
    # nothing to file, no reproducer: said so, not left out
    _, lines = _run(capsys, str(write_results(tmp_path / "p.jsonl", full_build("2.14.1"))), "-o", str(tmp_path / "p"))
    assert lines[-2:] == ["  issue drafts: none", "  reproducers:  none"], lines


def _cuda_skipped(build: str) -> list[ResultRecord]:
    return [record(r.case_id, "cuda-aot_eager-inference", "skip", build, skip_kind="device",
                   reason="device cuda: torch.cuda.is_available() is False on this machine")
            for r in full_build(build)]


def test_a_device_where_every_item_skipped_gets_no_verdict_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """No 'cuda: passes 0 of 0 items' (read as all clear): the cuda cells say 'not available here' and the
    headline says why; a later build's verdict counts its changes from the last release that ran the device."""
    recs = [*full_build("2.13.0", "cuda"), *full_build("2.14.1"), *_cuda_skipped("2.14.1"),
            *full_build("2.16.0.dev20261120", "cuda")]
    report = merge([write_results(tmp_path / "r.jsonl", recs)])
    assert [(v.build.split("+")[0], v.device, v.previous) for v in report.verdicts()] == [
        ("2.16.0.dev20261120", "cuda", "torch 2.13.0+cpu (cf30153)"), ("2.14.1", "cpu", None),
        ("2.13.0", "cuda", None)]
    out = tmp_path / "out"
    _, lines = _run(capsys, str(tmp_path / "r.jsonl"), "-o", str(out))
    md, html = (out / "compat.md").read_text(), (out / "index.html").read_text()
    verdicts = md[md.index("## Verdict per build"):md.index("## Needs a person")]
    assert "of 0 items" not in md and "of 0 items" not in html
    assert "**torch 2.14.1+cpu (5c48869)** · cuda" not in verdicts
    assert "**torch 2.14.1+cpu (5c48869)** · cpu" in verdicts
    page = html[html.index('<ul class="verdicts">'):]
    assert page.count("<li>") >= 3 and "(5c48869)</strong> · cuda" not in page[:page.index("</ul>")]
    # said honestly elsewhere: the headline, the closing line and the matrix
    said = "5 cell(s) not available here: no cuda device on the machine that ran them (not an error)"
    assert said in md.splitlines()[2] and any(said in line for line in lines), lines
    assert "**not available here** 2 skip" in md


def test_compat_md_shows_text_as_written_and_never_as_html(tmp_path: Path) -> None:
    """A repr such as <class 'torch.Tensor'> reads as itself once rendered: escaped the Markdown way in
    text (never as an entity, which a code span would show as '&lt;'), as written in code; a build's
    label in a verdict line (which names the release before) is escaped like any record's text."""
    hostile = "<class 'torch.Tensor'> <script>x</script>"

    def version(r: ResultRecord, text: str) -> ResultRecord:  # neither parses: release order by the text
        return changed(r, fingerprint={**r.fingerprint.model_dump(), "torch_version": text})

    new = record("runtime_wrapper/a", status="fail", build="2.14.1", summary=hostile, reason=f"TypeError: {hostile}",
                 recompiles=hostile, mismatches=({**VALUES, "where": hostile, "actual": hostile, "detail": hostile},))
    recs = [*(version(r, hostile) for r in full_build("2.13.0")),
            *(version(r, "main") for r in full_build("2.14.1") if r.case_id != "runtime_wrapper/a"),
            version(new, "main")]
    write_report(merge([write_results(tmp_path / "r.jsonl", recs)]), tmp_path / "out")
    md = (tmp_path / "out" / "compat.md").read_text()
    assert "&lt;" not in md and "&gt;" not in md
    assert "<script>" not in md.replace(f"`{hostile}`", "").replace(f"TypeError: {hostile}\n", ""), "live HTML"
    assert f"`{hostile}`" in md  # the mismatch's actual value, as code
    assert "\\<class 'torch.Tensor'\\> \\<script\\>x\\</script\\> (runtime_wrapper)" in md  # the summary, as text
    assert "since torch \\<class 'torch.Tensor'\\> \\<script\\>x\\</script\\> (cf30153)" in md  # the release before
