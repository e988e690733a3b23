"""A known failure: where it applies, which mismatches it covers (by their cause), what it is, and how
upstream was searched; and the checks across a case's entries (each mismatch covered by exactly one)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version
from pydantic import Field, ValidationInfo, field_validator

from conformance.behaviors import BEHAVIORS
from conformance.core.cause import ENTRIES, PLACES, Place, directions
from conformance.core.checks import CHECKS, C
from conformance.schema.common import Mode, Strict, check_regex

Loc = tuple[str | int, ...]


class BuildCondition(Strict):
    """Where a known failure applies; every given condition must match (absent = any)."""

    torch: str | None = Field(None, description="PEP 440 specifier on the torch version, e.g. '<2.12'.")
    device: tuple[str, ...] | None = Field(None, description="Device types, e.g. [cuda].")
    backend: tuple[str, ...] | None = Field(None, description="Variant backends, e.g. [inductor].")
    mode: tuple[Mode, ...] | None = None

    @field_validator("torch")
    @classmethod
    def _spec(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                SpecifierSet(value)
            except InvalidSpecifier:
                raise ValueError(
                    f"{value!r} is not a version specifier; write e.g. '>=2.12,<2.14'"
                ) from None
        return value

    @field_validator("device", "backend", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("mode", mode="before")
    @classmethod
    def _listify_mode(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


# What a known failure is, as its audit found it: a bug of the compiled path; a bug of eager's (the
# compiled behaviour is the right one); a difference the contract allows (documented, or with no
# observable effect); a difference upstream made on purpose.
KnownFailureKind = Literal["bug", "eager_bug", "benign", "by_design"]


class Covers(Strict):
    """One kind of mismatch a known failure covers, by its cause (conformance/core/cause.py): the check,
    and optionally the kind of place, the direction, the tensor, the entry point and the innermost
    exception. A given field must equal the mismatch's; an absent one matches anything."""

    check: str = Field(description="The check's id (conformance/core/checks.py CHECKS), e.g. '.grad', 'values'.")
    place: Place | None = Field(None, description="The kind of place: " + ", ".join(PLACES) + ".")
    direction: str | None = Field(None, description="Which way compiled differs, as the cause says it (e.g. "
                                  "'compiled has a tensor, eager None'); the check's directions are listed in "
                                  "conformance/core/cause.py.")
    subject: str | None = Field(None, description="The tensor the check read, as the mismatch names it: an input "
                                "(x, net.fc1.weight), an output (out[0]) or a leaf whose gradient it is (la).")
    entry: Literal[ENTRIES] | None = Field(None, description="torch.compile or aot_function.")  # type: ignore[valid-type]  # a Literal of the tuple's values
    exception: str | None = Field(None, description="For an exception: the innermost exception's type name "
                                  "(RuntimeError, AssertionError).")
    message: str | None = Field(None, description="For an exception: a regular expression the innermost "
                                "exception's message (as the build wrote it) must match.")

    @field_validator("check")
    @classmethod
    def _known_check(cls, value: str) -> str:
        if value not in CHECKS:
            raise ValueError(f"{value!r} is no check; write one of: {', '.join(sorted(CHECKS))}")
        return value

    @field_validator("direction")
    @classmethod
    def _known_direction(cls, value: str | None, info: ValidationInfo) -> str | None:
        check = info.data.get("check")
        if value is not None and check is not None and value not in directions(check):
            raise ValueError(f"{value!r} is no direction of check {check!r}; write one of: "
                             + "; ".join(repr(d) for d in directions(check)))
        return value

    @field_validator("message")
    @classmethod
    def _message_regex(cls, value: str | None) -> str | None:
        return check_regex(value)

    @field_validator("exception", "message")
    @classmethod
    def _exception_only(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("check") not in (None, C.EXCEPTION.id):
            raise ValueError(f"only a mismatch of check 'exception' has an exception; drop {info.field_name}")
        return value


class Searched(Strict):
    """How upstream was searched for an issue that describes a known failure, where none links it: the
    queries, the nearest issue found, and why it is not this one."""

    queries: tuple[Annotated[str, Field(min_length=3)], ...] = Field(min_length=1, description="What was searched.")
    nearest: str = Field(description="The nearest upstream issue or PR found (https://...).")
    why_not: str = Field(min_length=1, description="One line: why the nearest is not this behaviour.")

    @field_validator("nearest")
    @classmethod
    def _https(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("nearest must be an https:// URL")
        return value

    @field_validator("why_not")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("must be one line")
        return value.strip()


class Reviewed(Strict):
    """What every reviewed entry (a known failure, a divergence) holds to: a one-line reason and
    evidence, an https link upstream."""

    @field_validator("reason", "evidence", check_fields=False)
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("must be one line")
        return value.strip()

    @field_validator("link", check_fields=False)
    @classmethod
    def _https(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("link must be an https:// URL to the upstream issue or PR")
        return value


class KnownFailure(Reviewed):
    """A reviewed, linked expectation that this case fails on matching builds, and which mismatches it
    covers. An item is a known failure only where every one of its mismatches is covered by exactly one
    entry whose conditions match the build; any other mismatch fails the item."""

    when: BuildCondition = Field(default_factory=BuildCondition)
    reason: str = Field(min_length=1, description="One line: what is broken.")
    link: str = Field(description="The upstream issue or PR that describes this behaviour (https://...); where none "
                      "exists, the nearest change, and the reason says 'no upstream issue found'.")
    kind: KnownFailureKind = Field(
        description="bug: the compiled path is wrong; eager_bug: eager is wrong and compiled right; benign: a "
        "difference the contract allows (documented, or without observable effect); by_design: upstream chose it.")
    evidence: str = Field(min_length=1, description="One line: what the audit measured, on which build.")
    covers: tuple[Covers, ...] = Field(
        min_length=1, description="The mismatches this entry covers, by cause: each a check with optional place, "
        "direction, subject, entry and exception.")
    mismatch: str | None = Field(
        None,
        description="A further narrowing: a regular expression a covered mismatch's message must also match.",
    )
    searched: Searched | None = Field(
        None, description="Where `link` is no upstream issue that describes this behaviour: how upstream was "
        "searched (queries), the nearest issue, and why it is not this one.")

    @field_validator("mismatch")
    @classmethod
    def _mismatch_regex(cls, value: str | None) -> str | None:
        return check_regex(value)


# releases a `torch:` range is tried on to tell whether two ranges share one
_RELEASES = tuple(Version(f"{major}.{minor}.{patch}")
                  for major in (1, 2, 3) for minor in range(40) for patch in range(4))


def _conditions_meet(a: BuildCondition, b: BuildCondition) -> bool:
    """Whether some build matches both conditions (devices by their type, as a build is matched)."""
    if a.device is not None and b.device is not None and not (
            {d.split(":")[0] for d in a.device} & {d.split(":")[0] for d in b.device}):
        return False
    for x, y in ((a.backend, b.backend), (a.mode, b.mode)):
        if x is not None and y is not None and not set(x) & set(y):
            return False
    if a.torch is None or b.torch is None:
        return True
    sa, sb = SpecifierSet(a.torch), SpecifierSet(b.torch)
    # the releases named in either range are tried too (==2.5.7 meets >=2.5)
    named = {Version(spec.version.rstrip(".*")) for spec in (*sa, *sb) if "*" not in spec.version.rstrip(".*")}
    return any(sa.contains(v, prereleases=True) and sb.contains(v, prereleases=True) for v in (*_RELEASES, *named))


def _covers_meet(a: Covers, b: Covers) -> bool:
    """Whether one mismatch can match both: the same check, and no part both give differently (two
    message patterns are taken to differ)."""
    return a.check == b.check and all(
        x is None or y is None or x == y for x, y in ((a.place, b.place), (a.direction, b.direction),
                                                     (a.subject, b.subject), (a.entry, b.entry),
                                                     (a.exception, b.exception), (a.message, b.message)))


def unlinked(k: KnownFailure) -> bool:
    """A known failure that says no upstream issue describes it, or a bug (compiled's or eager's) whose link
    is no issue: the corpus records how upstream was searched for one."""
    said = "no upstream issue" in f"{k.reason} {k.evidence}".lower()
    return said or (k.kind in ("bug", "eager_bug") and "/issues/" not in k.link)


def overlapping_known_failures(known: tuple[KnownFailure, ...]) -> list[tuple[Loc, str]]:
    """Pairs of entries that may cover one mismatch on one build: each mismatch is covered by exactly one
    entry, so a case must keep its entries' conditions or covers apart (two narrowing patterns that both
    differ are taken to keep them apart)."""
    found: list[tuple[Loc, str]] = []
    for j, later in enumerate(known):
        for i, earlier in enumerate(known[:j]):
            apart_by_pattern = earlier.mismatch is not None and later.mismatch is not None and (
                earlier.mismatch != later.mismatch)
            if apart_by_pattern or not _conditions_meet(earlier.when, later.when):
                continue
            shared = next(((c, d) for c in earlier.covers for d in later.covers if _covers_meet(c, d)), None)
            if shared is not None:
                found.append((("known_failures", j), f"may cover the same mismatches as known_failures[{i}] "
                              f"(both cover check {shared[1].check!r} on builds both conditions match); make their "
                              "`when` or `covers` disjoint: each mismatch is covered by exactly one entry"))
    return found


class Divergence(Reviewed):
    """A reviewed difference between the build's generated code and the reference, where the contract
    holds: the build differs from the upstream change's behaviour in a way a user cannot see, or follows a
    later upstream change the reference does not model on this build. An internals-probe divergence no
    entry declares, on an item whose contract passes, is untriaged: it needs a person."""

    when: BuildCondition = Field(default_factory=BuildCondition)
    probe: str = Field(description="The behaviour whose internals probe diverges, e.g. runtime_wrapper.")
    diff: str | None = Field(None, description="A further narrowing: a regular expression the probe's diff must "
                             "match.")
    reason: str = Field(min_length=1, description="One line: how the build differs, and why a user cannot see it.")
    link: str = Field(description="The upstream issue or PR behind the difference (https://...).")
    kind: KnownFailureKind = Field(
        description="benign: no observable effect; by_design: upstream chose it (a later change); bug: a "
        "defect the contract does not see.")
    evidence: str = Field(min_length=1, description="One line: what was read in the build's generated code, on which "
                          "build.")

    @field_validator("probe")
    @classmethod
    def _probe(cls, value: str) -> str:
        ids = [b.id for b in BEHAVIORS]
        if value not in ids:
            raise ValueError(f"unknown behaviour {value!r}; one of: {', '.join(ids)}")
        return value

    @field_validator("diff")
    @classmethod
    def _diff_regex(cls, value: str | None) -> str | None:
        return check_regex(value)
