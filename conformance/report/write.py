"""Writing a report folder: every file atomically (temp file + os.replace), byte-identical on rerun.

The reproducer scripts the run wrote are copied into `<out>/reproducers/<build>/`, so the
folder is self-contained (a CI artifact keeps its links); scripts of an earlier report that
this one no longer links are removed from there (that folder is the report's own).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from conformance.report.compat import render_compat
from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.report.model import Report, Sourced

FILES = ("compat.json", "compat.md", "index.html", "junit.xml")
REPRODUCERS = "reproducers"


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that a reader (or a crash) never sees a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def find_reproducer(s: Sourced) -> Path | None:
    """The script a record names: as written, or beside the results file it came from (an
    artifact downloaded elsewhere keeps `reproducers/` next to its results file)."""
    ref = s.record.reproducer
    if not ref:
        return None
    given = Path(ref)
    results_dir = Path(s.path).parent
    for candidate in (given, results_dir / given, results_dir / REPRODUCERS / given.name):
        if candidate.is_file():
            return candidate
    return None


def link_reproducers(report: Report, out: Path) -> dict[Path, bytes]:
    """Set `report.links` and return the scripts to write under `out`."""
    files: dict[Path, bytes] = {}
    for s in report.records:
        found = find_reproducer(s)
        if found is None:
            continue
        rel = Path(REPRODUCERS, report.build(s.build).slug, found.name)
        files[out / rel] = found.read_bytes()
        report.links[report.key(s)] = rel.as_posix()
    return files


def write_report(report: Report, out: Path) -> list[Path]:
    """Write compat.json, compat.md, index.html, junit.xml (and reproducers) into `out`."""
    scripts = link_reproducers(report, out)
    rendered = {
        "compat.json": render_compat(report),
        "compat.md": render_markdown(report),
        "index.html": render_html(report),
        "junit.xml": render_junit(report),
    }
    written = []
    for path, data in sorted(scripts.items()):
        write_atomic(path, data)
        written.append(path)
    old = out / REPRODUCERS
    if old.is_dir():
        for stale in sorted(old.rglob("*.py")):
            if stale not in scripts:
                stale.unlink()
    for name in FILES:
        write_atomic(out / name, rendered[name].encode("utf-8"))
        written.append(out / name)
    return written
