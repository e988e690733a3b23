"""compat.md: the matrix (behaviour x build x device, counts per status), then what needs a person."""

from __future__ import annotations

import re

from conformance.data.parity import ASSERTED
from conformance.report.builds import labels
from conformance.report.history import history, mechanism_history
from conformance.report.html import safe_url
from conformance.report.model import (
    FOLD_AT,
    NO_DEVICE,
    PROBE_STATUSES,
    SHADES,
    Cell,
    Report,
    behavior_of,
    clip,
)
from conformance.report.read import Sourced
from conformance.report.speed import landing_text, later_text, own_text, published_words, within_text
from conformance.report.words import fenced, link_label, verdict_line
from conformance.results import undeclared


def _esc(text: object) -> str:
    """Text for a Markdown table cell or line: no pipes, no line breaks, no HTML (a bracket is escaped
    the Markdown way, so that it reads as itself on the rendered page)."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")
            .replace("\r", " ").replace("\n", " "))


def _tick(text: object, *, table: bool = True) -> str:
    """Text as an inline code span: shown as written (no escape but a table's pipe works inside one)."""
    value = str(text).replace("\r", " ").replace("\n", " ")
    if table:
        value = value.replace("|", "\\|")
    fence = "`"
    while fence in value:
        fence += "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _fold(lines: list[str], summary: str, count: int | None = None) -> list[str]:
    """A list or table of more than FOLD_AT rows folded, its count in the summary (as index.html does)."""
    if (len(lines) if count is None else count) <= FOLD_AT:
        return lines
    return [f"<details><summary>{summary}</summary>", "", *lines, "", "</details>"]


def _link(url: str) -> str:
    """A Markdown link to a record's link: an unsafe scheme is no link, and nothing in the address can end
    the link or the line (a record is text from an artifact)."""
    target = re.sub(r"[\s()<>\[\]`\\]", lambda m: f"%{ord(m.group()):02X}", safe_url(url))
    return f"[{_esc(link_label(url))}]({target})"


def cell_text(cell: Cell) -> str:
    counts = " · ".join(text for _, text in cell.parts())
    return f"**{cell.word}** {counts or '0 items'}"


def _column(report: Report, build: str, device: str) -> str:
    return f"{_esc(report.build(build).label)} · {_esc(device)}"


def _verdicts(report: Report) -> list[str]:
    out = ["", "## Verdict per build (newest first)", ""]
    for v in report.verdicts():
        out.append(f"- **{_esc(v.label)}** · {_esc(v.device)}: {_esc(verdict_line(v))}")
    return out


def render_markdown(report: Report) -> str:  # one section after another
    out: list[str] = ["# torch-conformance compatibility report", ""]
    n_files = len(report.inputs)
    _, summary = report.summary()
    out.append(f"{len(report.records)} result record(s) from {n_files} file(s), {len(report.builds)} build(s). "
               f"Exit status {report.exit_code()}. {_esc(summary)}")
    out += _verdicts(report)
    if report.dropped:
        out.append("")
        out.append(f"The inputs overlap: {len(report.dropped)} record(s) were superseded by a later record of the "
                   "same build, case and variant and left out (listed at the end).")
    # what needs a person first: problems, failures, expectations to retire; then what newly fails
    attention = report.attention()
    out += ["", f"## Needs a person ({attention['count']})", ""]
    out.append(report.attention_words())
    if report.problems:
        out += ["", "### Problems", ""]
        out += _fold([f"- **{_esc(p.kind)}**: {_esc(p.message)}" for p in report.problems],
                     f"{len(report.problems)} problems")

    failures = attention["failures"]
    out += ["", f"### Failures ({len(failures)})", ""]
    if not failures:
        out.append("None.")
    out += _fold([line for s in failures for line in _failure(report, s)], f"{len(failures)} failing items",
                 len(failures))

    out += _divergences(report)
    out += _xpasses(report)
    out += _regressions(report)
    out += _causes(report)
    out += _drafts(report)

    out += _builds(report)
    out += _matrix(report)
    out += _mechanisms(report)
    out += _history(report)
    out += _speed(report)

    out += _stale(report)
    out += _compile_counts(report)
    out += _parity(report)

    if report.dropped:
        out += ["", "## Superseded records", ""]
        out += _fold([f"- {_tick(d.case_id, table=False)} [{_esc(d.variant)}] on {_esc(d.build)}: "
                      f"{_esc(d.dropped)} superseded by {_esc(d.kept)}" for d in report.dropped],
                     f"{len(report.dropped)} superseded records")
    return "\n".join(out) + "\n"


def _divergences(report: Report) -> list[str]:
    """Passing items whose internals probe diverges undeclared: the reference or the build is wrong."""
    items = report.divergent
    out = ["", f"### Internals diverging where the contract passes, undeclared ({len(items)})", ""]
    if not items:
        return [*out, "None: every divergence of the probe on a passing item is declared in its case's "
                "`divergences:` (reviewed, with a reason and a link)."]
    out.append("Fix the reference (`reference_impl/`) from the upstream change, or declare the divergence in "
               "the case's `divergences:`.")
    lines = [f"- {_tick(s.record.case_id, table=False)} [{_esc(s.record.variant)}] on "
             f"{_esc(report.build(s.build).label)}: {_esc(r.behavior)}: {_esc((r.diff.splitlines() or [''])[0][:200])}"
             for s in items for r in undeclared(s.record)]
    return out + _fold(lines, f"{len(lines)} divergences", len(lines))


def _xpasses(report: Report) -> list[str]:
    """Known failures that now pass: expectations to retire."""
    out: list[str] = []
    out += ["", f"### Known failures that now pass: retire them ({len(report.xpasses)})", ""]
    if not report.xpasses:
        out.append("None.")
    lines = []
    for s in report.xpasses:
        idle = s.record.idle_known_failures()
        where = ", ".join(f"{_esc(k.source)} ({_link(k.link)})" for k in idle) or "?"
        link = report.links.get(report.key(s))
        lines.append(f"- {_tick(s.record.case_id, table=False)} [{_esc(s.record.variant)}] on "
                     f"{_esc(report.build(s.build).label)}: retire or narrow the expectation at {where}"
                     + (f" — [reproducer]({link})" if link else ""))
    return out + _fold(lines, f"{len(lines)} known failures that now pass")


def _builds(report: Report) -> list[str]:
    """The builds the records come from."""
    out: list[str] = []
    out += ["", "## Builds", "",
            "| build | torch | git | CUDA / ROCm | devices | Python | platform | harness | corpus | records |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for b in report.builds:
        accel = b.cuda or (f"ROCm {b.hip}" if b.hip else "—")
        devices = ", ".join(f"{d}: {name}" for d, name in b.device_names.items()) or "—"
        out.append(f"| {_esc(b.label)} | {_esc(b.torch_version)} | {_esc(b.torch_git or '—')} | {_esc(accel)} | "
                   f"{_esc(devices)} | {_esc(', '.join(b.pythons) or '—')} | {_esc(', '.join(b.platforms) or '—')} | "
                   f"{_esc(', '.join(b.harness_versions) or '—')} | {_esc('; '.join(b.corpora.values()) or '—')} | "
                   f"{b.records} |")
    return out


def _matrix(report: Report) -> list[str]:
    """The behaviour x (build, device) matrix: each cell by what it holds (SHADES), with its counts."""
    out: list[str] = []
    columns = report.columns
    out += ["", "## Matrix", "",
            "Each cell: what it holds, worst first, then items per status (an item is one case x device x backend "
            "x mode), the known failures by kind, and the items newly failing since the release before.", ""]
    out += [f"- **{word}**: {meaning}" for word, meaning in SHADES.values()]
    out += ["", "| behaviour | " + " | ".join(_column(report, b.id, d) for b, d in columns) + " |"]
    out.append("|---|" + "---|" * len(columns))
    for beh in report.behaviors:
        cells = [report.cell(beh, b.id, d) for b, d in columns]
        out.append(f"| {_esc(beh)} | " + " | ".join(
            "—" if d == NO_DEVICE and not c.ran and not c.counts["skip"] else cell_text(c)
            for c, (_, d) in zip(cells, columns, strict=True)) + " |")
    return out


def _stale(report: Report) -> list[str]:
    """Expectation entries that matched no item."""
    out: list[str] = []
    out += ["", "## Stale expectations", ""]
    if not report.expectation_files:
        out.append("No expectation files given (`--expectations`): not checked.")
    elif not report.stale:
        out.append(f"None: every entry of {', '.join(_esc(f) for f in report.expectation_files)} matched an item.")
    return out + _fold([f"- {_esc(e.source)}: {_tick(e.case, table=False)} matched no item of any build; "
                        f"retire or fix it ({_link(e.link)})" for e in report.stale],
                       f"{len(report.stale)} stale expectations")


def _mechanisms(report: Report) -> list[str]:
    out = ["", "## Mechanisms each build was seen to generate", "",
            "Internals-probe verdicts per behaviour (conforms / diverges / unknown-form / not-modelled / absent, "
            "counted over items; unknown-form: the build follows a calling convention the reference does not model "
            "yet; not-modelled: the program uses a feature the reference says it does not model), and "
            "the generated-code artifacts captured.", ""]
    out.append("| build | " + " | ".join(report.declared) + " | artifacts seen |")
    out.append("|---|" + "---|" * 6)
    for b in report.builds:
        mech = report.mechanisms(b.id)
        row = [" / ".join(str(mech.probes[x][st]) for st in PROBE_STATUSES) for x in report.declared]
        seen = ", ".join(f"{_tick(k)} ({v})" for k, v in mech.seen.items()) or "none"
        out.append(f"| {_esc(b.label)} | " + " | ".join(row) + f" | {seen} |")
    return out


def _causes(report: Report) -> list[str]:
    causes = report.causes()
    if not causes:
        return []
    out = ["", f"## Causes of the failing and known-failing items ({len(causes)})", "",
           "One cause however many items, variants and builds show it: the check, the kind of place, the "
           "direction, an exception's innermost type and message, and the entry point.", "",
           "Kind: what the audit of the known failures found (bug, eager_bug: eager is wrong, benign, by_design), or "
           "untriaged where no known failure covers the item.", ""]
    rows = ["| cause | kind | items | cases | builds | upstream |", "|---|---|---|---|---|---|"]
    for g in causes:
        builds = ", ".join(f"{_esc(report.build(b).label)} ({', '.join(f'{n} {st}' for st, n in sorted(c.items()))})"
                           for b, c in sorted(g.builds.items()))
        words = _esc_around(report.cause_text(g.key, lambda e: f"{_CODE}{e}{_CODE}"))
        links = ", ".join(_link(u) for u in g.links) or "—"
        rows.append(f"| {words} | {', '.join(g.kinds)} | {g.items} | {len(g.cases)} | {builds} | {links} |")
    return out + _fold(rows, f"{len(causes)} causes", len(causes))


_CODE = "\0"  # marks where a cause's exception goes, so that it is written as code and the rest as text


def _esc_around(text: str) -> str:
    """A cause's words: the text escaped, its exception (between _CODE marks) as code."""
    pieces = text.split(_CODE)
    return "".join(_tick(p) if i % 2 else _esc(p) for i, p in enumerate(pieces))


def _drafts(report: Report) -> list[str]:
    if not report.drafts:
        return []
    out = ["", f"## Issue drafts: failures no upstream issue describes ({len(report.drafts)})", "",
           "One per cause on the newest build that shows it, in the shape of PyTorch's bug template (a plain "
           "PyTorch program, what it prints, the versions as observed); file it, then link the issue in the "
           "known failures of the cases that show it.", ""]
    return out + _fold([f"- [{_esc(title)}]({path})" for title, path in report.drafts],
                       f"{len(report.drafts)} issue drafts")


def _regressions(report: Report) -> list[str]:
    if len(report.builds) < 2:
        return []
    regressions = report.regressions()
    out = ["", f"## Newly failing since the release before ({len(regressions)})", "", _esc(report.regressions_words())]
    if not regressions:
        return out
    out.append("")
    return out + _fold([
        f"- {_tick(r['case_id'], table=False)} [{_esc(r['variant'])}]: {r['words']} on {_esc(r['on'])} "
        f"{_esc(r['after'])} (first failing {_esc(r['first_failing'])}, first fixed {_esc(r['first_fixed'])})"
        for r in regressions], f"{len(regressions)} newly failing items")


def _history(report: Report) -> list[str]:
    if len(report.builds) < 2:
        return []
    builds, rows = history(report)
    changed = [r for r in rows if r.changes]
    label = labels(builds)
    out = ["", f"## History across releases ({len(changed)} of {len(rows)} items change status)", "",
           "Builds in release order. Per item that does not hold the same on every build: its status on each, "
           "the first release where it fails (a known bug counts; a difference by design or benign does not), the "
           "first after that where it passes again, and each regression (fails where the release before passed). "
           "The internals rows give each "
           "behaviour's probe verdict over the items whose contract passes, `diverges only as declared` (each such "
           "divergence reviewed in its case's `divergences:`), or `differs only where the contract "
           "fails` (the build is wrong there, not our reference).", "",
           "| behaviour | " + " | ".join(report.declared) + " |", "|---|" + "---|" * len(report.declared)]
    for b, words in zip(builds, zip(*[w for _, w in mechanism_history(report)], strict=True), strict=True):
        out.append(f"| internals on {_esc(b.torch_version)} | " + " | ".join(words) + " |")
    table = ["| item | " + " | ".join(_esc(b.torch_version) for b in builds)
             + " | first failing | first fixed | regressions |", "|---|" + "---|" * (len(builds) + 3)]
    for r in changed:
        cells = [s or "—" for s in r.statuses]
        table.append(f"| {_tick(r.case_id)} [{_esc(r.variant)}] | " + " | ".join(cells) + " | "
                     f"{_esc(label.get(r.first_failing or '', '—'))} | {_esc(label.get(r.first_fixed or '', '—'))} | "
                     f"{_esc(', '.join(label[b] for b in r.regressions) or '—')} |")
    return [*out, "", *_fold(table, f"{len(changed)} items that change status", len(changed))]


def _speed(report: Report) -> list[str]:
    data = report.speed()
    if data is None:
        return []
    out = ["", "## Speed across releases (bench)", "",
           "Per bench table of the change descriptions: each row's own cost on every build (µs/call, median; "
           "the build's generated step, or its compiled call for the end-to-end tables; *absent*: that build "
           "generates no such step), the release where the change landed timed against the release before "
           "(each its own code, corrected for machine drift; 95 % interval), the published figure, and the "
           "change from the landing to each later release. Bench output of the newest build: "
           f"{_esc(data.plot.release)} (plot in index.html)."]
    for t in data.tables:
        out += ["", f"### {_esc(t.title)}", "",
                "| row | " + " | ".join(_esc(v) for v in data.releases) + " | landed: before → after | "
                "within the build (vs reference loop): landing, newest as plotted | published | later |",
                "|---|" + "---|" * (len(data.releases) + 4)]
        for r in t.rows:
            out.append(f"| {_esc(r.label)} | " + " | ".join(own_text(c) for c in r.own) + " | "
                       f"{_esc(landing_text(r))} | {_esc(within_text(r))} | "
                       f"{_esc(published_words(r.published))} | {_esc(later_text(r))} |")
    return out


def _parity(report: Report) -> list[str]:
    rows = report.parity_rows()
    if not rows:
        return []
    builds = report.builds
    out = ["", "## Upstream parity", "",
           "PyTorch's own tests for these changes (`cases/UPSTREAM.yaml`): mapped = a case here checks the test's "
           "scenario black-box. Conforms to eager: per build, how many mapped tests pass / are known failures / fail / "
           "did not run.", "",
           "| upstream file | revision | tests | behavioural | mapped | white-box | not portable | "
           + " | ".join(_esc(b.label) for b in builds) + " |",
           "|---|---|---:|---:|---:|---:|---:|" + "---|" * len(builds)]
    for r in rows:
        cells = []
        for b in builds:
            c = r.builds.get(b.id, {})
            cells.append(f"{c.get('pass', 0)} / {c.get('known', 0)} / {c.get('fail', 0)} / {c.get('not run', 0)}")
        share = f" ({r.mapped / r.behavioural:.0%})" if r.behavioural else ""
        name = "**total**" if r.file == "total" else _tick(r.file)
        out.append(f"| {name} | {_esc(r.revision)} | {r.tests} | {r.behavioural} | {r.mapped}{share} | "
                   f"{r.white_box} | {r.not_portable} | " + " | ".join(cells) + " |")
    out += ["", "Behaves as upstream's test asserts (`expects`: eager's result, no error, an error of a type, a "
            "compile count, and upstream's assertions on generated source and graphs, checked on what the build "
            "generated): per build, mapped tests where every part holds / one does not hold / a part this build "
            "does not let us see / a source assertion the case does not state yet / did not run. Not the same "
            "count as the one above: a test that expects an error holds where the case, comparing with eager, "
            "fails.", "",
            "| upstream file | mapped | " + " | ".join(_esc(b.label) for b in builds) + " |",
            "|---|---:|" + "---|" * len(builds)]
    for r in rows:
        cells = [" / ".join(str(r.asserts.get(b.id, {}).get(k, 0)) for k in ASSERTED) for b in builds]
        name = "**total**" if r.file == "total" else _tick(r.file)
        out.append(f"| {name} | {r.mapped} | " + " | ".join(cells) + " |")
    return out


def _compile_counts(report: Report) -> list[str]:
    """Recompiles no case bounds, and items that compiled nothing: never verdicts, never silent."""
    out = ["", f"## Recompiles no case bounds ({len(report.recompiled)})", "",
           "Items that compiled graphs after their first call where the case sets no `expect.compiles`: not a "
           "verdict, and never silent. Set `expect.compiles` where the count is part of the contract.", ""]
    out += _fold([f"- {_tick(s.record.case_id, table=False)} [{_esc(s.record.variant)}] on "
                  f"{_esc(report.build(s.build).label)}: {_esc(s.record.recompiles)}" for s in report.recompiled],
                 f"{len(report.recompiled)} items that recompiled") or ["None."]
    if report.compiled_nothing:
        out += ["", f"## Items that compiled nothing ({len(report.compiled_nothing)})", "",
                "The backend compiled no graph (dynamo ran the program eagerly): these verdicts say nothing about "
                "the compiled path.", ""]
        out += _fold([f"- {_tick(s.record.case_id, table=False)} [{_esc(s.record.variant)}] on "
                      f"{_esc(report.build(s.build).label)}" for s in report.compiled_nothing],
                     f"{len(report.compiled_nothing)} items that compiled nothing")
    return out


def _failure(report: Report, s: Sourced) -> list[str]:
    r = s.record
    label = report.build(s.build).label
    out = ["", f"#### {r.status.upper()} {_tick(r.case_id, table=False)} [{_esc(r.variant)}] on {_esc(label)}", ""]
    if r.summary:
        out.append(f"{_esc(r.summary)} ({_esc(behavior_of(r))})")
        out.append("")
    link = report.links.get(report.key(s))
    facts = [f"case file {_tick(r.case_file, table=False)}" if r.case_file else "",
             f"[reproducer]({link})" if link else "",
             "rerun: " + _tick(f"torch-conformance run {r.case_file} -k '{r.variant}'", table=False)
             if r.case_file else ""]
    out.append(" · ".join(f for f in facts if f))
    if r.mismatches:
        out += ["", "| where | check | compiled | eager (or source) |", "|---|---|---|---|"]
        for m in r.mismatches[:20]:
            out.append(f"| {_esc(clip(m.where, 500))} | {_esc(m.check)} | "
                       f"{_tick(clip(m.actual, 2_000))} | {_tick(clip(m.expected, 2_000))} "
                       f"({_esc(m.source)}) |")
        if len(r.mismatches) > 20:
            out.append(f"\n… {len(r.mismatches) - 20} more in compat.json")
    elif r.reason:
        out += ["", fenced(clip(r.reason))]
    for p in r.probes.results:
        if p.status in ("diverges", "unknown-form"):
            said = "diverges" if p.status == "diverges" else "follows a convention the reference does not model"
            note = f" ({_esc(p.note)})" if p.note else ""
            out += ["", f"Internals probe {_tick(p.behavior, table=False)} {said}{note}:", "",
                    fenced(clip(p.diff, 5_000))]
    return out

