"""JUnit XML for CI systems: one testsuite per build x device, one testcase per item.

fail → <failure>, error → <error>, xpass → <failure> (retire the expectation), skip and
xfail → <skipped> with the reason; a matrix cell where no case ran is an <error> testcase of
its own, so a CI dashboard never shows it as green.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from conformance.report.model import NO_DEVICE, Report, behavior_of
from conformance.report.read import Sourced
from conformance.results import Status

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

# how JUnit readers see each status: an unexpected pass fails the suite, a known failure is skipped
JUNIT_ELEMENT: dict[Status, str] = {"pass": "", "fail": "failure", "xpass": "failure", "error": "error",
                                    "skip": "skipped", "xfail": "skipped"}


def _clean(text: str) -> str:
    """Text XML 1.0 can hold (ANSI colour codes in a build's messages would make the file invalid)."""
    return _NOT_XML.sub("?", text)


def _text(s: Sourced) -> str:
    r = s.record
    lines = [f"{r.status.upper()} {r.case_id} [{r.variant}]: {r.summary}", r.reason]
    lines += [m.message() for m in r.mismatches[:50]]
    if r.reproducer:
        lines.append(f"reproducer: {r.reproducer}")
    return _clean("\n".join(line for line in lines if line))


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", {"name": "torch-conformance"})
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for b, device in report.columns:
        items = [s for s in report.records if s.build == b.id and (s.record.device or NO_DEVICE) == device]
        suite = ET.SubElement(root, "testsuite", {"name": f"{b.label} · {device}"})
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        props = ET.SubElement(suite, "properties")
        for name, value in (("torch_version", b.torch_version), ("torch_git", b.torch_git or ""),
                            ("device", device)):
            ET.SubElement(props, "property", {"name": name, "value": value})
        for s in items:
            r = s.record
            case = ET.SubElement(suite, "testcase", {
                "classname": f"{behavior_of(r)}.{r.case_id.replace('/', '.')}",
                "name": r.variant,
                "time": f"{r.durations.get('total', 0.0):.3f}",
            })
            counts["tests"] += 1
            element = JUNIT_ELEMENT[r.status]
            if element == "failure":
                counts["failures"] += 1
                ET.SubElement(case, "failure", {"message": _clean((r.reason.splitlines() or [r.status])[0][:500]),
                                                "type": r.status}).text = _text(s)
            elif element == "error":
                counts["errors"] += 1
                ET.SubElement(case, "error", {"message": _clean((r.reason.splitlines() or ["error"])[0][:500]),
                                              "type": "error"}).text = _text(s)
            elif element == "skipped":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", {"message": _clean(f"{r.status}: {r.reason}"[:500])})
        for cell in report.empty_cells():
            if cell.build == b.id and cell.device == device:
                case = ET.SubElement(suite, "testcase", {"classname": f"{cell.behavior}.matrix",
                                                         "name": "no case ran", "time": "0.000"})
                counts["tests"] += 1
                counts["errors"] += 1
                ET.SubElement(case, "error", {"message": f"no case of {cell.behavior} ran on {device}",
                                              "type": "no-case-ran"})
        for k, v in counts.items():
            suite.set(k, str(v))
            total[k] += v
    for k, v in total.items():
        root.set(k, str(v))
    ET.indent(root)
    # one pass over the whole document: a case id or build label from a downloaded results file can hold them too
    return _clean('<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")
