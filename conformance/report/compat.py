"""compat.json: the merged report as data, built as its model (conformance.report.document) and
serialised once."""

from __future__ import annotations

import json
from collections import Counter

from conformance import __version__
from conformance.report.document import (
    COMPAT_SCHEMA,
    BuildDoc,
    CellDoc,
    ChangedDoc,
    CompatDoc,
    DraftDoc,
    FailureDoc,
    HistoryDoc,
    ItemRefDoc,
    RecompiledDoc,
    RetireDoc,
    RunDoc,
    SummaryDoc,
)
from conformance.report.history import history, mechanism_history
from conformance.report.model import Report
from conformance.report.read import Sourced
from conformance.results import STATUSES


def record_line(report: Report, s: Sourced) -> str:
    """A record as compat.json holds it: the record's own JSON (its keys sorted, as in a results file),
    then its build, where it was read from, and the link to its reproducer."""
    data = json.loads(s.record.to_json_line())
    data.update(build=s.build, source=s.source, reproducer_link=report.links.get(report.key(s)))
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


def _item(s: Sourced) -> dict[str, str]:
    """The fields that name an item (ItemRefDoc's), for the documents that name one."""
    return {"build": s.build, "case_id": s.record.case_id, "variant": s.record.variant, "status": s.record.status}


def _history(report: Report) -> HistoryDoc:
    builds, rows = history(report)
    return HistoryDoc(
        builds=[b.id for b in builds],
        mechanisms=dict(mechanism_history(report)),
        changed=[ChangedDoc(case_id=r.case_id, variant=r.variant, statuses=list(r.statuses),
                            first_failing=r.first_failing, first_fixed=r.first_fixed, regressions=list(r.regressions))
                 for r in rows if r.changes],
    )


def compat_document(report: Report) -> CompatDoc:
    """The document but its records (render_compat writes them one per line)."""
    by_status: Counter[str] = Counter(s.record.status for s in report.records)
    return CompatDoc(
        schema=COMPAT_SCHEMA,
        generator=f"torch-conformance {__version__}",
        inputs=report.inputs,
        expectation_files=report.expectation_files,
        summary=SummaryDoc(
            records=len(report.records),
            by_status={st: by_status[st] for st in STATUSES},
            failures=len(report.failures),
            cells_without_cases=len(report.empty_cells()),
            cells_not_run_for_a_reason=len(report.quiet_cells()),
            runs_cut_short=len(report.cut_short),
            exit_code=report.exit_code(),
        ),
        verdicts=report.verdicts(),
        behaviors=report.behaviors,
        builds=[BuildDoc(id=b.id, label=b.label, torch_version=b.torch_version, torch_git=b.torch_git, cuda=b.cuda,
                         hip=b.hip, python=b.pythons, platform=b.platforms, harness_version=b.harness_versions,
                         corpus=list(b.corpora.values()), dates=b.dates, device_names=b.device_names,
                         records=b.records, devices=report.devices(b.id), mechanisms=report.mechanisms(b.id))
                for b in report.builds],
        matrix=[CellDoc(behavior=c.behavior, build=c.build, device=c.device, counts=c.counts, ran=c.ran,
                        verdict=c.verdict, shade=c.shade, new=c.new, kinds=c.kinds) for c in report.cells()],
        problems=report.problems,
        runs=[RunDoc(**r.manifest.model_dump(by_alias=True), build=r.build, source=r.source) for r in report.runs],
        failures=[FailureDoc(**_item(s), reproducer_link=report.links.get(report.key(s)))
                  for s in report.failures],
        retire=[RetireDoc(**_item(s), expectation=", ".join(k.source for k in s.record.idle_known_failures()),
                          link=", ".join(k.link for k in s.record.idle_known_failures()))
                for s in report.xpasses],
        stale_expectations=report.stale,
        upstream_parity=report.parity_rows(),
        history=_history(report),
        speed=report.speed(),
        causes=report.causes(),
        issue_drafts=[DraftDoc(title=title, path=path) for title, path in report.drafts],
        recompiled=[RecompiledDoc(**_item(s), recompiles=s.record.recompiles) for s in report.recompiled],
        compiled_nothing=[ItemRefDoc(**_item(s)) for s in report.compiled_nothing],
        dropped_duplicates=report.dropped,
        records=[],
    )


def render_compat(report: Report) -> str:
    """The document, then its records one per line: each serialised alone (a matrix's records as one
    indented tree took ten times the file's size in memory). The document is built as its model, so what
    is written is what the schema says (a field the model does not declare is an error here)."""
    head = json.dumps(compat_document(report).model_dump(mode="json", by_alias=True, exclude_unset=True,
                                                         exclude={"records"}),
                      indent=1, ensure_ascii=False, allow_nan=False)
    records = ",\n".join(record_line(report, s) for s in report.records)
    body = f"\n{records}\n " if records else ""
    return f'{head.removesuffix("}").rstrip()},\n "records": [{body}]\n}}\n'
