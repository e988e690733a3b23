"""Where the case files are found, and which corpus a run ran.

Note [The corpus]: the package carries its case files (`conformance/corpus/` in a wheel, written
by setup.py with a manifest of every file's digest), so that `pip install torch-conformance` is
enough to test a build. `--cases` (or TORCH_CONFORMANCE_CASES) points anywhere; without it, a
`cases/` folder in the working folder is used, else the package's own corpus: the bundled one,
or, where the package runs from its source tree, that tree's `cases/`. Case ids are paths under
the corpus root, so they are the same whichever way the corpus was found, and a bundled case
file is named `cases/<path>` as in a checkout. Every record and manifest carries the corpus's
identity (results.CorpusRef): a digest of its files, and its local changes against the bundled
manifest or the checkout's git HEAD.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from pathlib import Path, PurePosixPath

import conformance
from conformance.data.corpus_files import CORPUS_SUFFIXES, MANIFEST_NAME, corpus_digest, corpus_files
from conformance.data.loader import discover
from conformance.options import BY_NAME
from conformance.results import CorpusOrigin, CorpusRef

PACKAGE_DIR = Path(conformance.__file__).resolve().parent
LOCAL = "cases"  # the folder name a checkout and a working folder use, and bundled files are named under
MAX_CHANGES = 200


def packaged_root() -> Path | None:
    """The package's own corpus: bundled in the wheel, or the cases folder of the source tree it runs from."""
    bundled = PACKAGE_DIR / "corpus"
    if (bundled / MANIFEST_NAME).is_file():
        return bundled
    tree = PACKAGE_DIR.parent
    if (tree / LOCAL / "schema.json").is_file() and (tree / "pyproject.toml").is_file():
        return tree / LOCAL
    return None


def root_of(given: str | Path | None = None, cwd: Path | None = None) -> Path:
    """The corpus root: ``given`` (--cases), else TORCH_CONFORMANCE_CASES, else ./cases where the
    working folder (``cwd``, default the process's) has one, else the package's own."""
    value = given or BY_NAME["cases"].env_default()
    if value:
        return Path(value)
    local = Path(LOCAL)
    if ((cwd or Path()) / local).is_dir():
        return local
    return packaged_root() or local


def where_looked(given: str | Path | None = None, cwd: Path | None = None) -> str:
    """What a usage error says about where case files were looked for."""
    root = root_of(given, cwd)
    if given or BY_NAME["cases"].env_default():
        return str(root)
    return f"{root} (no --cases given; the working folder's {LOCAL}/, else the package's own corpus)"


def resolve(path: str, root: Path) -> Path:
    """A case path as given: as it is where it exists, else `cases/<path>` (how records name a
    bundled file) under the corpus root, where the working folder has no `cases/`: a record's
    rerun line works from any folder."""
    given = Path(path)
    if given.exists() or given.is_absolute():
        return given
    parts = given.parts
    if parts and parts[0] == LOCAL and not Path(LOCAL).is_dir():
        return root.joinpath(*parts[1:])
    return given


CASE_FILE_LIMIT = 1 << 22  # 4 MiB: a case's program and classes are each at most 100,000 characters


def corpus_file(named: str, root: Path) -> Path | None:
    """The file a record's `case_file` names inside the corpus `root`, never outside it: a relative path
    without `..`, `cases/<path>` (how records name a case file) or `<path>` under the root, whose real
    location (symbolic links followed) is still under the root's. None for any other path."""
    given = PurePosixPath(named)
    if given.is_absolute() or ".." in given.parts or not given.parts:
        return None
    parts = given.parts[1:] if given.parts[0] == LOCAL else given.parts
    base = root.resolve()
    real = base.joinpath(*parts).resolve()
    return real if real.is_relative_to(base) else None


def changed_files(made: dict[str, set[str]], root: Path) -> list[str]:
    """Of the case files records name (with the sha256s they were run at), those that changed or went
    away. Only files inside the corpus `root` are read (`corpus_file`), each at most CASE_FILE_LIMIT
    bytes; a path outside it is said so, and nothing is read or looked up for it."""
    out = []
    for path, hashes in sorted(made.items()):
        p = corpus_file(path, root)
        if p is None:
            out.append(f"{path} (not in the corpus {root}: not read)")
            continue
        if not p.is_file():  # gone, or no regular file (a folder, a device, a pipe)
            out.append(f"{path} (gone)")
            continue
        try:
            with p.open("rb") as f:
                data = f.read(CASE_FILE_LIMIT + 1)
        except OSError as exc:
            out.append(f"{path} (unreadable: {exc.strerror or exc})")
            continue
        if len(data) > CASE_FILE_LIMIT or hashlib.sha256(data).hexdigest() not in hashes:
            out.append(path)
    return out


def has_cases(paths: list[Path]) -> bool:
    return any(True for _ in discover(paths))


def display(path: Path, root: Path) -> str | None:
    """How a record names a case file of the package's own corpus run from elsewhere (`cases/<path>`),
    or None where the working folder's name for it stands."""
    if origin_of(root) == "folder":
        return None
    try:
        return f"{LOCAL}/{path.resolve().relative_to(root.resolve()).as_posix()}"
    except ValueError:
        return None


def origin_of(root: Path) -> CorpusOrigin:
    packaged = packaged_root()
    if packaged is None or root.resolve() != packaged:
        return "folder"
    return "bundled" if (packaged / MANIFEST_NAME).is_file() else "checkout"


def _bundled_manifest() -> dict[str, object] | None:
    try:
        data = json.loads((PACKAGE_DIR / "corpus" / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None


def _git_changes(root: Path) -> list[str] | None:
    """The checkout's changes to its cases folder against HEAD, or None where git cannot say."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=30, check=False)  # noqa: S603, S607  # git from PATH, as a developer has it
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None

    prefix = git("rev-parse", "--show-prefix")
    status = git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
    if prefix is None or status is None:
        return None
    prefix = prefix.strip()  # paths in the status are the repository's; the corpus's are under root
    words = {"?": "added", "A": "added", "D": "removed"}
    changes = []
    for entry in status.split("\0"):
        path = entry[3:].removeprefix(prefix)
        if len(entry) > 3 and Path(path).suffix in CORPUS_SUFFIXES:
            changes.append(f"{words.get(entry[:2].strip()[:1], 'changed')} {path}")
    return changes


def _against(files: dict[str, str], base: dict[str, str]) -> list[str]:
    return ([f"added {p}" for p in sorted(files.keys() - base.keys())]
            + [f"changed {p}" for p in sorted(files.keys() & base.keys()) if files[p] != base[p]]
            + [f"removed {p}" for p in sorted(base.keys() - files.keys())])


@functools.cache
def identity(root: Path) -> tuple[CorpusRef, tuple[str, ...]]:
    """The corpus under ``root`` (resolved) and its local changes, one line per file."""
    files = corpus_files(root)
    origin = origin_of(root)
    manifest = _bundled_manifest()
    changes: list[str] | None
    if origin == "checkout":
        changes, base = _git_changes(root), "checkout's git HEAD"
        version: str | None = conformance.__version__
    elif manifest is not None:
        changes = _against(files, {str(k): str(v) for k, v in manifest["files"].items()})  # type: ignore[attr-defined]  # checked a dict above
        base = f"bundled corpus of torch-conformance {manifest.get('version')}"
        version = str(manifest.get("version")) if origin == "bundled" or not changes else None
    else:
        changes, base, version = None, None, None
    count = {w: None if changes is None else sum(c.startswith(w) for c in changes)
             for w in ("added", "changed", "removed")}
    ref = CorpusRef(origin=origin, version=version, digest=corpus_digest(files), files=len(files),
                    base=base if changes is not None else None, **count)
    return ref, tuple((changes or [])[:MAX_CHANGES])
