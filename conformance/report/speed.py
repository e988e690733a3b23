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

from conformance.bench.report import BUILD_FORM, compare, published_text, ratio_text, svg
from conformance.versions import version_key

__all__ = ["landing_text", "later_text", "own_text", "published_text", "ratio_text", "release_order", "speed",
           "within_text"]


def _version(doc: dict[str, Any]) -> str:
    return str(doc.get("fingerprint", {}).get("torch_version") or "?")


def release_order(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(docs, key=lambda d: version_key(_version(d)))


def _own(row: dict[str, Any], form: str) -> dict[str, Any]:
    """A row's own cost on one build: its timing, or why there is none."""
    stats = row["forms"].get(form)
    if stats:
        return {"median_us": stats["median_us"], "q1_us": stats["q1_us"], "q3_us": stats["q3_us"]}
    build = row.get("build") or {}
    return {"status": build.get("status") or "absent"}


def _ratio_of(rows: list[dict[str, Any]], table: str, row: str) -> dict[str, Any] | None:
    hit = next((r for r in rows if r["table"] == table and r["row"] == row), None)
    if hit is None or hit["ratio"] is None:
        return None
    judged = hit["corrected"] or hit["ratio"]
    return {"ratio": hit["ratio"], "drift": hit["drift"], "corrected": hit["corrected"],
            "distinguishable": bool(judged["distinguishable"])}


def _row(ordered: list[dict[str, Any]], tid: str, rid: str, form: str) -> tuple[
        list[dict[str, Any]], list[int], dict[str, Any], list[dict[str, Any] | None]]:
    """One row on every build: its own cost, the builds that generate its step, the published figure
    and the within-build headline ratio."""
    per: list[dict[str, Any]] = []
    measured: list[int] = []
    published: dict[str, Any] = {}
    headlines: list[dict[str, Any] | None] = []
    for i, doc in enumerate(ordered):
        t = next((x for x in doc["tables"] if x["id"] == tid), None)
        row = next((r for r in t["rows"] if r["id"] == rid), None) if t else None
        if t is None or row is None:
            per.append({"status": "not measured"})
            headlines.append(None)
            continue
        published = published or row["published"]
        per.append(_own(row, form))
        if (row.get("build") or {}).get("status") == "measured":
            measured.append(i)
        headline = row.get("headline")
        r = row["ratios"].get(headline) if headline else None
        headlines.append({"name": headline, **r} if r else None)
    return per, measured, published, headlines


def speed(docs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The speed section's data (compat.json "speed"), or None without bench results."""
    if not docs:
        return None
    ordered = release_order(docs)
    versions = [_version(d) for d in ordered]
    pairs: dict[tuple[int, int], list[dict[str, Any]]] = {}

    def compared(i: int, j: int, tid: str, rid: str) -> dict[str, Any] | None:
        if (i, j) not in pairs:
            pairs[(i, j)] = compare(ordered[i], ordered[j])[1]
        return _ratio_of(pairs[(i, j)], tid, rid)

    seen: dict[str, dict[str, Any]] = {}
    for doc in ordered:
        for t in doc["tables"]:
            seen.setdefault(t["id"], {"title": t["title"], "rows": {}})
            for row in t["rows"]:
                seen[t["id"]]["rows"].setdefault(row["id"], row["label"])
    tables: list[dict[str, Any]] = []
    for tid, meta in seen.items():
        form = BUILD_FORM.get(tid, "build")
        out_rows = []
        for rid, label in meta["rows"].items():
            per, measured, published, headlines = _row(ordered, tid, rid, form)
            landed = measured[0] if measured else None
            entry: dict[str, Any] = {
                "id": rid, "label": label, "published": published, "own": per,
                "landed": versions[landed] if landed is not None else None,
                "before": None, "at_landing": None, "before_note": "", "later": [],
                "within_build": headlines[landed] if landed is not None else None,
                "within_newest": headlines[-1],  # what the plot draws (the newest build's bench)
            }
            if landed is None:
                entry["before_note"] = "no build given generates this step"
            elif landed == 0:
                entry["before_note"] = (f"{versions[0]} is the oldest build given and already generates it: "
                                        "add the release before to see the change land")
            else:
                entry["before"] = versions[landed - 1]
                entry["at_landing"] = compared(landed - 1, landed, tid, rid)
                if entry["at_landing"] is None:
                    entry["before_note"] = (f"{versions[landed - 1]} has no such step of its own to time in "
                                            "isolation; the within-build ratio is against the reference's loop")
            if landed is not None:
                entry["later"] = [{"release": versions[j], **(compared(landed, j, tid, rid) or {"ratio": None})}
                                  for j in range(landed + 1, len(ordered))]
            out_rows.append(entry)
        tables.append({"id": tid, "title": meta["title"], "form": form, "rows": out_rows})
    newest = ordered[-1]
    title = f"torch {_version(newest)}: measured vs published ratio (within the build)"
    return {"releases": versions, "tables": tables,
            "plot": {"release": _version(newest), "svg": svg(newest, title)}}


def own_text(cell: dict[str, Any]) -> str:
    if "median_us" not in cell:
        return str(cell["status"])
    m = cell["median_us"]
    return f"{m:.{2 if m < 10 else 1}f}"


def _judged(m: dict[str, Any]) -> str:
    """A ratio between two builds: drift-corrected where it was, with the raw figure beside it."""
    if m.get("corrected"):
        return f"{ratio_text(m['corrected'])} corrected for drift (raw {ratio_text(m['ratio'])})"
    return ratio_text(m.get("ratio"))


def _variants(a: str, b: str) -> str:
    """A note where two builds are different wheel variants (+cpu, +cu130): the ratio measures that too."""
    va, vb = a.partition("+")[2], b.partition("+")[2]
    return f" [wheel variants {va or 'none'} → {vb or 'none'}]" if va != vb else ""


def within_text(row: dict[str, Any]) -> str:
    """The within-build ratio of the landing build, and the newest build's where it is another (the
    number the plot draws)."""
    text = ratio_text(row["within_build"])
    newest = row.get("within_newest")
    if newest is not None and newest != row["within_build"]:
        text += f"; newest build {ratio_text(newest)} (plotted)"
    return text


def landing_text(row: dict[str, Any]) -> str:
    at = row["at_landing"]
    if at is None:
        return row["before_note"] or "—"
    word = "" if at["distinguishable"] else ", within noise"
    return f"{row['before']} → {row['landed']}: {_judged(at)}{word}{_variants(row['before'], row['landed'])}"


def later_text(row: dict[str, Any]) -> str:
    parts = []
    for m in row["later"]:
        judged = _judged(m) if m.get("ratio") else "—"
        parts.append(f"{m['release']}: {judged}{_variants(row['landed'], m['release'])}")
    return "; ".join(parts) or "—"
