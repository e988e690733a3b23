"""The bench tables release over release: each row's own cost on every build, the release where the
change landed against the release before it (each timing its own code), beside the published figure,
and how the figure moved in later releases.

Note [Before/after across releases]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
One build's bench can only set the build's generated step against our reference's interpreted
loop, which is not the code the release before ran. Given the bench of several releases, a row's
*landing* is the first release (in release order) whose own step was measured (its ``build`` is
``measured``); *before* is the release preceding it among those given. The before/after is then
:func:`conformance.bench.report.compare` of the two: the build's own cost per row (the compiled
call for the end-to-end tables), corrected for the machine's drift by a reference form timed in
both runs. The isolated-step tables have no before of that kind: a release without the generated
step has no step of its own to time in isolation (its orchestration is inline in the interpreted
wrapper), so their before/after says so and keeps the within-build ratio, labelled as against
the reference's loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.bench.document import BenchDocument, CompareRowDoc, PublishedDoc, RowDoc
from conformance.bench.report import BUILD_FORM, compare, published_text, ratio_text, svg
from conformance.report.document import (
    BetweenDoc,
    LaterDoc,
    NamedRatioDoc,
    OwnDoc,
    PlotDoc,
    SpeedDoc,
    SpeedRowDoc,
    SpeedTableDoc,
)
from conformance.versions import version_key

__all__ = ["landing_text", "later_text", "own_text", "published_words", "ratio_text", "release_order", "speed",
           "within_text"]


def _version(doc: BenchDocument) -> str:
    return str(doc.fingerprint.get("torch_version") or "?")


def release_order(docs: Sequence[BenchDocument]) -> list[BenchDocument]:
    return sorted(docs, key=lambda d: version_key(_version(d)))


def _own(row: RowDoc, form: str) -> OwnDoc:
    """A row's own cost on one build: its timing, or why there is none."""
    stats = row.forms.get(form)
    if stats is not None:
        return OwnDoc(median_us=stats.median_us, q1_us=stats.q1_us, q3_us=stats.q3_us)
    return OwnDoc(status=row.build.status if row.build is not None else "absent")


def _ratio_of(rows: list[CompareRowDoc], table: str, row: str) -> BetweenDoc | None:
    hit = next((r for r in rows if r.table == table and r.row == row), None)
    if hit is None or hit.ratio is None:
        return None
    judged = hit.corrected or hit.ratio
    return BetweenDoc(ratio=hit.ratio, drift=hit.drift, corrected=hit.corrected,
                      distinguishable=judged.distinguishable)


def _row(ordered: list[BenchDocument], tid: str, rid: str, form: str) -> tuple[
        list[OwnDoc], list[int], dict[str, Any], list[NamedRatioDoc | None]]:
    """One row on every build: its own cost, the builds that generate its step, the published figure
    (as its bench file gave it) and the within-build headline ratio."""
    per: list[OwnDoc] = []
    measured: list[int] = []
    published: dict[str, Any] = {}
    headlines: list[NamedRatioDoc | None] = []
    for i, doc in enumerate(ordered):
        t = next((x for x in doc.tables if x.id == tid), None)
        row = next((r for r in t.rows if r.id == rid), None) if t else None
        if t is None or row is None:
            per.append(OwnDoc(status="not measured"))
            headlines.append(None)
            continue
        published = published or row.published.model_dump(exclude_unset=True)
        per.append(_own(row, form))
        if row.build is not None and row.build.status == "measured":
            measured.append(i)
        headline = row.headline
        r = row.ratios.get(headline) if headline else None
        headlines.append(NamedRatioDoc(name=headline, value=r.value, ci95=r.ci95, distinguishable=r.distinguishable)
                         if r else None)
    return per, measured, published, headlines


def speed(docs: Sequence[BenchDocument]) -> SpeedDoc | None:
    """The speed section's data (compat.json "speed", its plot drawn for index.html), or None without
    bench results."""
    if not docs:
        return None
    ordered = release_order(docs)
    versions = [_version(d) for d in ordered]
    pairs: dict[tuple[int, int], list[CompareRowDoc]] = {}

    def compared(i: int, j: int, tid: str, rid: str) -> BetweenDoc | None:
        if (i, j) not in pairs:
            pairs[(i, j)] = compare(ordered[i], ordered[j])[1]
        return _ratio_of(pairs[(i, j)], tid, rid)

    seen: dict[str, tuple[str, dict[str, str]]] = {}  # table -> its title, its rows' labels
    for doc in ordered:
        for t in doc.tables:
            _, labels = seen.setdefault(t.id, (t.title, {}))
            for row in t.rows:
                labels.setdefault(row.id, row.label)
    tables: list[SpeedTableDoc] = []
    for tid, (title, labels) in seen.items():
        form = BUILD_FORM.get(tid, "build")
        out_rows = []
        for rid, label in labels.items():
            per, measured, published, headlines = _row(ordered, tid, rid, form)
            landed = measured[0] if measured else None
            before, at_landing, before_note, later = None, None, "", []
            if landed is None:
                before_note = "no build given generates this step"
            elif landed == 0:
                before_note = (f"{versions[0]} is the oldest build given and already generates it: "
                               "add the release before to see the change land")
            else:
                before = versions[landed - 1]
                at_landing = compared(landed - 1, landed, tid, rid)
                if at_landing is None:
                    before_note = (f"{versions[landed - 1]} has no such step of its own to time in "
                                   "isolation; the within-build ratio is against the reference's loop")
            if landed is not None:
                later = [_later(versions[j], compared(landed, j, tid, rid)) for j in range(landed + 1, len(ordered))]
            out_rows.append(SpeedRowDoc(
                id=rid, label=label, published=published, own=per,
                landed=versions[landed] if landed is not None else None,
                before=before, at_landing=at_landing, before_note=before_note, later=later,
                within_build=headlines[landed] if landed is not None else None,
                within_newest=headlines[-1],  # what the plot draws (the newest build's bench)
            ))
        tables.append(SpeedTableDoc(id=tid, title=title, form=form, rows=out_rows))
    newest = ordered[-1]
    title = f"torch {_version(newest)}: measured vs published ratio (within the build)"
    return SpeedDoc(releases=versions, tables=tables, plot=PlotDoc.drawn(_version(newest), svg(newest, title)))


def _later(release: str, between: BetweenDoc | None) -> LaterDoc:
    if between is None:
        return LaterDoc(release=release, ratio=None)
    return LaterDoc(release=release, ratio=between.ratio, drift=between.drift, corrected=between.corrected,
                    distinguishable=between.distinguishable)


def own_text(cell: OwnDoc) -> str:
    if cell.median_us is None:
        return str(cell.status)
    m = cell.median_us
    return f"{m:.{2 if m < 10 else 1}f}"


def published_words(published: dict[str, Any]) -> str:
    """A row's published figure (SpeedRowDoc.published: the bench file's, as it gave it) in words."""
    return published_text(PublishedDoc.model_validate(published))


def _judged(m: BetweenDoc) -> str:
    """A ratio between two builds: drift-corrected where it was, with the raw figure beside it."""
    if m.corrected is not None:
        return f"{ratio_text(m.corrected)} corrected for drift (raw {ratio_text(m.ratio)})"
    return ratio_text(m.ratio)


def _variants(a: str, b: str) -> str:
    """A note where two builds are different wheel variants (+cpu, +cu130): the ratio measures that too."""
    va, vb = a.partition("+")[2], b.partition("+")[2]
    return f" [wheel variants {va or 'none'} → {vb or 'none'}]" if va != vb else ""


def within_text(row: SpeedRowDoc) -> str:
    """The within-build ratio of the landing build, and the newest build's where it is another (the
    number the plot draws)."""
    text = ratio_text(row.within_build)
    newest = row.within_newest
    if newest is not None and newest != row.within_build:
        text += f"; newest build {ratio_text(newest)} (plotted)"
    return text


def landing_text(row: SpeedRowDoc) -> str:
    at = row.at_landing
    if at is None:
        return row.before_note or "—"
    word = "" if at.distinguishable else ", within noise"
    before, landed = row.before or "", row.landed or ""
    return f"{before} → {landed}: {_judged(at)}{word}{_variants(before, landed)}"


def later_text(row: SpeedRowDoc) -> str:
    parts = []
    for m in row.later:
        judged = _judged(m) if m.ratio is not None else "—"
        parts.append(f"{m.release}: {judged}{_variants(row.landed or '', m.release)}")
    return "; ".join(parts) or "—"
