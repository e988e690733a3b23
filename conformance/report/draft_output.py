"""What a draft's program printed, run as published on the build the draft is for: never rendered from
a record. `report --capture-drafts` runs each draft's program with the report's own Python (whose
torch must be the draft's build) and keeps the output beside the drafts, keyed by the program and the
torch version, so that a later report of the same records shows it again and a changed program is
run again."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from conformance.files import write_atomic

CAPTURED = ".captured.json"  # under the drafts folder
OUTPUT_MAX = 6000  # characters of output kept (the end: where a traceback's innermost error is)
TIMEOUT = 600.0
KEPT_ENV = ("PATH", "LANG", "LD_LIBRARY_PATH", "TMPDIR", "OMP_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
            "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


@dataclass(frozen=True)
class Captured:
    torch_version: str
    exit_status: int
    output: str


def key(program: str, torch_version: str) -> str:
    return hashlib.sha256(f"{torch_version}\0{program}".encode()).hexdigest()[:16]


def load(folder: Path) -> dict[str, Captured]:
    """The outputs kept beside a report's drafts (none where the file is missing or unreadable)."""
    try:
        data = json.loads((folder / CAPTURED).read_text(encoding="utf-8"))
        return {k: Captured(str(v["torch"]), int(v["exit"]), str(v["output"])) for k, v in data.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def save(folder: Path, kept: dict[str, Captured]) -> None:
    data = {k: {"torch": c.torch_version, "exit": c.exit_status, "output": c.output} for k, c in sorted(kept.items())}
    write_atomic(folder / CAPTURED, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def installed_torch(python: str = sys.executable) -> str | None:
    """The torch version the given Python imports, or None."""
    try:
        done = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],  # noqa: S603  # a fixed line
                              capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout.strip() else None


def run(program: str, torch_version: str, python: str = sys.executable, timeout: float = TIMEOUT) -> Captured:
    """Run the program as a file of its own in an empty folder; its output, stdout and stderr as they came."""
    with tempfile.TemporaryDirectory(prefix="draft-") as tmp:
        script = Path(tmp) / "repro.py"
        script.write_text(program, encoding="utf-8")
        # what a torch program needs, nothing else of the caller's (a CI job's tokens stay out of its reach)
        env = {k: v for k, v in os.environ.items() if k in KEPT_ENV or k.startswith(("CUDA_", "LC_"))}
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", HOME=tmp)
        try:
            # the draft's program is the reproducer that came with the results: code, run only where the
            # results are trusted (`report --capture-drafts` says so)
            done = subprocess.run([python, script.name], cwd=tmp, stdout=subprocess.PIPE,  # noqa: S603
                                  stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False, env=env)
            output, status = done.stdout, done.returncode
        except subprocess.TimeoutExpired as exc:
            partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            output, status = partial + f"\n(stopped after {timeout:.0f} s)", -1
    output = output.replace(str(script), "repro.py").replace(tmp, ".")
    # a warning's or traceback's frame in an installed package names where this machine keeps it
    output = re.sub(r"(?<![\w.])(?:/|[A-Za-z]:\\)\S*?[/\\](site|dist)-packages[/\\]", r"<\1-packages>/", output)
    if len(output) > OUTPUT_MAX:
        output = "...\n" + output[-OUTPUT_MAX:]
    return Captured(torch_version, status, output.rstrip("\n"))
