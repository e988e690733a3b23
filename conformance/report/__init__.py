"""Compatibility reports: merge results files, render compat.json/compat.md/index.html/JUnit, diff runs.

`merge` reads results files (or compat.json reports) strictly into a `Report`; `write_report`
writes the folder; `conformance.report.diff` compares two runs. See README.md, "Reports".
"""

from conformance.report.document import COMPAT_SCHEMA
from conformance.report.gather import merge
from conformance.report.model import Report
from conformance.report.read import ReportInputError
from conformance.report.write import write_report

__all__ = ["COMPAT_SCHEMA", "Report", "ReportInputError", "merge", "write_report"]
