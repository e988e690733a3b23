"""Writing a report folder: every file atomically (temp file + os.replace), byte-identical on rerun.

The reproducer scripts the run wrote are copied into `<out>/reproducers/<build>/`, so the
folder is self-contained (a CI artifact keeps its links); scripts of an earlier report that
this one no longer links are removed from there (that folder is the report's own).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

from conformance.files import write_atomic
from conformance.report.compat import render_compat
from conformance.report.drafts import DRAFTS, drafts
from conformance.report.history import in_release_order
from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.report.model import Report
from conformance.report.scripts import REPRODUCERS, find_reproducer

FILES = ("compat.json", "compat.md", "index.html", "junit.xml")
PUBLISHED_JSON = "compat.json.gz"  # compat.json of a published report (`report --publish`)


def link_reproducers(report: Report, out: Path, *, publish: bool = False) -> dict[Path, bytes]:
    """Set `report.links` and return the scripts to write under `out`. A published report keeps the
    scripts of every failure and those of the newest build's known failures (each older build's
    known failures are in its own CI artifacts): the folder stays small enough for git."""
    files: dict[Path, bytes] = {}
    newest = in_release_order(report.builds)[-1].id if report.builds else ""
    for s in report.records:
        if publish and s.record.status == "xfail" and s.build != newest:
            continue
        found = find_reproducer(s)
        if found is None:
            continue
        rel = Path(REPRODUCERS, report.build(s.build).slug, found.name)
        files[out / rel] = found.read_bytes()
        report.links[report.key(s)] = rel.as_posix()
    return files


def write_report(report: Report, out: Path, *, publish: bool = False) -> list[Path]:
    """Write compat.json, compat.md, index.html, junit.xml (and reproducers, issue drafts) into `out`.

    `publish`: a report kept in git (the published release matrix), small enough for it: the full
    records gzipped (compat.json.gz), a page listing only the notable items, no junit.xml (a CI
    run's artifact). The files of the other form are removed, so the folder never holds both."""
    scripts = link_reproducers(report, out, publish=publish)
    found = drafts(report)
    report.drafts = [(d.text.splitlines()[0].removeprefix("# "), f"{DRAFTS}/{d.name}") for d in found]
    report.draft_paths = [(d.cause, f"{DRAFTS}/{d.name}") for d in found]
    texts = {out / DRAFTS / d.name: d.text.encode("utf-8") for d in found}
    # each file rendered as it is written: a big report holds one file's text at a time, not four
    rendered: dict[str, Callable[[], bytes]] = {
        "compat.json": lambda: render_compat(report).encode("utf-8"),
        "compat.md": lambda: render_markdown(report).encode("utf-8"),
        "index.html": lambda: render_html(report, notable_only=publish).encode("utf-8"),
        "junit.xml": lambda: render_junit(report).encode("utf-8"),
    }
    if publish:
        # mtime 0: the same records give the same bytes, so a regenerated report diffs clean in git
        rendered[PUBLISHED_JSON] = lambda: gzip.compress(render_compat(report).encode("utf-8"), mtime=0)
        del rendered["compat.json"], rendered["junit.xml"]
    written = []
    for path, data in sorted(scripts.items()):
        write_atomic(path, data)
        written.append(path)
    for path, data in sorted(texts.items()):
        write_atomic(path, data)
        written.append(path)
    for folder, pattern, kept in ((out / REPRODUCERS, "*.py", scripts), (out / DRAFTS, "*.md", texts)):
        if folder.is_dir():
            for stale in sorted(folder.rglob(pattern)):
                if stale not in kept:
                    stale.unlink()
    for name in (*FILES, PUBLISHED_JSON):
        if name in rendered:
            write_atomic(out / name, rendered[name]())
            written.append(out / name)
        elif (out / name).is_file():
            (out / name).unlink()
    return written
