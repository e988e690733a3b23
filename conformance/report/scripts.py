"""The reproducer scripts a report reads: only inside the `reproducers/` folder beside an input."""

from __future__ import annotations

from pathlib import Path

from conformance.report.read import Sourced

REPRODUCERS = "reproducers"


def find_reproducer(s: Sourced) -> Path | None:
    """The script a record names, looked for only inside the `reproducers/` folder beside the input
    it was read from: as written (relative to where the run started), relative to that folder, or by
    name there. Records are data from elsewhere (downloaded CI artifacts) and may name any path;
    nothing outside that folder, and no symbolic link, is ever read."""
    if s.origin is None:
        return None
    root = s.origin.parent / REPRODUCERS
    if s.link is not None:  # a compat.json input: its own copy
        candidates = [s.origin.parent / s.link]
    elif s.record.reproducer:
        given = Path(s.record.reproducer)
        candidates = [given, s.origin.parent / given, root / given.name]
    else:
        return None
    for candidate in candidates:
        if _inside(candidate, root):
            return candidate
    return None


def _inside(path: Path, root: Path) -> bool:
    """A regular file under `root`, reached without following a symbolic link, and no hard link."""
    try:
        if not root.is_dir() or root.is_symlink():
            return False
        resolved = path.resolve(strict=True)
        if not resolved.is_relative_to(root.resolve()) or not resolved.is_file():
            return False
        if resolved.stat().st_nlink > 1:  # a hard link may name a file anywhere
            return False
        return not any(p.is_symlink() for p in (path, *path.parents) if p.is_relative_to(root))
    except (OSError, RuntimeError):
        return False


def reproducer_text(s: Sourced) -> str | None:
    """The text of the script a record names (see find_reproducer), or None."""
    found = find_reproducer(s)
    if found is None:
        return None
    try:
        return found.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
