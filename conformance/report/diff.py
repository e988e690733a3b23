"""`report diff A B`: what changed between two runs, and whether that is a regression.

Each side is results files or a compat.json. Builds are paired: the same build id on both
sides; then, if one build is left on each side, those two (the usual "stable vs nightly" or
"upstream vs fork" question); then builds whose torch release matches. Items are matched by
(case, variant) within a pair of builds.

Regressions (exit status 1): an item that went to fail, error or xfail (a declared known failure
is still a regression of the build; the report's history counts it the same way) from anything
else, or a new item that fails; an internals probe that conformed and now diverges or is absent (a
mechanism lost); more graphs compiled than before. Everything else that changed is listed as
information: fixes, newly present mechanisms, fewer compiles, the backend's calls (aborted compiles
included: no graphs), items only on one side, other status moves.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conformance.files import write_atomic
from conformance.report.gather import merge
from conformance.report.kinds import counts_against
from conformance.report.model import Report
from conformance.report.read import Sourced
from conformance.results import UNEXPLAINED
from conformance.versions import torch_release


@dataclass(frozen=True)
class Change:
    kind: str
    case_id: str
    variant: str
    before: str
    after: str
    detail: str = ""

    def line(self) -> str:
        text = f"{self.case_id} [{self.variant}]: {self.before} -> {self.after}"
        return f"{text} ({self.detail})" if self.detail else text


@dataclass
class PairDiff:
    a: str
    b: str
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    other: list[Change] = field(default_factory=list)
    artifacts_gone: list[str] = field(default_factory=list)
    artifacts_new: list[str] = field(default_factory=list)


@dataclass
class RunDiff:
    pairs: list[PairDiff]
    only_a: list[str]
    only_b: list[str]
    corpora_a: list[str] = field(default_factory=list)  # each side's corpora (CorpusRef.describe), where they differ
    corpora_b: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return any(p.regressions for p in self.pairs)

    def to_json(self) -> dict[str, Any]:
        return {"pairs": [asdict(p) for p in self.pairs], "only_in_a": self.only_a, "only_in_b": self.only_b,
                "corpora_a": self.corpora_a, "corpora_b": self.corpora_b, "regressed": self.regressed}


def load_side(paths: list[Path]) -> Report:
    return merge(paths)


def _family(build: str) -> str:
    version = build.split("@", 1)[0]
    release = torch_release(version)
    local = version.partition("+")[2]
    return f"{release}+{local}" if release is not None else version


def pair_builds(a: Report, b: Report) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    left = [x.id for x in a.builds]
    right = [x.id for x in b.builds]
    pairs = [(x, x) for x in left if x in right]
    left = [x for x in left if x not in right]
    right = [x for x in right if x not in {p[1] for p in pairs}]
    if len(left) == 1 and len(right) == 1:
        return [*pairs, (left[0], right[0])], [], []
    for x in list(left):
        match = next((y for y in right if _family(y) == _family(x)), None)
        if match is not None:
            pairs.append((x, match))
            left.remove(x)
            right.remove(match)
    return pairs, left, right


def _probes(s: Sourced) -> dict[str, str]:
    return s.record.probes.statuses()


def _artifacts(report: Report, build: str) -> set[str]:
    return {n for s in report.records if s.build == build for n in s.record.probes.seen}


def diff_pair(a: Report, b: Report, build_a: str, build_b: str) -> PairDiff:  # noqa: PLR0912  # one branch per kind of change
    out = PairDiff(build_a, build_b)
    left = {(s.record.case_id, s.record.variant): s for s in a.records if s.build == build_a}
    right = {(s.record.case_id, s.record.variant): s for s in b.records if s.build == build_b}
    for key in sorted(left.keys() | right.keys()):
        sa, sb = left.get(key), right.get(key)
        if sa is None or sb is None:
            present = sa or sb
            assert present is not None
            side = "only in B" if sa is None else "only in A"
            change = Change(side, *key, "—" if sa is None else present.record.status,
                            "—" if sb is None else present.record.status)
            # a new item that fails is a regression; one that went missing is shown, and the
            # report's "no case ran" check catches a whole cell lost
            (out.regressions if sb is not None and sb.record.status in UNEXPLAINED else out.other).append(change)
            continue
        ra, rb = sa.record, sb.record
        if ra.status != rb.status:
            change = Change(f"{ra.status}->{rb.status}", *key, ra.status, rb.status,
                            rb.reason.splitlines()[0] if rb.status in UNEXPLAINED and rb.reason else "")
            # as the report's history: what counts against a build (Note [A difference is not a failure])
            if counts_against(rb) and not counts_against(ra) and ra.status != "skip":
                out.regressions.append(change)
            elif counts_against(ra) and not counts_against(rb) and rb.status != "skip":
                out.improvements.append(change)
            else:
                out.other.append(change)
        pa, pb = _probes(sa), _probes(sb)
        for beh in sorted(pa.keys() & pb.keys()):  # an item without probes (skip, error) says nothing
            before, after = pa.get(beh, "absent"), pb.get(beh, "absent")
            if before == after:
                continue
            change = Change(f"probe {beh}", *key, before, after, f"internals probe {beh}")
            if before == "conforms" and after in ("diverges", "absent"):
                out.regressions.append(change)
            elif after == "conforms" or (before == "absent" and after == "diverges"):
                out.improvements.append(change)
            else:
                out.other.append(change)
        for name in sorted(ra.compile_counts.keys() | rb.compile_counts.keys()):
            ca, cb = ra.compile_counts.get(name), rb.compile_counts.get(name)
            if ca is None or cb is None or ca == cb:
                continue
            if name.endswith("_backend_calls"):  # calls, not graphs: an aborted compile is one
                out.other.append(Change(f"compiles {name}", *key, str(ca), str(cb), f"backend calls ({name})"))
                continue
            change = Change(f"compiles {name}", *key, str(ca), str(cb), f"graphs compiled ({name})")
            (out.regressions if cb > ca else out.improvements).append(change)
    arts_a, arts_b = _artifacts(a, build_a), _artifacts(b, build_b)
    out.artifacts_gone = sorted(arts_a - arts_b)
    out.artifacts_new = sorted(arts_b - arts_a)
    return out


def diff_runs(a: Report, b: Report) -> RunDiff:
    pairs, only_a, only_b = pair_builds(a, b)
    corpora = [{d: words for build in side.builds for d, words in build.corpora.items()} for side in (a, b)]
    differ = corpora[0].keys() != corpora[1].keys()
    return RunDiff([diff_pair(a, b, x, y) for x, y in pairs], only_a, only_b,
                   *([sorted(c.values()) for c in corpora] if differ else ([], [])))


def render_text(d: RunDiff, *, limit: int = 200) -> str:
    lines: list[str] = []
    if d.corpora_a or d.corpora_b:
        lines += ["the two sides ran different corpora, so a change below may be a change of cases:",
                  *(f"  {side}: {words}" for side, corpora in (("A", d.corpora_a), ("B", d.corpora_b))
                    for words in corpora or ["no corpus named (records written before corpora were)"])]
    for p in d.pairs:
        title = p.a if p.a == p.b else f"{p.a} -> {p.b}"
        lines.append(f"## {title}")
        for heading, changes in (("regressions", p.regressions), ("improvements", p.improvements),
                                 ("other changes", p.other)):
            lines.append(f"{heading}: {len(changes)}")
            by_kind: dict[str, list[Change]] = {}
            for c in changes:
                by_kind.setdefault(c.kind, []).append(c)
            for kind, group in sorted(by_kind.items()):
                lines.append(f"  {kind} ({len(group)}):")
                lines += [f"    {c.line()}" for c in group[:limit]]
                if len(group) > limit:
                    lines.append(f"    ... {len(group) - limit} more (--json for all)")
        if p.artifacts_gone:
            lines.append(f"generated-code artifacts no longer seen: {', '.join(p.artifacts_gone)}")
        if p.artifacts_new:
            lines.append(f"generated-code artifacts newly seen: {', '.join(p.artifacts_new)}")
    for b in d.only_a:
        lines.append(f"build only in A (not compared): {b}")
    for b in d.only_b:
        lines.append(f"build only in B (not compared): {b}")
    n = sum(len(p.regressions) for p in d.pairs)
    lines.append(f"{n} regression(s)" + (": exit status 1" if n else ""))
    return "\n".join(lines) + "\n"


def write_json(d: RunDiff, path: Path) -> None:

    write_atomic(path, (json.dumps(d.to_json(), indent=1, ensure_ascii=False) + "\n").encode())
