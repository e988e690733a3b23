"""compat.json: the merged report as data, checked against its model (conformance.report.document)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from conformance import __version__
from conformance.report.document import COMPAT_SCHEMA, CompatDoc
from conformance.report.history import history, mechanism_history
from conformance.report.model import Report
from conformance.report.read import Sourced
from conformance.results import STATUSES


def record_json(report: Report, s: Sourced) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(s.record.to_json_line())
    data["build"] = s.build
    data["source"] = s.source
    data["reproducer_link"] = report.links.get(report.key(s))
    return data


def ref(s: Sourced) -> dict[str, str]:
    return {"build": s.build, "case_id": s.record.case_id, "variant": s.record.variant, "status": s.record.status}


def _history(report: Report) -> dict[str, Any]:
    builds, rows = history(report)
    return {
        "builds": [b.id for b in builds],
        "mechanisms": dict(mechanism_history(report)),
        "changed": [{"case_id": r.case_id, "variant": r.variant, "statuses": list(r.statuses),
                     "first_failing": r.first_failing, "first_fixed": r.first_fixed,
                     "regressions": list(r.regressions)} for r in rows if r.changes],
    }


def _speed(report: Report) -> dict[str, Any] | None:
    data = report.speed()
    if data is None:
        return None
    return {**data, "plot": {"release": data["plot"]["release"]}}  # the SVG is index.html's


def compat_document(report: Report) -> dict[str, Any]:
    by_status: Counter[str] = Counter(s.record.status for s in report.records)
    return {
        "schema": COMPAT_SCHEMA,
        "generator": f"torch-conformance {__version__}",
        "inputs": report.inputs,
        "expectation_files": report.expectation_files,
        "summary": {
            "records": len(report.records),
            "by_status": {st: by_status[st] for st in STATUSES},
            "failures": len(report.failures),
            "cells_without_cases": len(report.empty_cells()),
            "cells_not_run_for_a_reason": len(report.quiet_cells()),
            "runs_cut_short": len(report.cut_short),
            "exit_code": report.exit_code(),
        },
        "verdicts": report.verdicts(),
        "behaviors": report.behaviors,
        "builds": [
            {**b.to_json(), "devices": report.devices(b.id), "mechanisms": report.mechanisms(b.id)}
            for b in report.builds
        ],
        "matrix": [c.to_json() for c in report.cells()],
        "problems": [p.to_json() for p in report.problems],
        "runs": [r.to_json() for r in report.runs],
        "failures": [{**ref(s), "reproducer_link": report.links.get(report.key(s))} for s in report.failures],
        "retire": [
            {**ref(s), "expectation": ", ".join(k.source for k in s.record.idle_known_failures()),
             "link": ", ".join(k.link for k in s.record.idle_known_failures())}
            for s in report.xpasses
        ],
        "stale_expectations": report.stale,
        "upstream_parity": report.parity_rows(),
        "history": _history(report),
        "speed": _speed(report),
        "causes": report.causes(),
        "issue_drafts": [{"title": title, "path": path} for title, path in report.drafts],
        "recompiled": [{**ref(s), "recompiles": s.record.recompiles} for s in report.recompiled],
        "compiled_nothing": [ref(s) for s in report.compiled_nothing],
        "dropped_duplicates": report.dropped,
    }


def render_compat(report: Report) -> str:
    """The document, then its records one per line: each serialised alone (a matrix's records as one
    indented tree took ten times the file's size in memory). The document goes through its model first,
    so what is written is what the schema says (a field the model does not declare is an error here)."""
    checked = CompatDoc.model_validate({**compat_document(report), "records": []})
    head = json.dumps(checked.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude={"records"}),
                      indent=1, ensure_ascii=False, allow_nan=False)
    records = ",\n".join(json.dumps(record_json(report, s), ensure_ascii=False, allow_nan=False)
                          for s in report.records)
    body = f"\n{records}\n " if records else ""
    return f'{head.removesuffix("}").rstrip()},\n "records": [{body}]\n}}\n'
