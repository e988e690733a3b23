"""Merging results files into one report model: builds, the matrix, failures, problems.

Reading is strict: a line that is not a valid `torch-conformance.result/2` record, or inputs
that mix schema versions, stop the report with an error naming file:line (a report that
silently dropped records would show a wrong matrix). A build is the torch version plus git
hash of a record's fingerprint; where inputs overlap, the latest record per (build, case,
variant) is kept and the report says which were dropped. Everything is sorted, and nothing
depends on the time the report is made, so the same inputs give byte-identical files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_args

from conformance.behaviors import IDS
from conformance.bench.document import BenchDocument
from conformance.core.entry import counts_graphs
from conformance.data.corpus import changed_files, root_of
from conformance.data.parity import ParityFile, ParityRowDoc
from conformance.data.parity import table as parity_table
from conformance.report.builds import Build, in_release_order, labels
from conformance.report.causes import causes_of
from conformance.report.document import (
    CauseDoc,
    CellVerdict,
    DroppedDoc,
    InputDoc,
    KindCountDoc,
    MechanismsDoc,
    ProblemDoc,
    SpeedDoc,
    StaleDoc,
    VerdictDoc,
)
from conformance.report.history import history, regressed, regression_words
from conformance.report.kinds import (
    KIND_SHORT,
    KNOWN_KINDS,
    NOT_BUGS,
    known_causes,
    known_kind,
    known_links,
)
from conformance.report.read import (
    RunInfo,
    Sourced,
)
from conformance.report.speed import speed
from conformance.report.words import cause_words, corpora_words
from conformance.results import (
    COMPARED,
    FAILING,
    HOLDS,
    NOT_PASSING,
    RAN,
    STATUSES,
    UNEXPLAINED,
    Fingerprint,
    ProbeStatus,
    ResultRecord,
    Status,
    undeclared,
)
from conformance.versions import version_key

T = TypeVar("T")
PROBE_STATUSES: tuple[ProbeStatus, ...] = get_args(ProbeStatus)
NO_DEVICE = "case file"  # the column of records that belong to no device (a case file that does not load)


SHOWN_CHARS = 20_000  # per text block in compat.md and index.html; compat.json keeps every character


def clip(text: object, limit: int = SHOWN_CHARS) -> str:
    """Text for a page: at most `limit` characters, saying how much was left out."""
    value = str(text or "")
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n… {len(value) - limit} more characters in compat.json"


def build_id(fp: Fingerprint) -> str:
    version = fp.torch_version or "unknown"
    git = fp.torch_git
    return f"{version}@{str(git)[:12]}" if git else str(version)


FOLD_AT = 30  # a list or table longer than this is folded (<details>, its count in the summary) in both pages


@dataclass
class Cell:
    behavior: str
    build: str
    device: str
    counts: dict[Status, int]
    selected: bool = True
    unavailable: bool = False
    kinds: dict[str, int] = field(default_factory=dict)  # xfail items by the kind they count as (known_kind)
    new: int = 0  # items failing here that passed on the release before (Report.newly_failing)

    @property
    def ran(self) -> int:
        return sum(self.counts[s] for s in RAN)

    @property
    def verdict(self) -> CellVerdict:
        """fail (a fail or error), xpass (retire), pass; where no case ran: unavailable (every item skipped
        because the device is absent on the machine that ran it), not-selected (a run narrowed on purpose
        selected nothing here), or empty (an error: nothing says why no case ran)."""
        if self.ran == 0:
            if self.unavailable:
                return "unavailable"
            return "empty" if self.selected else "not-selected"
        if self.counts["fail"] or self.counts["error"]:
            return "fail"
        if self.counts["xpass"]:
            return "xpass"
        return "pass"

    @property
    def shade(self) -> str:
        """What the cell holds, worst first (SHADES): an untriaged failure, a newly failing item, a known
        failure that passes, known bugs, only differences by design or benign, all pass; or why no case ran."""
        if self.verdict not in HOLDS:
            return self.verdict
        if self.new:
            return "new"
        if self.verdict == "xpass":
            return "xpass"
        if any(n for k, n in self.kinds.items() if k not in NOT_BUGS):
            return "bug"
        return "difference" if self.counts["xfail"] else "pass"

    @property
    def word(self) -> str:
        return SHADES[self.shade][0]

    def parts(self) -> list[tuple[str, str]]:
        """(status, text) per count the cell shows: items per status, the known failures by kind, the
        newly failing."""
        out: list[tuple[str, str]] = []
        for st in STATUSES:
            if st == "xfail":
                out += [(st, f"{self.kinds[k]} {KIND_SHORT[k]}") for k in KNOWN_KINDS if self.kinds.get(k)]
            elif self.counts[st]:
                out.append((st, f"{self.counts[st]} {st}"))
        return out + ([("new", f"{self.new} newly failing")] if self.new else [])


@dataclass(frozen=True)
class Need:
    """A kind of thing that needs a person: its words in the headline (`short`: both pages' first line, the
    report command's closing line) and under Needs a person; whether it fails the exit status (a draft to
    file is work to do, not an error)."""
    short: str
    words: str
    fails: bool = True


# What needs a person, declared once: the headline, both pages' Needs a person, the report command's
# closing line and the exit status all read it (Report.attention)
ATTENTION: dict[str, Need] = {
    "failures": Need("failing item(s)", "item(s) fail or error and no known failure covers them"),
    "xpasses": Need("known failure(s) that pass", "known failure(s) pass: retire them"),
    "divergences": Need("passing item(s) whose internals probe diverges undeclared",
                        "passing item(s) whose internals probe diverges from the reference and no reviewed "
                        "divergence declares it"),
    "empty_cells": Need("cell(s) where no case ran and nothing says why",
                        "cell(s) where no case ran and nothing says why"),
    "cut_short": Need("run(s) cut short", "run(s) cut short"),
    "drafts": Need("issue draft(s) to file", "issue draft(s) to file, each of a known bug no upstream issue "
                   "describes: file it, then link the issue in the known failures that cover it", fails=False),
}
QUIET_VERDICTS = ("unavailable", "not-selected")  # no case ran, and that is not an error
# a matrix cell by what it holds, worst first: (its word, what it means), the legend of both pages
SHADES: dict[str, tuple[str, str]] = {
    "fail": ("FAIL", "an item fails or errors and no known failure covers it: needs a person"),
    "empty": ("NO CASE RAN", "no case ran and nothing says why: an error"),
    "new": ("NEWLY FAILING", "an item fails as a declared known bug where it passed (or differed only by design or "
            "benignly) on the release before"),
    "xpass": ("XPASS", "a known failure passes: retire it"),
    "bug": ("known bugs", "items fail as declared known bugs of the build (or of its eager)"),
    "difference": ("by design / benign", "every item passes or differs from eager only by design or benignly: "
                   "not a bug"),
    "pass": ("all pass", "every item that ran passes"),
    "unavailable": ("not available here", "every item skipped: the device is absent on the machine that ran them"),
    "not-selected": ("not selected", "a run narrowed on purpose (--devices, -k) selected no item here"),
}


@dataclass
class Report:
    inputs: list[InputDoc]
    builds: list[Build]
    records: list[Sourced]
    dropped: list[DroppedDoc]
    problems: list[ProblemDoc]
    stale: list[StaleDoc] = field(default_factory=list)
    expectation_files: list[str] = field(default_factory=list)
    runs: list[RunInfo] = field(default_factory=list)
    links: dict[tuple[str, str, str], str] = field(default_factory=dict)  # key -> reproducer link, set on write
    parity: ParityFile | None = None  # the upstream parity mapping, when given
    drafts: list[tuple[str, str]] = field(default_factory=list)  # (title, issue draft path), set on write
    drafts_to_file: list[tuple[str, str]] = field(default_factory=list)  # those of known bugs, set on write
    draft_paths: list[tuple[str, str]] = field(default_factory=list)  # (cause key, issue draft path), set on write
    bench: list[BenchDocument] = field(default_factory=list)  # bench.json documents of the builds, when given
    _memo: dict[str, tuple[tuple[int, ...], Any]] = field(default_factory=dict, repr=False, compare=False)

    def cached(self, name: str, make: Callable[[], T]) -> T:
        """`make()`, computed once while the records and runs stay the same lists: the views below are
        read many times per page (the matrix, the history, what newly fails)."""
        stamp = (id(self.records), len(self.records), id(self.runs), len(self.runs))
        hit = self._memo.get(name)
        if hit is None or hit[0] != stamp:
            hit = self._memo[name] = (stamp, make())
        value: T = hit[1]
        return value

    def speed(self) -> SpeedDoc | None:
        """The bench tables release over release (Note [Before/after across releases])."""

        return speed(self.bench)

    def changed_cases(self, root: Path | None = None) -> list[str]:
        """Case files (as the runs named them) that changed or went away since their records were made:
        the report shows results of case files that are no longer these (read confined: `changed_files`)."""
        made: dict[str, set[str]] = {}
        for s in self.records:
            if s.record.case_file and s.record.case_sha256:
                made.setdefault(s.record.case_file, set()).add(s.record.case_sha256)
        return changed_files(made, root if root is not None else root_of())

    def parity_rows(self) -> list[ParityRowDoc]:
        """Per upstream test file and in total: tests, behavioural, mapped; per build, the mapped tests
        whose cases pass / are known failures / fail / did not run there, and those where the build
        behaves as upstream's test asserts / does not / cannot be told."""
        if self.parity is None:
            return []
        records: dict[str, dict[str, list[ResultRecord]]] = {b.id: {} for b in self.builds}
        for s in self.records:
            records.setdefault(s.build, {}).setdefault(s.record.case_id, []).append(s.record)
        return parity_table(self.parity, records)

    # ------------------------------------------------------------------ derived views
    @property
    def declared(self) -> list[str]:
        """The behaviours of the registry, in its order (the report's rows for the probes)."""
        return list(IDS)

    @property
    def behaviors(self) -> list[str]:
        seen = {behavior_of(s.record) for s in self.records}
        return [*IDS, *sorted(seen - set(IDS))]

    def devices(self, build: str) -> list[str]:
        def make() -> dict[str, set[str]]:
            out: dict[str, set[str]] = {}
            for s in self.records:
                out.setdefault(s.build, set()).add(s.record.device or NO_DEVICE)
            return out

        devs = self.cached("devices", make).get(build, set())
        return sorted(devs - {NO_DEVICE}) + ([NO_DEVICE] if NO_DEVICE in devs else [])

    @property
    def columns(self) -> list[tuple[Build, str]]:
        return [(b, d) for b in self.builds for d in self.devices(b.id)]

    def _by_cell(self) -> dict[tuple[str, str, str], list[Sourced]]:
        def make() -> dict[tuple[str, str, str], list[Sourced]]:
            out: dict[tuple[str, str, str], list[Sourced]] = {}
            for s in self.records:
                out.setdefault((behavior_of(s.record), s.build, s.record.device or NO_DEVICE), []).append(s)
            return out

        return self.cached("by_cell", make)

    def cell(self, behavior: str, build: str, device: str) -> Cell:
        counts = dict.fromkeys(STATUSES, 0)
        kinds: Counter[str] = Counter()
        skips = []
        new = 0
        for s in self._by_cell().get((behavior, build, device), []):
            counts[s.record.status] += 1
            if s.record.status == "skip":
                skips.append(s.record.skip_kind)
            kind = known_kind(s.record)
            if kind is not None:
                kinds[kind] += 1
            new += self.key(s) in self.newly_failing
        unavailable = bool(skips) and sum(counts.values()) == len(skips) and all(k == "device" for k in skips)
        return Cell(behavior, build, device, counts, self._selected(behavior, build, device, counts), unavailable,
                    dict(kinds), new)

    def _selected(self, behavior: str, build: str, device: str, counts: dict[Status, int]) -> bool:
        """Whether the cell was meant to run: it has items, or some run of the build did not narrow
        its selection (then every behaviour should have had cases), or no run says (no manifest)."""
        runs = [r.manifest for r in self.runs if r.build == build]
        if any(counts.values()) or not runs or any(not m.narrowed for m in runs):
            return True
        return any(i.behavior == behavior and (i.device or NO_DEVICE) == device for m in runs for i in m.items)

    def cells(self) -> list[Cell]:
        return self.cached("cells", lambda: [self.cell(beh, b.id, d) for beh in self.behaviors
                                             for b, d in self.columns])

    def empty_cells(self) -> list[Cell]:
        """Cells of a real device in which no case ran and nothing says why: an error, never a silent green."""
        return [c for c in self.cells() if c.device != NO_DEVICE and c.verdict == "empty"]

    def quiet_cells(self) -> list[Cell]:
        """Cells where no case ran for a stated reason: the device is absent there, or the run was narrowed."""
        return [c for c in self.cells() if c.device != NO_DEVICE and c.verdict in QUIET_VERDICTS]

    @property
    def newly_failing(self) -> frozenset[tuple[str, str, str]]:
        """(build, case, variant) of each item that counts against its build (counts_against) where it did
        not on the release before that ran it: the regressions of the history, the verdicts' `new`, the
        matrix's NEWLY FAILING."""
        return self.cached("new", lambda: frozenset((b, r.case_id, r.variant) for r in history(self)[1]
                                                    for b in r.regressions))

    @property
    def newly_fixed(self) -> frozenset[tuple[str, str, str]]:
        return self.cached("fixed", lambda: frozenset((b, r.case_id, r.variant) for r in history(self)[1]
                                                      for b in r.fixes))

    def regressions(self) -> list[dict[str, Any]]:
        """Each item that fails on a release after passing on the one before: where, in the words of its
        status there, whether a known failure covers it (else it is among the failures, untriaged), and
        the item on the last such release (its anchor on the page)."""
        builds, _ = history(self)
        label = labels(builds)
        by_key = {self.key(s): s for s in self.records}
        out = []
        ids = [b.id for b in builds]
        for r, on in regressed(self):
            last = by_key.get((r.regressions[-1], r.case_id, r.variant))
            statuses = {by_key[(b, r.case_id, r.variant)].record.status for b in r.regressions
                        if (b, r.case_id, r.variant) in by_key}
            before = next((st for st in reversed(r.statuses[: ids.index(r.regressions[-1])]) if st), "pass")
            after = ("after differing only by design or benignly on the release before" if before == "xfail"
                     else "after passing on the release before")
            out.append({"case_id": r.case_id, "variant": r.variant, "on": on, "builds": list(r.regressions),
                        "words": regression_words(self, r), "after": after,
                        "untriaged": bool(statuses & UNEXPLAINED),
                        "first_failing": label.get(r.first_failing or "", "—"),
                        "first_fixed": label.get(r.first_fixed or "", "—"), "item": last})
        return out

    def needs(self) -> dict[str, list[Any]]:
        """What needs a person, per kind of ATTENTION (the drafts to file are known once the report is written)."""
        return {"failures": [s for s in self.failures if s.record.status != "xpass"], "xpasses": self.xpasses,
                "divergences": self.divergent, "empty_cells": self.empty_cells(), "cut_short": self.cut_short,
                "drafts": self.drafts_to_file}

    def attention(self) -> dict[str, Any]:
        """What needs a person (needs()), counted once for the headline, the exit status, both pages and the
        closing line; newly failing items that a known failure covers are triaged: news, apart."""
        regressions = self.regressions()
        parts = self.needs()
        return {**parts, "count": sum(len(v) for v in parts.values()), "regressions": regressions,
                "known_regressions": [r for r in regressions if not r["untriaged"]]}

    def attention_words(self) -> str:
        """What needs a person in a sentence, counted (both pages say it under the section's title)."""
        parts = self.needs()
        if not any(parts.values()):
            return ("Nothing: no item fails or errors untriaged, no known failure passes, no passing item's internals "
                    "probe diverges undeclared, every cell ran its cases, every run finished and no issue draft waits "
                    "to be filed.")
        return "; ".join(f"{len(parts[k])} {need.words}" for k, need in ATTENTION.items() if parts[k]) + "."

    def regressions_words(self) -> str:
        """What the newly failing items are, counted (both pages say it under the section's title)."""
        regressions = self.attention()["regressions"]
        if not regressions:
            return "None: no item fails on a release where it passed on the release before."
        known = sum(1 for r in regressions if not r["untriaged"])
        return (f"Items that fail on a release where they passed, or differed only by design or benignly, on the "
                f"release before: {len(regressions) - known} untriaged (under Needs a person), {known} covered by a "
                "declared known bug.")

    def newly_failing_words(self) -> str:
        """The triaged newly failing items in a sentence ('' when none), per release."""
        known = self.attention()["known_regressions"]
        if not known:
            return ""
        per: Counter[str] = Counter(b for r in known for b in r["builds"])
        where = ", ".join(f"{n} on {self.build(b).torch_version}"
                          for b, n in sorted(per.items(), key=lambda bn: version_key(bn[0])))
        return (f"{len(known)} item(s) newly fail since the release before ({where}), each covered by a declared "
                "known bug (listed under Newly failing)")

    def headline(self) -> tuple[str, str]:
        """(what needs a person (ATTENTION, counted), or '' when nothing does; what else the reader should know
        first: the triaged newly failing items, what ran nowhere for a stated reason, or '')."""
        parts = self.needs()
        bad = [f"{len(parts[k])} {need.short}" for k, need in ATTENTION.items() if parts[k]]
        quiet = self.quiet_cells()
        unavailable = sorted({c.device for c in quiet if c.verdict == "unavailable"})
        notes = [self.newly_failing_words(), corpora_words({b.torch_version: b.corpora for b in self.builds})]
        if n := sum(1 for c in quiet if c.verdict == "unavailable"):
            notes.append(f"{n} cell(s) not available here: no {', '.join(unavailable)} device on the machine that ran "
                         "them (not an error)")
        if n := sum(1 for c in quiet if c.verdict == "not-selected"):
            notes.append(f"{n} cell(s) not selected by a narrowed run (-k, --devices, ...)")
        return ("Something needs a person: " + ", ".join(bad) + ".") if bad else "", "; ".join(n for n in notes if n)

    def summary(self) -> tuple[str, str]:
        """(tone, sentence): the first thing both pages and the report command's closing line say, from
        headline(): bad (something fails the exit status), news (nothing does, but there is work to do that
        is no error, a draft to file, or items newly fail as known bugs), good."""
        bad, note = self.headline()
        text = bad or ("Nothing needs a person: every item that fails is a declared known failure, no issue draft "
                       "waits to be filed, and every case that could run here ran.")
        tone = "bad" if self.exit_code() else ("news" if bad or self.attention()["known_regressions"] else "good")
        return tone, text + (f" Also: {note}." if note else "")

    @property
    def cut_short(self) -> list[RunInfo]:
        return [r for r in self.runs if r.manifest.finished is None]

    @property
    def failures(self) -> list[Sourced]:
        return [s for s in self.records if s.record.status in FAILING]

    @property
    def xpasses(self) -> list[Sourced]:
        return [s for s in self.records if s.record.status == "xpass"]

    @property
    def divergent(self) -> list[Sourced]:
        """Passing items whose internals probe diverges and no reviewed divergence declares it: the
        reference and the build disagree where the contract holds, so one of them needs a person."""
        return self.cached("divergent", lambda: [s for s in self.records if undeclared(s.record)])

    @property
    def recompiled(self) -> list[Sourced]:
        """Items that compiled graphs after their first call where the case sets no expect.compiles:
        not a verdict, never silent (the case owner decides whether the count is part of the contract)."""
        return [s for s in self.records if s.record.recompiles]

    @property
    def compiled_nothing(self) -> list[Sourced]:
        """Items that ran but whose torch.compile backend compiled no graph (dynamo ran the program
        eagerly): their verdict says nothing about the compiled path."""
        return [s for s in self.records if s.record.status in COMPARED and s.record.backend is not None
                and counts_graphs(s.record.backend)
                and s.record.compile_counts.get("cold_backend_calls", s.record.compile_counts.get("cold_graphs")) == 0]

    def causes(self) -> list[CauseDoc]:
        """The failing and known-failing items grouped by cause (conformance.report.causes), with the
        builds, cases and variants that show each; most items first."""

        groups: dict[str, _CauseGroup] = {}
        for s in self.records:
            if s.record.status not in NOT_PASSING:
                continue
            counted: set[str] = set()  # an item counts once per cause, however many of its mismatches show it
            for cause, m in causes_of(s.record):
                g = groups.setdefault(cause.key(), _CauseGroup(cause_words(cause)))
                known = s.record.known_of(m) if m is not None else s.record.known_failure
                g.links.update([known.link] if known is not None else ())
                g.kinds.add(known.kind if known is not None else "untriaged")
                if cause.key() in counted:
                    continue
                counted.add(cause.key())
                g.items += 1
                g.builds.setdefault(s.build, {}).setdefault(s.record.status, 0)
                g.builds[s.build][s.record.status] += 1
                g.cases.add(s.record.case_id)
        return sorted((CauseDoc(key=key, words=g.words, items=g.items, builds=g.builds, cases=sorted(g.cases),
                                links=sorted(g.links), kinds=[k for k in (*KNOWN_KINDS, "untriaged") if k in g.kinds])
                       for key, g in groups.items()),
                      key=lambda g: (-g.items, g.key))

    def verdicts(self) -> list[VerdictDoc]:
        """One line per build and device where an item ran, newest build first (where every item skipped, no
        line: headline() says why): the items that ran, how many pass, the known failures by kind and the
        causes they come from (with their links), what changed since the release before that ran the device
        (items that count against the build now and did not there, and the reverse: Note [A difference is
        not a failure]), and what no expectation covers (fail, error, xpass)."""
        order = in_release_order(self.builds)
        out = []
        ran_on = {(s.build, s.record.device or NO_DEVICE) for s in self.records if s.record.status != "skip"}
        for b in reversed(order):
            for device in self.devices(b.id):
                if (b.id, device) not in ran_on:
                    continue  # every item skipped: no verdict (headline() says why)
                ran = {(s.record.case_id, s.record.variant): s for s in self.records
                       if s.build == b.id and (s.record.device or NO_DEVICE) == device and s.record.status != "skip"}
                earlier = [p for p in order[: order.index(b)] if (p.id, device) in ran_on]
                known = [s for s in ran.values() if s.record.status == "xfail"]
                causes = {key for s in known for key, _ in known_causes(s)}
                by_kind: dict[str, KindCountDoc] = {}
                for kind in KNOWN_KINDS:
                    # an item counts under its worst kind; a cause under the kind of the entry covering it
                    of_kind = [s for s in known if known_kind(s.record) == kind]
                    kind_causes = {key for s in known for key, k in known_causes(s) if k == kind}
                    if of_kind or kind_causes:
                        by_kind[kind] = KindCountDoc(items=len(of_kind), causes=len(kind_causes))
                links = sorted({link for s in known for link in known_links(s.record)})
                out.append(VerdictDoc(
                    build=b.id, label=b.label, device=device, items=len(ran),
                    passed=sum(1 for s in ran.values() if s.record.status == "pass"),
                    known=len(known), known_causes=len(causes), known_by_kind=by_kind, links=links,
                    untriaged=sum(1 for s in ran.values() if s.record.status in FAILING),
                    previous=earlier[-1].label if earlier else None,
                    # the same items as the history's regressions and the matrix's NEWLY FAILING
                    new=sum(1 for s in ran.values() if self.key(s) in self.newly_failing),
                    fixed=sum(1 for s in ran.values() if self.key(s) in self.newly_fixed),
                ))
        return out

    def build(self, build_id_: str) -> Build:
        return next(b for b in self.builds if b.id == build_id_)

    def mechanisms(self, build: str) -> MechanismsDoc:
        """What the build was seen to generate: artifact names with the records that saw them,
        and per behaviour the internals-probe verdicts."""
        seen: Counter[str] = Counter()
        probes: dict[str, Counter[str]] = {b: Counter() for b in IDS}
        for s in self.records:
            if s.build != build:
                continue
            seen.update(set(s.record.probes.seen))
            for res in s.record.probes.results:
                probes.setdefault(res.behavior, Counter())[res.status] += 1
        return MechanismsDoc(
            seen=dict(sorted(seen.items())),
            probes={b: {st: c[st] for st in PROBE_STATUSES} for b, c in sorted(probes.items())},
            generated=sorted(b for b, c in probes.items() if c["conforms"] or c["diverges"] or c["unknown-form"]),
        )

    def cause_text(self, key: str, code: Callable[[str], str]) -> str:
        """A cause's words (causes()) with its exception through `code`."""
        objects = self.cached("cause_objects", lambda: {
            c.key(): c for s in self.records if s.record.status in NOT_PASSING
            for c, _ in causes_of(s.record)})
        return cause_words(objects[key], code)

    def exit_code(self) -> int:
        """1 when something needs a person that is an error (ATTENTION's `fails`): a fail, error or xpass, a
        passing item whose internals probe diverges undeclared, a cell where no case ran for no stated
        reason, or a run that was cut short; a draft to file is not."""
        parts = self.needs()
        return 1 if any(parts[k] for k, need in ATTENTION.items() if need.fails) else 0

    def key(self, s: Sourced) -> tuple[str, str, str]:
        return (s.build, s.record.case_id, s.record.variant)


@dataclass
class _CauseGroup:
    """One cause's items while Report.causes counts them."""

    words: str
    items: int = 0
    builds: dict[str, dict[Status, int]] = field(default_factory=dict)
    cases: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)


def behavior_of(record: ResultRecord) -> str:
    if record.behavior:
        return record.behavior
    head = record.case_id.split("/", 1)[0]
    return head if head in IDS else "(unknown)"
