"""The torch releases to test, derived from what the package index offers (never hard-coded):
the newest patch of every minor release since --since, optionally only the --latest N, plus
`nightly` with --nightly. Prints a JSON list (a CI matrix) or, with --plain, one per line.

    python scripts/torch_releases.py --latest 2 --nightly      # on push: ["2.14.1", "2.15.0", "nightly"]
    python scripts/torch_releases.py --since 2.10              # weekly: every release since 2.10
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from packaging.version import InvalidVersion, Version


def available(pip_output: str) -> list[str]:
    """The versions listed on the `Available versions:` line of `pip index versions torch`."""
    for line in pip_output.splitlines():
        if line.strip().startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    raise ValueError("no 'Available versions:' line in the output of `pip index versions torch`")


def releases(versions: Sequence[str], *, since: str = "2.10", latest: int | None = None) -> list[str]:
    """Final releases (no pre-release, no local build tag) at or after `since`, the newest patch
    of each minor release, oldest first; the last `latest` of them if given."""
    newest: dict[tuple[int, int], Version] = {}
    for text in versions:
        try:
            v = Version(text)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease or v.local or v < Version(since):
            continue
        key = (v.major, v.minor)
        if key not in newest or v > newest[key]:
            newest[key] = v
    out = [str(newest[k]) for k in sorted(newest)]
    return out[-latest:] if latest else out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", default="2.10", help="oldest release (default 2.10)")
    parser.add_argument("--latest", type=int, help="only the newest N releases")
    parser.add_argument("--nightly", action="store_true", help="append `nightly`")
    parser.add_argument("--from-file", help="read `pip index versions torch` output from this file (- for stdin)")
    parser.add_argument("--plain", action="store_true", help="one per line instead of JSON")
    args = parser.parse_args(argv)
    if args.from_file:
        text = sys.stdin.read() if args.from_file == "-" else Path(args.from_file).read_text(encoding="utf-8")
    else:
        text = subprocess.run(  # this interpreter's pip, fixed arguments
            [sys.executable, "-m", "pip", "index", "versions", "torch"], capture_output=True, text=True, check=True
        ).stdout
    found = releases(available(text), since=args.since, latest=args.latest) + (["nightly"] if args.nightly else [])
    if not found:
        print(f"no torch release since {args.since} on the index", file=sys.stderr)
        return 1
    print("\n".join(found) if args.plain else json.dumps(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
