"""Standalone reproducer scripts: one per failing item, needing nothing but torch.

A reproducer is written during the run, next to the results file
(`<results dir>/reproducers/<case id, / as __>__<variant>.py`), for every `fail`, `xfail`, `xpass`
and `error` that is not a case file's schema error. By default it is short (short.py): the program,
its inputs, the compiled call and the one check that fails, something to paste into an upstream
issue. With `--full-reproducers` a full script is written beside it (`….full.py`, full.py): the
case as data and the harness's own core embedded (Note [One core]), which rebuilds the inputs
exactly as the harness did and checks every contract. Where the short form cannot express the
failure (an error, or a mismatch it has no check for), the full script is the reproducer.

Both exit 3 when compiled differs from eager, 0 when it matches, 4 when they cannot tell (eager
itself fails, or the device is absent); any other status is the script's own failure.
"""

from __future__ import annotations

import math
import pprint
from typing import TYPE_CHECKING, Any

from conformance.results import COMPARED, ResultRecord

if TYPE_CHECKING:
    from conformance.data.loader import LoadedCase
    from conformance.data.variants import Variant

FOLDER = "reproducers"
FULL_SUFFIX = ".full.py"
# A short reproducer's lines after this one only turn what it printed into its exit status (an issue
# draft leaves them out).
VERDICT_LINE = "# the verdict: what it printed, as the exit status"


def wanted(record: ResultRecord) -> bool:
    """Whether the record gets a reproducer: a failure that a script can show, a known one too."""
    if record.status in COMPARED - {"pass"}:
        return True
    return record.status == "error" and record.variant != "schema"


def script_name(case_id: str, variant: str, *, full: bool = False) -> str:
    return f"{case_id.replace('/', '__')}__{variant}" + (FULL_SUFFIX if full else ".py")


def docstring_safe(text: str) -> str:
    """Text that stays text inside a (non-raw) triple-quoted docstring, whatever it holds."""
    return (text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').replace("\r", " ")
            .replace("\x00", "\\x00"))


class _Expr:
    """A value printed as the Python expression that makes it (non-finite floats)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def literal(value: Any) -> Any:
    """`value` as pprint should write it: non-finite floats as float('nan') and the like."""
    if isinstance(value, float) and not math.isfinite(value):
        return _Expr(f"float({str(value)!r})")
    if isinstance(value, dict):
        return {k: literal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [literal(v) for v in value]
    return value


def data(value: Any) -> str:
    return pprint.pformat(literal(value), sort_dicts=False, width=110)


def string(text: str) -> str:
    """A Python literal for `text`: a raw triple-quoted block where that is exact, else repr."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text and "\x00" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def header(lc: LoadedCase, variant: Variant, record: ResultRecord, what: str) -> str:
    """The docstring every reproducer opens with: what fails, where, on which build."""
    fp = record.fingerprint
    recorded = [m.message() for m in record.mismatches[:3]] or record.reason.splitlines()[:1]
    more = [f"(+{len(record.mismatches) - 3} more in the results file)"] if len(record.mismatches) > 3 else []
    lines = [
        f"{lc.id} [{variant.label}]: {record.status} on torch {fp.torch_version} (git {fp.torch_git})",
        "",
        lc.case.summary,
        "",
        *(f"  {line}" for line in recorded), *more,
        "",
        f"Case file: {lc.display_path} (sha256 {lc.sha256[:16]}); upstream: {', '.join(lc.case.upstream)}",
        f"Recorded with python {fp.python} on {fp.platform} by torch-conformance {fp.harness_version}.",
        what,
        "Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).",
    ]
    return '"""' + docstring_safe("\n".join(lines)) + '\n"""'
