"""index.html: one static, self-contained page rendered with jinja2 (autoescape on).

Every string from the records goes through autoescaping; the only unescaped text is our own
inline CSS and JS, and the page's Content-Security-Policy allows exactly those two blocks
(by hash) and nothing from the network, so a case summary holding `<script>` is shown as text
and could not run even if escaping were ever bypassed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from conformance import __version__
from conformance.data.parity import ASSERTED
from conformance.report.builds import environment_changes, labels, release_key
from conformance.report.causes import causes_of
from conformance.report.history import history, mechanism_history
from conformance.report.model import (
    FOLD_AT,
    NO_DEVICE,
    SHADES,
    Report,
    behavior_of,
    clip,
)
from conformance.report.read import Sourced
from conformance.report.speed import landing_text, later_text, own_text, published_words, ratio_text, within_text
from conformance.report.trend import svg as trend_svg
from conformance.report.words import link_label, verdict_line
from conformance.results import DIVERGING, FAILING, NOT_PASSING, STATUSES, undeclared

MISMATCHES_COMPACT = 3
COMPACT_CHARS = 240  # a published page's text per field; every character is in compat.json.gz


def _asset(name: str) -> str:
    return resources.files("conformance.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def safe_url(url: object) -> str:
    """An href for a record's link: https/http or a relative path, never `javascript:` and the like."""
    text = str(url or "")
    scheme = text.split(":", 1)[0].lower() if ":" in text.split("/", 1)[0] else ""
    return text if scheme in ("", "http", "https") else "#unsafe-link"


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["url"] = safe_url
    return env


def item_id(s: Sourced) -> str:
    """The item's anchor on the page (#item-...): its build, case and variant, in URL-safe letters
    (index.js derives the same from its data)."""
    return "item-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{s.build}--{s.record.case_id}--{s.record.variant}")


def cause_id(key: str) -> str:
    """A cause's anchor (#cause-...): a digest of its key (conformance.report.causes), stable across reports."""
    return "cause-" + hashlib.sha256(key.encode()).hexdigest()[:10]


class _Tables:
    """Values many items share (a case's summary and file, a known failure, a build, an input file),
    kept once in the page's data and named by index."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, int]] = {"cases": {}, "knowns": {}, "builds": {}, "sources": {}}

    def index(self, table: str, value: Any) -> int:
        return self.tables[table].setdefault(value, len(self.tables[table]))

    def to_json(self) -> dict[str, list[Any]]:
        return {name: [list(v) if isinstance(v, tuple) else v for v in t] for name, t in self.tables.items()}


def _item(report: Report, s: Sourced, shared: _Tables, *, compact: bool = False) -> dict[str, Any]:
    """An item as the page's data holds it (rendered on demand by index.js); `compact` (a published
    page): no generated sources, no absent probes or artifact names, at most MISMATCHES_COMPACT
    mismatches and COMPACT_CHARS per text; all of it is in compat.json.gz."""
    r = s.record
    failing = r.status in FAILING
    shown = MISMATCHES_COMPACT if compact else 100
    limit = COMPACT_CHARS if compact else 2_000

    def text(value: object) -> str:
        return clip(value, limit) if compact else clip(value)

    probes = []
    for p in r.probes.results:
        if compact and p.status in ("absent", "conforms"):
            continue
        diverges = p.status in DIVERGING
        note = f"declared: {p.declared}; {p.note}" if p.declared else p.note
        probe: dict[str, Any] = {"behavior": p.behavior, "status": p.status, "note": text(note), "diff": text(p.diff)}
        if (diverges or failing) and (p.build_source or p.reference_source) and not compact:
            probe["sources"] = [clip(p.build_source), clip(p.reference_source)]  # compat.json keeps every one
        probes.append(probe)
    kf = r.known_failure
    causes = list(dict.fromkeys(c.key() for c, _ in causes_of(r))) if r.status in NOT_PASSING else []
    path, _, line = s.source.rpartition(":")
    if compact:  # a published page names the input by its folder and file, not by a machine's path
        path = "/".join(Path(path).parts[-2:])
    # short keys: 1,900 items of a six-build page name each key once per item (index.js spells them out)
    item: dict[str, Any] = {
        "c": r.case_id, "v": r.variant, "h": behavior_of(r),
        "b": shared.index("builds", (s.build, report.build(s.build).label)),
        "d": r.device or NO_DEVICE, "s": r.status, "t": f"{r.durations.get('total', 0.0):.2f}",
        "m": shared.index("cases", (r.summary, r.case_file or "")),
        # a known failure's record reason repeats the declared reason, shown once with its link
        "r": "" if kf and kf.reason and kf.reason in r.reason else text(r.reason),
        # every known failure that applied, and per mismatch the one that covers it (-1: none)
        "k": [shared.index("knowns", (k.source, k.reason, safe_url(k.link), k.kind)) for k in r.known_failures],
        "x": [[text(m.where), m.check, text(m.actual), text(m.expected), m.source or "eager", text(m.detail),
               -1 if m.known is None else m.known] for m in r.mismatches[:shown]],
        "n": max(len(r.mismatches) - shown, 0),
        "l": safe_url(report.links[report.key(s)]) if report.key(s) in report.links else "",
        "cc": ", ".join(f"{k} {v}" for k, v in r.compile_counts.items()),
        "ca": r.calls, "so": [shared.index("sources", path or s.source), line],
        "cu": [cause_id(key) for key in causes],
    }
    # what most items lack is left out of the data, not written empty
    extra = {"p": probes, "pe": r.probes.error or "", "se": [] if compact else list(r.probes.seen),
             "w": [text(w) for w in r.warnings]}
    item.update({k: v for k, v in extra.items() if v})
    return item


def notable(report: Report) -> list[Sourced]:
    """The items a published page lists: not passing or skipped, changing status across builds, or with
    an internals probe that diverges (the rest are counted in the matrix and kept in compat.json)."""
    changing = {(r.case_id, r.variant) for r in history(report)[1] if r.changes}
    return [s for s in report.records
            if s.record.status in NOT_PASSING or (s.record.case_id, s.record.variant) in changing
            or any(p.status in ("diverges", "unknown-form") for p in s.record.probes.results)]


def page_data(report: Report, *, notable_only: bool = False) -> dict[str, Any]:
    """What index.js renders on demand: the items (each summary once), the timeline's rows and the
    long lists, so that the page's first paint holds a few thousand nodes however many records."""
    shared = _Tables()
    items = [_item(report, s, shared, compact=notable_only)
             for s in (notable(report) if notable_only else report.records)]
    timeline = _timeline(report)
    rows = []
    if timeline is not None:
        label = timeline["label"]
        rows = [[r.case_id, r.variant, list(r.statuses), label.get(r.first_failing, "—"), label.get(r.first_fixed, "—"),
                 [label[b] for b in r.regressions]] for r in timeline["changed"]]
    return {
        "items": items, **shared.to_json(), "total": len(report.records), "timeline": rows,
        "recompiled": [f"{s.record.case_id} [{s.record.variant}] on {report.build(s.build).label}: "
                       f"{s.record.recompiles}" for s in report.recompiled],
        "compiledNothing": [f"{s.record.case_id} [{s.record.variant}] on {report.build(s.build).label}"
                            for s in report.compiled_nothing],
    }


def _json_for_script(data: Any) -> Markup:
    """JSON inside <script type="application/json">: nothing in it can end the element or open a comment."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return Markup(text)  # noqa: S704  # JSON with every character that could end the element escaped


def render_html(report: Report, *, notable_only: bool = False) -> str:
    css, js = _asset("index.css"), _asset("index.js")
    csp = (f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; img-src 'none'; "
           "connect-src 'none'; form-action 'none'; base-uri 'none'")
    columns = report.columns
    matrix = [(beh, [report.cell(beh, b.id, d) for b, d in columns]) for beh in report.behaviors]
    data = page_data(report, notable_only=notable_only)
    return _environment().get_template("index.html.j2").render(
        report=report,
        version=__version__,
        csp=csp,
        css=Markup(css),  # noqa: S704  # our own static asset, allowed by hash in the CSP
        js=Markup(js),  # noqa: S704  # likewise
        columns=columns,
        matrix=matrix,
        shades=SHADES,
        fold_at=FOLD_AT,
        statuses=STATUSES,
        no_device=NO_DEVICE,
        mechanisms=[(b, report.mechanisms(b.id)) for b in report.builds],
        data=_json_for_script(data),
        listed=len(data["items"]),
        notable_only=notable_only,
        causes=_causes(report),
        environment=environment_changes(report.builds),
        trend=Markup(trend_svg(report)),  # noqa: S704  # our own drawing: every label escaped in trend.py
        devices=sorted({d for b in report.builds for d in report.devices(b.id)}),
        exit_code=report.exit_code(),
        summary=report.summary(),
        link_label=link_label,
        parity=report.parity_rows(),
        asserted=ASSERTED,
        timeline=_timeline(report),
        attention=_attention(report),
        verdicts=[(v, verdict_line(v)) for v in report.verdicts()],
        speed=report.speed(),
        speed_text={"own": own_text, "landing": landing_text, "later": later_text, "published": published_words,
                    "ratio": ratio_text, "within": within_text},
        svg=Markup,  # our own drawing (bench.report.svg escapes every label)
    )


def _first_failing(s: Sourced) -> str:
    """What a failing item needs a person for: its first mismatch no known failure covers (a covered one
    beside it is reviewed already); the reason where there is none."""
    uncovered = [m for m in s.record.mismatches if m.known is None]
    return uncovered[0].message() if uncovered else s.record.reason


def _attention(report: Report) -> dict[str, Any]:
    """What the page shows first (Report.attention): every failing item with its first mismatch (linked to
    its details), the known failures that pass, then every newly failing item in the words of its status
    there (a known failure is not a new failure)."""
    attention = report.attention()

    def shown(s: Sourced) -> dict[str, Any]:
        return {"status": s.record.status, "case_id": s.record.case_id, "variant": s.record.variant,
                "build": report.build(s.build).label, "link": report.links.get(report.key(s)), "id": item_id(s),
                "first": clip(_first_failing(s), 300)}

    regressions = [{**{k: v for k, v in r.items() if k != "item"},
                    "id": item_id(r["item"]) if r["item"] is not None else ""} for r in attention["regressions"]]
    diverging = [{**shown(s), "first": clip("internals probe diverges, undeclared: " + "; ".join(
        f"{r.behavior}: {(r.diff.splitlines() or [''])[0]}" for r in undeclared(s.record)), 300)}
        for s in attention["divergences"]]
    tone = "bad" if report.exit_code() else ("news" if attention["count"] else "good")
    return {"count": attention["count"], "words": report.attention_words(), "tone": tone,
            "drafts": attention["drafts"],
            "failures": [shown(s) for s in [*attention["failures"], *attention["xpasses"]]] + diverging,
            "regressions": regressions, "regressions_words": report.regressions_words()}


def _causes(report: Report) -> list[dict[str, Any]]:
    """The causes table: each cause with its anchor, its items' filter, its draft and a reproducer."""
    draft_of: dict[str, list[str]] = {}  # a cause may have two: compiled's bug and eager's
    for key, path in report.draft_paths:
        draft_of.setdefault(key, []).append(path)
    first_link: dict[str, list[tuple[str, str]]] = {}
    for s in report.records:
        if s.record.status in NOT_PASSING and report.key(s) in report.links:
            for cause, _ in causes_of(s.record):
                first_link.setdefault(cause.key(), [(s.record.case_id, report.links[report.key(s)])])
    out = []
    for g in report.causes():
        builds = "; ".join(f"{report.build(b).torch_version}: {', '.join(f'{n} {st}' for st, n in sorted(c.items()))}"
                           for b, c in sorted(g.builds.items(), key=lambda bc: release_key(report.build(bc[0]))))
        # each link named by what it links to, joined only between links (no row starts with a separator)
        links = [("draft", path) for path in draft_of.get(g.key, [])]
        links += [(f"reproducer ({case})", link) for case, link in first_link.get(g.key, [])]
        links += [(link_label(url), url) for url in g.links]
        out.append({**g.model_dump(), "id": cause_id(g.key), "builds_text": builds, "anchors": links})
    return out


def _timeline(report: Report) -> dict[str, Any] | None:
    if len(report.builds) < 2:
        return None
    builds, rows = history(report)
    return {"builds": builds, "total": len(rows), "changed": [r for r in rows if r.changes],
            "mechanisms": mechanism_history(report), "label": labels(builds)}
