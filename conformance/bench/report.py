"""Results of ``torch-conformance bench``: JSON document, Markdown, SVG plot, compare.

Note [Bench output files]
~~~~~~~~~~~~~~~~~~~~~~~~~
``torch-conformance bench --out DIR`` writes, with stable names that the HTML report embeds:

``DIR/bench.json``         the document below (conformance/bench/document.py; its JSON Schema is
                           ``DIR/bench.schema.json`` and schemas/bench.schema.json)
``DIR/bench.md``           the four tables as printed
``DIR/bench.svg``          measured vs published ratios, one pair of bars per row, log scale
``DIR/harness.json|.md``   ``bench harness`` (the harness's own cost), when run

``bench.json``::

    {"schema": "torch-conformance-bench/1", "fingerprint": {...build fingerprint...},
     "settings": {...}, "started": ISO date, "elapsed_s": float,
     "tables": [{"id", "title", "what", "unit": "us/call", "form_labels": {form: label},
                 "rows": [{"id", "label",
                           "forms": {form: null | {"median_us", "q1_us", "q3_us", "min_us",
                                     "max_us", "noise", "repeats", "calls_per_repeat",
                                     "samples_us": [...]}},
                           "ratios": {name: {"value", "ci95": [lo, hi], "distinguishable"}},
                           "headline": name of the ratio plotted | null,
                           "published": {"before_us", "after_us", "ratio", "source", "note"},
                           "build": null | {"status": "measured"|"absent"|"unusable",
                                            "artifact", "stubbed", "reason", "source",
                                            "artifacts_seen"},
                           "notes": [...], "verdict": str | null}]}]}
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

from pydantic import ValidationError

from conformance.bench.document import (
    SCHEMA_ID,
    BenchDocument,
    CompareRowDoc,
    PublishedDoc,
    RatioDoc,
    RowDoc,
    StatsDoc,
    bench_json_schema,
)
from conformance.bench.timing import Ratio, Stats, ratio, ratio_of_products

__all__ = ["BUILD_FORM", "SCHEMA_ID", "compare", "markdown", "published_text", "ratio_text", "read", "svg",
           "write_outputs"]

def read(path: Path) -> BenchDocument:
    def refuse(name: str) -> float:  # a NaN timing is not a figure, and the report writes strict JSON
        raise ValueError(f"{path}: {name} is not a number this file may hold")

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"), parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_ID:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path}: not a bench results file (schema {found!r}, want {SCHEMA_ID!r})")
    try:
        return BenchDocument.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{path}: {where}: {first['msg']} ({exc.error_count()} error(s))") from None


def _stats(d: StatsDoc | None) -> Stats | None:
    return Stats.from_doc(d) if d is not None else None


def _us(d: StatsDoc | None) -> str:
    if d is None:
        return "—"
    m = d.median_us
    digits = 2 if m < 10 else 1
    return f"{m:.{digits}f} [{d.q1_us:.{digits}f}-{d.q3_us:.{digits}f}]"


def ratio_text(r: RatioDoc | None) -> str:
    if r is None:
        return "—"
    lo, hi = r.ci95
    return f"{r.value:.2f}x ({lo:.2f}-{hi:.2f})"


def published_text(p: PublishedDoc) -> str:
    parts = []
    if p.before_us is not None and p.after_us is not None:
        parts.append(f"{p.before_us:g} → {p.after_us:g} µs")
    if p.ratio is not None:
        parts.append(f"{p.ratio:.2f}x" if not p.note else p.note)
    return ", ".join(parts) or "—"


def _build_col(row: RowDoc) -> str:
    if row.build is not None and row.build.status != "measured":
        return row.build.status
    return _us(row.forms.get("build"))


def markdown(doc: BenchDocument) -> str:
    fp = doc.fingerprint
    lines = [
        "# torch-conformance bench",
        "",
        f"torch {fp.get('torch_version')} (git {str(fp.get('torch_git'))[:12]}), python {fp.get('python')}, "
        f"{fp.get('platform')}; {doc.started or ''}",
        "",
        "µs/call: median [IQR] over the repeats; ratios: before/after as a ratio of medians "
        "(bootstrap 95 % interval). Published: the upstream change description's figures.",
    ]
    for t in doc.tables:
        labels = t.form_labels
        forms = list(labels)
        lines += ["", f"## {t.title}", "", t.what, ""]
        head = ["row", *(labels[f] for f in forms), "measured ratio", "published"]
        if t.id in ("runtime_wrapper", "backward_unwrap"):
            head.insert(len(forms) + 2, "reference ratio")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for row in t.rows:
            cells = [row.label]
            for f in forms:
                cells.append(_build_col(row) if f == "build" else _us(row.forms.get(f)))
            headline = row.headline
            r = row.ratios.get(headline) if headline else None
            cells.append(f"{ratio_text(r)}" + (f" *{headline}*" if r else ""))
            if t.id in ("runtime_wrapper", "backward_unwrap"):
                cells.append(ratio_text(row.ratios.get("interpreted/reference_codegen")))
            cells.append(published_text(row.published))
            lines.append("| " + " | ".join(cells) + " |")
        notes = dict.fromkeys(n for row in t.rows for n in row.notes)
        verdicts = [f"{row.label}: {row.verdict}" for row in t.rows if row.verdict]
        aa = [f"{row.label}: A/A {ratio_text(row.ratios.get('A/A noise floor'))}"
              for row in t.rows if "A/A noise floor" in row.ratios]
        noisy = [f"{row.label} ({f}: {d.noise:.0%})" for row in t.rows
                 for f, d in row.forms.items() if d is not None and d.noise > 0.10]
        if aa:
            lines += ["", *(f"- {a}" for a in aa)]
        if verdicts:
            lines += ["", *(f"- **{v}**" for v in verdicts)]
        if notes:
            lines += ["", *(f"- {n}" for n in notes)]
        if noisy:
            lines += ["", "- noisy (IQR > 10 % of the median): " + ", ".join(noisy)]
    return "\n".join(lines) + "\n"


def _bars(doc: BenchDocument) -> list[tuple[str, str, float | None, float | None, tuple[float, float] | None, bool]]:
    """Per row: table, label, headline ratio, published ratio, its interval, and whether the
    headline involves the build's own code (False: reference forms only, the build has none)."""
    out = []
    for t in doc.tables:
        for row in t.rows:
            headline = row.headline
            r = row.ratios.get(headline) if headline else None
            measured = r.value if r else None
            ci = (r.ci95[0], r.ci95[1]) if r else None
            own = bool(headline) and not str(headline).endswith("reference_codegen")
            out.append((t.id, row.label, measured, row.published.ratio, ci, own))
    return out


def svg(doc: BenchDocument, title: str = "measured vs published ratio (before/after)") -> str:
    """A small self-contained SVG: per row a measured bar (with its 95 % interval) and the
    published bar, on a log scale from 0.5x to the largest ratio seen."""
    bars = _bars(doc)
    values = [v for _, _, m, p, ci, _ in bars for v in (m, p, *(ci or ())) if v is not None and v > 0]
    top = max([4.0, *values]) * 1.15
    low = 0.5
    left, right, bar_h, gap, head = 250, 30, 9, 8, 48
    width = 760
    plot_w = width - left - right
    groups = len({b[0] for b in bars})
    height = head + len(bars) * (2 * bar_h + gap) + groups * 14 + 56

    def x(v: float) -> float:
        v = min(max(v, low), top)
        return left + plot_w * (math.log(v) - math.log(low)) / (math.log(top) - math.log(low))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>',
        f'<rect x="{left}" y="24" width="10" height="8" fill="#3b7dd8"/>'
        f'<text x="{left + 14}" y="32">measured (this build)</text>'
        f'<rect x="{left + 160}" y="24" width="10" height="8" fill="#bbb"/>'
        f'<text x="{left + 174}" y="32">published</text>'
        f'<rect x="{left + 250}" y="24" width="10" height="8" fill="#a9c6ee"/>'
        f'<text x="{left + 264}" y="32">reference forms only (build: absent)</text>',
    ]
    ticks = [t for t in (0.5, 1, 1.5, 2, 3, 5, 10, 20, 50, 100) if t <= top]
    for tick in ticks:
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{head - 6}" x2="{tx:.1f}" y2="{height - 40}" '
                     f'stroke="{"#888" if tick == 1 else "#eee"}"/>')
        parts.append(f'<text x="{tx:.1f}" y="{height - 26}" text-anchor="middle">{tick:g}x</text>')
    y = head
    current = None
    for table, label, measured, published, ci, own in bars:
        if table != current:
            current = table
            y += 14
            parts.append(f'<text x="4" y="{y - 4}" font-weight="bold">{html.escape(table)}</text>')
        parts.append(f'<text x="{left - 6}" y="{y + bar_h + 3}" text-anchor="end">{html.escape(label)}</text>')
        if measured is not None:
            parts.append(f'<rect x="{x(low):.1f}" y="{y}" width="{x(measured) - x(low):.1f}" height="{bar_h}" '
                         f'fill="{"#3b7dd8" if own else "#a9c6ee"}"><title>{measured:.2f}x</title></rect>')
            if ci is not None:
                parts.append(f'<line x1="{x(ci[0]):.1f}" y1="{y + bar_h / 2}" x2="{x(ci[1]):.1f}" '
                             f'y2="{y + bar_h / 2}" stroke="#123" stroke-width="1.5"/>')
            parts.append(f'<text x="{x(measured) + 4:.1f}" y="{y + bar_h - 1}">{measured:.2f}x</text>')
        else:
            parts.append(f'<text x="{x(low) + 4:.1f}" y="{y + bar_h - 1}" fill="#999">absent</text>')
        y2 = y + bar_h
        if published is not None:
            parts.append(f'<rect x="{x(low):.1f}" y="{y2}" width="{x(published) - x(low):.1f}" height="{bar_h}" '
                         f'fill="#bbb"><title>{published:.2f}x</title></rect>')
            parts.append(f'<text x="{x(published) + 4:.1f}" y="{y2 + bar_h - 1}" fill="#555">{published:.2f}x</text>')
        y += 2 * bar_h + gap
    parts.append(f'<text x="4" y="{height - 2}" fill="#555">end-to-end rows (subclass_wrapper, mutation_epilogue): '
                 "ratio estimated on this build, see bench.md; whiskers: bootstrap 95 % interval</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_outputs(doc: BenchDocument, out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out_dir / "bench.json",
        "markdown": out_dir / "bench.md",
        "svg": out_dir / "bench.svg",
        "schema": out_dir / "bench.schema.json",
    }
    data = doc.model_dump(mode="json", by_alias=True, exclude_unset=True)  # the keys it was made or read with
    paths["json"].write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    paths["markdown"].write_text(markdown(doc), encoding="utf-8")
    paths["svg"].write_text(svg(doc), encoding="utf-8")
    paths["schema"].write_text(json.dumps(bench_json_schema(), indent=1) + "\n", encoding="utf-8")
    return paths


# -- compare ------------------------------------------------------------------------------

# Per table, the form that is the build's own cost for the row (end to end where there is one).
BUILD_FORM = {"runtime_wrapper": "build", "backward_unwrap": "build", "subclass_wrapper": "end_to_end",
               "mutation_epilogue": "end_to_end"}


# The yardstick of a row: a reference form, the same Python code in both runs, so its change
# between two runs is the machine's drift, not the build's.
# The longest-running reference form is the least sensitive to timer granularity.
_YARDSTICK = {"runtime_wrapper": "interpreted", "backward_unwrap": "interpreted",
              "subclass_wrapper": "interpreted", "mutation_epilogue": "interpreted"}


def compare(a: BenchDocument, b: BenchDocument) -> tuple[str, list[CompareRowDoc]]:
    """Before (``a``) / after (``b``) of the build's own cost per row, Markdown + rows.

    Two runs are two moments of the machine: the ratio is also given corrected by the row's
    yardstick (a reference form timed in both runs), ``(A/B) x (yardstick B / yardstick A)``,
    and "distinguishable" is judged on that corrected ratio's interval.
    """
    va = a.fingerprint.get("torch_version")
    vb = b.fingerprint.get("torch_version")
    rows: list[CompareRowDoc] = []
    lines = [
        f"# bench compare: {va} (before) → {vb} (after)",
        "",
        "The build's own cost per row (isolated steps: the build's generated function; end-to-end rows: "
        "the compiled call). before/after: ratio of medians with a bootstrap 95 % interval. drift: how much "
        "slower run B timed the row's yardstick (the reference interpreted form, identical code in both runs) "
        "than run A; corrected = before/after x drift, and 'distinguishable' is judged on it. 'absent': that "
        "build generates no such function.",
    ]
    tables_b = {t.id: t for t in b.tables}
    for ta in a.tables:
        tb = tables_b.get(ta.id)
        if tb is None:
            continue
        form = BUILD_FORM.get(ta.id, "build")
        yard = _YARDSTICK.get(ta.id, "interpreted")
        lines += ["", f"## {ta.title}", "",
                  f"| row | {va} µs | {vb} µs | before/after | drift B/A | corrected | distinguishable | published |",
                  "|---|---|---|---|---|---|---|---|"]
        rows_b = {r.id: r for r in tb.rows}
        for ra in ta.rows:
            rb = rows_b.get(ra.id)
            if rb is None:
                continue
            sa, sb = _stats(ra.forms.get(form)), _stats(rb.forms.get(form))
            ya, yb = _stats(ra.forms.get(yard)), _stats(rb.forms.get(yard))
            r: Ratio | None = ratio(sa, sb) if sa is not None and sb is not None else None
            drift = ratio(yb, ya) if ya is not None and yb is not None else None
            corrected = (ratio_of_products([sa, yb], [sb, ya])
                         if sa is not None and sb is not None and ya is not None and yb is not None else None)
            judged = corrected or r
            row = CompareRowDoc(table=ta.id, row=ra.id, label=ra.label, form=form, before=ra.forms.get(form),
                                after=rb.forms.get(form), ratio=_doc(r), drift=_doc(drift), corrected=_doc(corrected),
                                published=ra.published)
            rows.append(row)
            cell_a = _us(row.before) if sa is not None else _absent(ra)
            cell_b = _us(row.after) if sb is not None else _absent(rb)
            dist = ("yes" if judged.distinguishable else "no (within noise)") if judged else "—"
            lines.append(f"| {ra.label} | {cell_a} | {cell_b} | {ratio_text(row.ratio)} | "
                         f"{f'{drift.value:.2f}x' if drift else '—'} | "
                         f"{ratio_text(row.corrected)} | {dist} | "
                         f"{published_text(ra.published)} |")
    return "\n".join(lines) + "\n", rows


def _doc(r: Ratio | None) -> RatioDoc | None:
    return RatioDoc(**r.to_json()) if r is not None else None


def _absent(row: RowDoc) -> str:
    return row.build.status if row.build is not None else "—"
