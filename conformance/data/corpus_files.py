"""The files that make a corpus, and its digest: standard library only, because the package build
(setup.py) loads this file by path to write the bundled corpus's manifest, before anything is installed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

CORPUS_SUFFIXES = (".yaml", ".yml")  # the case files and UPSTREAM.yaml: what decides what a run checks
MANIFEST_NAME = "CORPUS.json"


def corpus_files(root: Path) -> dict[str, str]:
    """Each file of the corpus under ``root`` ('/'-separated path under it -> sha256 of its bytes);
    hidden files and folders are not part of it."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix in CORPUS_SUFFIXES and path.is_file() and not any(p.startswith(".") for p in rel.parts):
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def corpus_digest(files: dict[str, str]) -> str:
    """One digest for the corpus: of every file's path and content digest, in path order."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(f"{rel}\0{files[rel]}\n".encode())
    return h.hexdigest()


def manifest_text(version: str, files: dict[str, str]) -> str:
    """The bundled corpus's manifest: what the package was built with, to tell local changes from."""
    return json.dumps({"version": version, "digest": corpus_digest(files), "files": files},
                      indent=1, sort_keys=True) + "\n"
