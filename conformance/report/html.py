"""index.html: one static, self-contained page rendered with jinja2 (autoescape on).

Every string from the records goes through autoescaping; the only unescaped text is our own
inline CSS and JS, and the page's Content-Security-Policy allows exactly those two blocks
(by hash) and nothing from the network, so a case summary holding `<script>` is shown as text
and could not run even if escaping were ever bypassed.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from conformance import __version__
from conformance.report.history import history, labels, mechanism_history, regressed
from conformance.report.model import (
    FAILING,
    NO_DEVICE,
    QUIET_VERDICTS,
    VERDICT_WORD,
    Cell,
    Report,
    behavior_of,
    clip,
    verdict_line,
)
from conformance.report.read import Sourced
from conformance.report.speed import landing_text, later_text, own_text, published_text, ratio_text
from conformance.results import STATUSES

HEAT_STEPS = 10
MISMATCHES_COMPACT = 5


def _asset(name: str) -> str:
    return resources.files("conformance.report").joinpath("templates", name).read_text(encoding="utf-8")


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


def heat(cell: Cell) -> str:
    """The cell's colour class: h0 (nothing passed) .. h10 (everything passed or failed as declared)."""
    if cell.verdict in ("empty", *QUIET_VERDICTS):
        return cell.verdict
    step = round(cell.good_fraction * HEAT_STEPS)
    if cell.verdict == "fail":  # one failure in many must still read as trouble, never as green
        step = min(step, HEAT_STEPS * 6 // 10)
    return f"h{step}"


def _item(report: Report, s: Sourced, *, compact: bool = False) -> dict[str, Any]:
    """An item as the page shows it; `compact` (a published page): no generated sources, no absent
    probes or artifact names, at most MISMATCHES_COMPACT mismatches inline; all of it is in compat.json.gz."""
    r = s.record
    failing = r.status in FAILING
    shown = MISMATCHES_COMPACT if compact else 100
    probes = []
    for p in r.probes.results:
        if compact and p.status == "absent":
            continue
        diverges = p.status in ("diverges", "unknown-form")
        probes.append({
            "behavior": p.behavior, "status": p.status, "note": clip(p.note),
            "diff": clip(p.diff),
            # both sources where they matter; compat.json keeps every one
            "sources": (diverges or failing) and bool(p.build_source or p.reference_source) and not compact,
            "build_source": clip(p.build_source), "reference_source": clip(p.reference_source),
        })
    return {
        "r": r,
        # a known failure's record reason repeats the declared reason, shown once below with its link
        "reason": "" if r.known_failure and r.known_failure.reason and r.known_failure.reason in r.reason
        else clip(r.reason),
        "mismatches": [{k: clip(v, 2_000) for k, v in m.model_dump().items()} for m in r.mismatches[:shown]],
        "more_mismatches": max(len(r.mismatches) - shown, 0),
        "build": report.build(s.build),
        "behavior": behavior_of(r),
        "device": r.device or NO_DEVICE,
        "time": f"{r.durations.get('total', 0.0):.2f}",
        "link": report.links.get(report.key(s)),
        "probes": probes,
        "probe_error": r.probes.error,
        "seen": [] if compact else list(r.probes.seen),
        "source": s.source,
    }


def notable(report: Report) -> list[Sourced]:
    """The items a published page lists: not passing or skipped, changing status across builds, or with
    an internals probe that diverges (the rest are counted in the matrix and kept in compat.json)."""
    changing = {(r.case_id, r.variant) for r in history(report)[1] if r.changes}
    return [s for s in report.records
            if s.record.status not in ("pass", "skip") or (s.record.case_id, s.record.variant) in changing
            or any(p.status in ("diverges", "unknown-form") for p in s.record.probes.results)]


def render_html(report: Report, *, notable_only: bool = False) -> str:
    css, js = _asset("index.css"), _asset("index.js")
    csp = (f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; img-src 'none'; "
           "connect-src 'none'; form-action 'none'; base-uri 'none'")
    columns = report.columns
    matrix = [(beh, [report.cell(beh, b.id, d) for b, d in columns]) for beh in report.behaviors]
    return _environment().get_template("index.html.j2").render(
        report=report,
        version=__version__,
        csp=csp,
        css=Markup(css),  # noqa: S704  # our own static asset, allowed by hash in the CSP
        js=Markup(js),  # noqa: S704  # likewise
        statuses=STATUSES,
        columns=columns,
        matrix=matrix,
        heat=heat,
        no_device=NO_DEVICE,
        mechanisms=[(b, report.mechanisms(b.id)) for b in report.builds],
        items=[_item(report, s, compact=notable_only) for s in (notable(report) if notable_only else report.records)],
        notable_only=notable_only,
        devices=sorted({d for b in report.builds for d in report.devices(b.id)}),
        exit_code=report.exit_code(),
        verdict_word=VERDICT_WORD,
        parity=report.parity_rows(),
        timeline=_timeline(report),
        attention=_attention(report),
        verdicts=[(v, verdict_line(v)) for v in report.verdicts()],
        speed=report.speed(),
        speed_text={"own": own_text, "landing": landing_text, "later": later_text, "published": published_text,
                    "ratio": ratio_text},
        svg=Markup,  # our own drawing (bench.report.svg escapes every label)
    )


def _attention(report: Report) -> dict[str, Any]:
    """What the page shows first: every failing item with its first mismatch, and every regression."""
    failures = [{"status": s.record.status, "case_id": s.record.case_id, "variant": s.record.variant,
                 "build": report.build(s.build).label, "link": report.links.get(report.key(s)),
                 "first": clip(s.record.mismatches[0].message() if s.record.mismatches else s.record.reason, 300)}
                for s in report.failures]
    regressions = [{"case_id": r.case_id, "variant": r.variant, "on": on} for r, on in regressed(report)]
    return {"failures": failures, "regressions": regressions}


def _timeline(report: Report) -> dict[str, Any] | None:
    if len(report.builds) < 2:
        return None
    builds, rows = history(report)
    return {"builds": builds, "total": len(rows), "changed": [r for r in rows if r.changes],
            "mechanisms": mechanism_history(report), "label": labels(builds)}
