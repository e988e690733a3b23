"""Check an installed torch-conformance wheel as a vendor would use it: no checkout, an empty folder.

Run with the Python of an environment that holds only torch and the wheel (`nox -s package`
makes one). From an empty folder it lists the bundled corpus, refuses a missing and an empty
cases folder (exit 2, naming the path), runs a selection and renders its report, then runs the
same selection on a checkout's cases folder; the records of both must name their corpus, with
the same digest, and carry the same ids and statuses. Exit 1 with every problem listed.

    python scripts/check_package.py --checkout-cases ../cases -k "data_mutation_nonleaf and aot_eager"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "conformance", *args]
    print("$ torch-conformance " + " ".join(args), flush=True)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)  # noqa: S603  # our own CLI
    print(f"  exit {done.returncode}; " + (done.stdout.strip().splitlines() or [""])[-1][:200], flush=True)
    return done


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check(selection: str, checkout_cases: Path, work: Path) -> list[str]:
    problems: list[str] = []
    empty = work / "empty"
    empty.mkdir()
    listed = cli("list", "--json", "--devices", "cpu", "-k", selection, cwd=empty)
    rows = json.loads(listed.stdout) if listed.returncode == 0 else []
    if not rows:
        problems.append(f"list in an empty folder listed nothing (exit {listed.returncode}): {listed.stderr[-300:]}")
    for given in ("/nonexistent", str(work / "no-cases")):
        Path(work / "no-cases").mkdir(exist_ok=True)
        done = cli("list", "--cases", given, cwd=empty)
        if done.returncode != 2 or given not in done.stderr:
            problems.append(f"list --cases {given}: exit {done.returncode}, stderr {done.stderr.strip()!r}; "
                            "expected exit 2 naming the path")
    runs = {}
    for name, extra in (("bundled", []), ("checkout", ["--cases", str(checkout_cases)])):
        results = work / name / "results.jsonl"
        done = cli("run", "--devices", "cpu", "-k", selection, "--results", str(results), *extra, cwd=empty)
        if done.returncode not in (0, 1) or not results.is_file():
            problems.append(f"run ({name}) exit {done.returncode}: {done.stderr[-500:]}")
            continue
        runs[name] = records(results)
        report = cli("report", str(results), "-o", str(work / name / "report"), "--exit-zero", cwd=empty)
        if report.returncode != 0 or not (work / name / "report" / "index.html").is_file():
            problems.append(f"report ({name}) exit {report.returncode}: {report.stderr[-500:]}")
    if len(runs) == 2:
        problems += compare(runs["bundled"], runs["checkout"], len(rows))
    return problems


def compare(bundled: list[dict[str, object]], checkout: list[dict[str, object]], listed: int) -> list[str]:
    problems = []
    if len(bundled) != listed:
        problems.append(f"the bundled run wrote {len(bundled)} records for {listed} listed items")

    def corpus(r: dict[str, object]) -> dict[str, object]:
        return (r.get("fingerprint") or {}).get("corpus") or {}  # type: ignore[union-attr, return-value]  # JSON

    origins = {corpus(r).get("origin") for r in bundled}
    if origins != {"bundled"}:
        problems.append(f"the bundled run's records name corpus origins {origins}, expected only 'bundled'")
    digests = {corpus(r).get("digest") for r in bundled} | {corpus(r).get("digest") for r in checkout}
    if len(digests) != 1 or None in digests:
        problems.append(f"the two runs name corpus digests {digests}: the bundled corpus is not the checkout's")

    def ids(rs: list[dict[str, object]]) -> set[tuple[object, ...]]:
        return {(r["case_id"], r["variant"], r["status"]) for r in rs}

    if ids(bundled) != ids(checkout):
        problems.append(f"ids differ: only bundled {sorted(ids(bundled) - ids(checkout))[:5]}, only checkout "
                        f"{sorted(ids(checkout) - ids(bundled))[:5]}")
    files = {str(r["case_file"]).split("/", 1)[0] for r in bundled}
    if files != {"cases"}:
        problems.append(f"the bundled run names its case files under {files}, expected cases/ as a checkout does")
    print(f"{len(bundled)} records each; corpus {sorted(map(str, digests))}; origins bundled {origins}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout-cases", type=Path, required=True, help="a checkout's cases folder")
    parser.add_argument("-k", dest="selection", default="data_mutation_nonleaf and aot_eager",
                        help="the -k selection both runs take")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="torch-conformance-package-") as tmp:
        problems = check(args.selection, args.checkout_cases.resolve(), Path(tmp))
    for p in problems:
        print(f"PROBLEM: {p}", file=sys.stderr)
    print("the package works without a checkout" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
