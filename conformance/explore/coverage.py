"""`explore --coverage N`: what the grammar draws, measured. N programs drawn as an exploration draws
them (the same strategy and seed), the share holding each ingredient, and the share eager accepts
(each program run as the control runs it: both sides eager), so that an ingredient the grammar
names but hardly ever draws, or a grammar that mostly writes programs eager rejects, shows."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

from conformance.explore.engine import Explorer, Ran, case_text
from conformance.explore.grammar import CALL_KINDS, CONTEXTS, Program, programs, registry_table
from conformance.explore.registry import DTYPES, FormTable
from conformance.explore.statements import ACTIONS, FLOAT_KINDS, METADATA, OP_KINDS, STORAGE_MOVES, family_of

# the ingredients issue 28 asks to be drawn, by the names Program.ingredients gives them
EXPECTED = (
    *(f"call:{k}" for k in CALL_KINDS),
    *(f"statement:{k}" for k in sorted(STORAGE_MOVES)),
    *(f"statement:{k}" for k in sorted(METADATA)),
    "shape:size-1", "shape:0-d", "shape:empty",
    *(f"statement:{k}" for k in FLOAT_KINDS),
    "sweep", "sweep:comes back to a value",
    "input:two_tensor", "input:nested_two_tensor", "input:user_subclass", "input:module", "input:optimizer",
    "input:view",
    "ambient:no_grad", "ambient:inference_mode",
    *(f"context:{c}" for c in CONTEXTS),
    *(f"action:{a}" for a in ACTIONS),
    "statement:fn_apply", "statement:fn_inplace", "statement:hook",
    *(f"dtype:{d}" for d in DTYPES),
    *(f"statement:{k}" for k in OP_KINDS),
)


def draw(n: int, seed_: int = 0, *, float_sweeps: bool = True, registry: bool = True) -> list[Program]:
    """N programs, drawn by Hypothesis from the explorer's strategy under a fixed seed."""
    out: list[Program] = []

    @seed(seed_)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(float_sweeps=float_sweeps, table=registry_table() if registry else None))
    def collect(program: Program) -> None:
        out.append(program)

    collect()
    return out[:n]


def coverage(n: int, seed_: int = 0, *, run: bool = True, registry: bool = True) -> dict[str, Any]:
    """The share of N drawn programs holding each ingredient, per op family the ops drawn and the
    share eager accepts, and (`run`) the share eager accepts in all."""
    drawn = draw(n, seed_, registry=registry)
    counts: Counter[str] = Counter()
    for p in drawn:
        counts.update(p.ingredients())
    shares = {k: counts[k] / max(len(drawn), 1) for k in sorted(set(EXPECTED) | set(counts))}
    doc: dict[str, Any] = {"programs": len(drawn), "seed": seed_, "shares": shares,
                           "below_1_percent": [k for k in EXPECTED if shares.get(k, 0.0) < 0.01]}
    outcomes = _eager_outcomes(len(drawn), seed_, registry) if run else []
    if run:
        doc["valid_share"] = outcomes.count("ok") / max(len(drawn), 1)
        doc["eager_crashed"] = outcomes.count("crashed")
    doc["families"] = _families(drawn, outcomes, registry_table() if registry else None)
    return doc


def _families(drawn: list[Program], outcomes: list[str], table: FormTable | None) -> dict[str, dict[str, Any]]:
    """Per op family: the ops the registry offers, the distinct ops drawn, the programs holding one, and
    of those the share eager accepts."""
    rows: dict[str, dict[str, Any]] = {}
    for k, p in enumerate(drawn):
        families: dict[str, set[str]] = {}
        for s in p.statements:
            family = family_of(s.kind)
            if family is not None:
                families.setdefault(family, set()).add(s.op.split(".")[0] if s.op else s.kind)
        for family, ops in families.items():
            row = rows.setdefault(family, {"programs": 0, "accepted": 0, "ops": set()})
            row["programs"] += 1
            row["accepted"] += k < len(outcomes) and outcomes[k] == "ok"
            row["ops"] |= ops
    out = {}
    for family, row in sorted(rows.items()):
        offered = {f.op.split(".")[0] for f in table.forms if f.family == family} if table is not None else set()
        out[family] = {"programs": row["programs"], "ops_drawn": len(row["ops"]), "registry_ops": len(offered),
                       "registry_ops_drawn": len(row["ops"] & offered),
                       "accepted": row["accepted"] / row["programs"] if outcomes else None}
    return out


def _eager_outcomes(n: int, seed_: int, registry: bool) -> list[str]:
    """Per drawn program: ok (eager accepts it), rejected, or crashed (eager killed the process; the
    next child goes on after it)."""
    outcomes: list[str] = []
    while len(outcomes) < n:
        proc = subprocess.run([sys.executable, "-m", "conformance.explore.coverage", str(n), str(seed_),  # noqa: S603  # our own module, numbers as arguments
                               str(len(outcomes)), str(int(registry))], capture_output=True, text=True, check=False)
        got = [line for line in proc.stdout.splitlines() if line in ("ok", "rejected")]
        outcomes += got
        if proc.returncode != 0 and len(outcomes) < n:
            outcomes.append("crashed")
    return outcomes[:n]


def _child(n: int, seed_: int, start: int, registry: bool) -> None:
    """Run programs start.. of the N drawn, both sides eager, printing each one's outcome (ok, or what went
    wrong) as it ends."""
    with tempfile.TemporaryDirectory(prefix="conformance-coverage-") as tmp:
        explorer = Explorer(Path(tmp), backends=("none",), modes=("inference",))
        for p in draw(n, seed_, registry=registry)[start:]:
            text = case_text(p, backends=("none",), modes=("inference",))
            ran = Ran(p, text, [r for _, r in explorer.records(explorer.load(text))])
            print("rejected" if ran.rejected else "ok", flush=True)


if __name__ == "__main__":
    _child(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1")


def to_text(doc: dict[str, Any]) -> str:
    lines = [f"explore --coverage: {doc['programs']} programs drawn (seed {doc['seed']})"]
    if "valid_share" in doc:
        lines.append(f"accepted by eager: {doc['valid_share']:.1%} ({doc['eager_crashed']} crashed eager itself)")
    lines += ["per op family: programs holding one, distinct ops drawn (of those torch's registry offers), "
              "accepted by eager"]
    for family, row in doc.get("families", {}).items():
        accepted = "" if row["accepted"] is None else f", {row['accepted']:.1%} accepted"
        lines.append(f"  {family:<11} {row['programs']:>6} programs, {row['ops_drawn']:>4} ops drawn "
                     f"({row['registry_ops_drawn']} of {row['registry_ops']} from the registry){accepted}")
    lines += [f"  {share:6.1%}  {name}" for name, share in sorted(doc["shares"].items(), key=lambda kv: kv[1])]
    if doc["below_1_percent"]:
        lines.append("drawn in under 1 % of programs: " + ", ".join(doc["below_1_percent"]))
    return "\n".join(lines)
