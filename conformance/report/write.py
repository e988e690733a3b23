"""Writing a report folder: every file atomically (temp file + os.replace), byte-identical on rerun.

The reproducer scripts the runs wrote are copied into `<out>/reproducers/`, so the folder is
self-contained (a CI artifact keeps its links), each stored once under its content's digest
(`<case__variant>-<sha256[:12]>.py`): a short reproducer does not depend on the build it was written
on, so one item's script is usually one file for every build, and each record links to it. Scripts
of an earlier report that this one no longer links are removed from there (that folder is the
report's own).

A published report (`--publish`) names nothing of the machine that made it: every absolute path
of a machine folder in what it writes (the inputs' paths, a record's source and reproducer, a
traceback's site-packages) is written as the path's own tail (`public_text`).
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from conformance.files import write_atomic
from conformance.report.compat import render_compat
from conformance.report.draft_output import CAPTURED, Captured
from conformance.report.draft_output import key as output_key
from conformance.report.draft_output import load as load_outputs
from conformance.report.draft_output import save as save_outputs
from conformance.report.drafts import DRAFTS, Draft, drafts
from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.report.model import Report
from conformance.report.scripts import REPRODUCERS, find_reproducer

FILES = ("compat.json", "compat.md", "index.html", "junit.xml")
PUBLISHED_JSON = "compat.json.gz"  # compat.json of a published report (`report --publish`)


def link_reproducers(report: Report, out: Path, *, publish: bool = False) -> dict[Path, bytes]:
    """Set `report.links` and return the scripts to write under `out`: every failure's and known
    failure's of every build, identical scripts stored once (content-addressed)."""
    files: dict[Path, bytes] = {}
    for s in report.records:
        found = find_reproducer(s)
        if found is None:
            continue
        data = found.read_bytes()
        if publish:
            data = public_text(data.decode("utf-8", errors="replace")).encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()[:12]
        stem = found.stem.removesuffix(f"-{digest}")  # a report read back from an earlier one's compat.json
        rel = Path(REPRODUCERS, f"{stem}-{digest}{found.suffix}")
        files[out / rel] = data
        report.links[report.key(s)] = rel.as_posix()
    return files


# An absolute path in one of the folders where a machine keeps its work, its temporary files, its
# users' homes or its installed packages (never a URL's path: `//` and `:/` are not matched).
MACHINE_PATH = re.compile(r"(?<![\w.~/:<-])(?:~|/(?:tmp|work|home|root|Users|private|var|mnt|opt|srv|usr|data|"
                          r"scratch|builds|runner|github|__w|workspace|nix|Library))(?:/[^\s\\\x22'<>|,;:()\[\]{}`]*)+")


def _public_path(match: re.Match[str]) -> str:
    """A machine path as it says something to a reader anywhere: a package's file from its package
    on (`torch/_dynamo/x.py`), else its last two parts (`2.15.0/results.jsonl`)."""
    path = match.group(0)
    if "site-packages/" in path or "dist-packages/" in path:
        return re.split(r"(?:site|dist)-packages/", path)[-1]
    parts = [p for p in path.split("/") if p and p != "~"]
    return "/".join(parts[-2:])


def public_text(text: str, roots: tuple[str, ...] = ()) -> str:
    """`text` with every machine path (MACHINE_PATH, the home folder's, and those under `roots`, the
    folders the report was made from) replaced by its tail."""
    home = str(Path.home())
    if len(home) > 1:
        text = text.replace(home + "/", "~/")
    for root in sorted(roots, key=len, reverse=True):  # the longest first: a root inside another
        if len(root) > 1:
            text = re.sub(re.escape(root.rstrip("/")) + r"(?:/[^\s\\\x22'<>|,;:()\[\]{}`]*)+",
                          _public_path, text)
    return MACHINE_PATH.sub(_public_path, text)


def _drafts(report: Report, folder: Path, capture: Callable[[str, str], Captured | None] | None
            ) -> tuple[list[Draft], dict[str, Captured]]:
    """The drafts, with what their programs printed: kept from an earlier report of the same programs on
    the same build, or run now where `capture` can; and the outputs the drafts show (to keep)."""
    outputs = load_outputs(folder)
    found = drafts(report, outputs)
    if capture is not None:
        ran = {}
        for d in found:
            k = output_key(d.program, d.torch_version)
            if d.program and k not in outputs and (c := capture(d.program, d.torch_version)) is not None:
                ran[k] = c
        if ran:
            outputs = {**outputs, **ran}
            found = drafts(report, outputs)
    shown = {k: outputs[k] for d in found if d.program and (k := output_key(d.program, d.torch_version)) in outputs}
    return found, shown


def _keep_outputs(folder: Path, kept: dict[str, Captured]) -> list[Path]:
    if kept:
        save_outputs(folder, kept)
        return [folder / CAPTURED]
    if (folder / CAPTURED).is_file():  # no draft shows an output any more
        (folder / CAPTURED).unlink()
    return []


def _remove_stale(folder: Path, pattern: str, kept: dict[Path, bytes]) -> None:
    """The files of an earlier report in a folder of the report's own that this one no longer writes."""
    if not folder.is_dir():
        return
    for stale in sorted(folder.rglob(pattern)):
        if stale not in kept:
            stale.unlink()
    for emptied in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        if not any(emptied.iterdir()):  # a build's folder of the earlier layout
            emptied.rmdir()


def write_report(report: Report, out: Path, *, publish: bool = False,
                 capture: Callable[[str, str], Captured | None] | None = None) -> list[Path]:
    """Write compat.json, compat.md, index.html, junit.xml (and reproducers, issue drafts) into `out`.

    `publish`: a report kept in git (the published release matrix), small enough for it: the full
    records gzipped (compat.json.gz), a page listing only the notable items, no junit.xml (a CI
    run's artifact). The files of the other form are removed, so the folder never holds both.
    `capture(program, torch_version)`: runs a draft's program on this machine's build (None where it
    cannot: the draft is for another build); what it printed is kept beside the drafts
    (conformance/report/draft_output.py) and shown in them."""
    scripts = link_reproducers(report, out, publish=publish)
    found, kept_outputs = _drafts(report, out / DRAFTS, capture)
    report.drafts = [(d.text.splitlines()[0].removeprefix("# "), f"{DRAFTS}/{d.name}") for d in found]
    report.drafts_to_file = [shown for d, shown in zip(found, report.drafts, strict=True) if d.known]
    report.draft_paths = [(c, f"{DRAFTS}/{d.name}") for d in found for c in (d.causes or (d.cause,))]
    # the folders the report was made from: where a path of this machine is, whatever its root
    roots = tuple({str(Path.cwd()), *(str(Path(i.path).resolve().parent) for i in report.inputs)})
    public: Callable[[str], str] = (lambda text: public_text(text, roots)) if publish else str
    texts = {out / DRAFTS / d.name: public(d.text).encode("utf-8") for d in found}
    # each file rendered as it is written: a big report holds one file's text at a time, not four
    rendered: dict[str, Callable[[], bytes]] = {
        "compat.json": lambda: render_compat(report).encode("utf-8"),
        "compat.md": lambda: public(render_markdown(report)).encode("utf-8"),
        "index.html": lambda: public(render_html(report, notable_only=publish)).encode("utf-8"),
        "junit.xml": lambda: render_junit(report).encode("utf-8"),
    }
    if publish:
        # mtime 0: the same records give the same bytes, so a regenerated report diffs clean in git
        rendered[PUBLISHED_JSON] = lambda: gzip.compress(public(render_compat(report)).encode("utf-8"), mtime=0)
        del rendered["compat.json"], rendered["junit.xml"]
    written = []
    for path, data in sorted(scripts.items()):
        write_atomic(path, data)
        written.append(path)
    for path, data in sorted(texts.items()):
        write_atomic(path, data)
        written.append(path)
    written += _keep_outputs(out / DRAFTS, {k: Captured(c.torch_version, c.exit_status, public(c.output))
                                            for k, c in kept_outputs.items()})
    for folder, pattern, kept in ((out / REPRODUCERS, "*.py", scripts), (out / DRAFTS, "*.md", texts)):
        _remove_stale(folder, pattern, kept)
    for name in (*FILES, PUBLISHED_JSON):
        if name in rendered:
            write_atomic(out / name, rendered[name]())
            written.append(out / name)
        elif (out / name).is_file():
            (out / name).unlink()
    return written
