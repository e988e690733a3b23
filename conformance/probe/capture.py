"""Capture the wrapper sources a torch build generates while it compiles.

Note [Capture forms]
~~~~~~~~~~~~~~~~~~~~
Builds publish generated wrapper source in three ways, and a build may use several at once:

``trace``           a record on logger ``torch.__trace`` per function (2.12-2.14):
                    ``record.metadata["artifact"]["name"]`` names it, ``record.payload``
                    holds the source. torch only emits these while that logger has a
                    handler, and only at DEBUG.
``trace-combined``  one ``aot_autograd_runtime_wrappers`` artifact per compile (2.15+):
                    sections ``# <name>`` + source, separated by blank lines.
``module-logger``   ``log.debug("Generated %s:\\n%s", name, source)`` on
                    ``torch._functorch._aot_autograd.subclass_codegen`` (2.12-2.13) or
                    ``torch._functorch._aot_autograd.codegen`` (2.14+).

Traced graphs arrive on ``torch.__trace`` too, as records whose metadata key is the graph's kind
(``aot_forward_graph``, ...; :data:`conformance.schema.generated.GRAPH_ARTIFACTS`) and whose payload
is the graph's readable code; dynamo's guard tree arrives the same way (``TEXT_ARTIFACTS``). They are
kept apart (``CaptureResult.graphs``): what a case asserts
on them (conformance/probe/generated.py), never what the behaviours' probes compare.

:func:`capture_generated_sources` listens on all of them at once. One function seen through
two forms is one :class:`CapturedArtifact` (its ``forms`` lists both). Logger state (level,
``propagate``, handlers) is saved when the first capture attaches and restored exactly
when the last one detaches; captures may nest and run on several threads, and each only
keeps records emitted by the threads it watches. Nothing here imports torch internals: an
unknown packaging is recorded in ``unrecognised`` and reported with a warning, never raised.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.schema.generated import NAMED_TEXT_ARTIFACTS, TRACED_ARTIFACTS

__all__ = [
    "COMBINED_ARTIFACT",
    "MODULE_LOGGERS",
    "TRACE_LOGGER",
    "CaptureResult",
    "CaptureWarning",
    "CapturedArtifact",
    "capture_generated_sources",
    "capturing",
    "split_combined",
    "write_trace_log",
]

TRACE_LOGGER = "torch.__trace"
MODULE_LOGGERS = (
    "torch._functorch._aot_autograd.subclass_codegen",
    "torch._functorch._aot_autograd.codegen",
)
COMBINED_ARTIFACT = "aot_autograd_runtime_wrappers"
# graphs the harness traced itself (make_fx): conformance/core/entries.py logs them
HARNESS_LOGGER = "conformance.core.entries"
_TRACED = "Traced %s:\n%s"
_GENERATED = "Generated %s:\n%s"
_SECTION = re.compile(r"^# (?P<name>[A-Za-z_][\w.-]*)\s*$")
# Substrings of artifact names that look like wrapper codegen we do not know (yet).
_LOOKS_RELATED = ("wrapper", "mutation", "unwrap", "subclass", "epilogue", "prologue", "alias")


class CaptureWarning(UserWarning):
    """Capture saw something that looks like generated source in an unknown packaging."""


@dataclass(frozen=True)
class CapturedArtifact:
    """One generated function: its artifact name, source and the forms it arrived through."""

    name: str
    source: str
    forms: tuple[str, ...]
    thread: int

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "source": self.source, "forms": list(self.forms)}


@dataclass
class CaptureResult:
    """What one capture saw, in arrival order."""

    artifacts: list[CapturedArtifact] = field(default_factory=list)
    graphs: list[CapturedArtifact] = field(default_factory=list)
    unrecognised: list[str] = field(default_factory=list)
    other_trace_records: int = 0

    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.name for a in self.artifacts))

    def sources(self, name: str) -> list[str]:
        return [a.source for a in self.artifacts if a.name == name]

    def forms(self) -> tuple[str, ...]:
        return tuple(sorted({f for a in self.artifacts for f in a.forms}))

    def to_json(self) -> dict[str, object]:
        return {
            "artifacts": [a.to_json() for a in self.artifacts],
            "unrecognised": list(self.unrecognised),
            "forms": list(self.forms()),
        }


def split_combined(payload: str) -> list[tuple[str, str]]:
    """Split a combined artifact into ``(name, source)`` sections (see Note [Capture forms])."""
    sections: list[tuple[str, list[str]]] = []
    for line in payload.splitlines():
        match = _SECTION.match(line)
        if match:
            sections.append((match["name"], []))
        elif sections:
            sections[-1][1].append(line)
    return [(name, "\n".join(body).strip("\n")) for name, body in sections if "".join(body)]


class _Sink:
    """One active capture: merges records into artifacts (Note [Capture forms])."""

    def __init__(self, threads: frozenset[int] | None) -> None:
        self.threads = threads
        self.lock = threading.Lock()
        self.result = CaptureResult()
        self._forms: list[set[str]] = []

    def wants(self, record: logging.LogRecord) -> bool:
        return self.threads is None or record.thread in self.threads

    def add(self, name: str, source: str, form: str, thread: int) -> None:
        source = source.strip("\n")
        with self.lock:
            arts = self.result.artifacts
            for i in range(len(arts) - 1, -1, -1):
                a = arts[i]
                if (
                    a.name == name
                    and a.source == source
                    and a.thread == thread
                    and (form not in self._forms[i])
                ):
                    self._forms[i].add(form)
                    arts[i] = CapturedArtifact(name, source, tuple(sorted(self._forms[i])), thread)
                    return
            arts.append(CapturedArtifact(name, source, (form,), thread))
            self._forms.append({form})

    def graph(self, name: str, source: str, thread: int) -> None:
        with self.lock:
            self.result.graphs.append(CapturedArtifact(name, source.strip("\n"), ("trace-graph",), thread))

    def unknown(self, what: str) -> None:
        with self.lock:
            self.result.unrecognised.append(what)

    def other(self) -> None:
        with self.lock:
            self.result.other_trace_records += 1


class _Handler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.sinks: list[_Sink] = []

    def emit(self, record: logging.LogRecord) -> None:
        sinks = [s for s in list(self.sinks) if s.wants(record)]
        if not sinks:
            return
        try:
            parsed = _parse(record)
        except Exception as exc:  # a record we cannot read must not break a compile
            parsed = ("unknown", f"{record.name}: unreadable record ({type(exc).__name__})", [])
        kind, detail, items = parsed
        for sink in sinks:
            if kind == "unknown":
                sink.unknown(detail)
            elif kind == "other":
                sink.other()
            for name, source, form in items:
                if form == "trace-graph":
                    sink.graph(name, source, record.thread or 0)
                else:
                    sink.add(name, source, form, record.thread or 0)


def _parse(  # noqa: PLR0911  # one return per recognised record shape
    record: logging.LogRecord,
) -> tuple[str, str, list[tuple[str, str, str]]]:
    if record.name == TRACE_LOGGER:
        metadata = getattr(record, "metadata", None)
        payload = getattr(record, "payload", None)
        artifact = metadata.get("artifact") if isinstance(metadata, dict) else None
        graph = next((k for k in TRACED_ARTIFACTS if isinstance(metadata, dict) and k in metadata), None)
        if graph is not None and isinstance(payload, str):
            return "ok", "", [(graph, payload, "trace-graph")]
        if not isinstance(artifact, dict):
            return "other", "", []
        name = artifact.get("name")
        if not isinstance(name, str) or not isinstance(payload, str):
            return "unknown", f"artifact without a string name/payload: {artifact!r:.200}", []
        if name in NAMED_TEXT_ARTIFACTS:
            return "ok", "", [(name, payload, "trace-graph")]
        if name == COMBINED_ARTIFACT:
            sections = split_combined(payload)
            if not sections:
                return "unknown", f"{name}: no '# <name>' sections in {payload[:120]!r}", []
            return "ok", "", [(n, s, "trace-combined") for n, s in sections]
        if re.search(r"^\s*def \w+\(", payload, re.MULTILINE):
            return "ok", "", [(name, payload, "trace")]
        if any(word in name for word in _LOOKS_RELATED):
            return "unknown", f"artifact {name!r} is not Python source: {payload[:120]!r}", []
        return "other", "", []
    if record.name == HARNESS_LOGGER and record.msg == _TRACED and isinstance(record.args, tuple):
        return "ok", "", [(str(record.args[0]), str(record.args[1]), "trace-graph")]
    if record.msg == _GENERATED and isinstance(record.args, tuple) and len(record.args) == 2:
        name, source = record.args
        if isinstance(name, str) and isinstance(source, str):
            return "ok", "", [(name, source, "module-logger")]
    return "unknown", f"{record.name}: unexpected message {str(record.msg)[:120]!r}", []


@dataclass
class _LoggerState:
    level: int
    propagate: bool
    disabled: bool
    handlers: list[logging.Handler]


class _Attachment:
    """Process-wide: one handler on every capture logger while any capture is active."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.handler = _Handler()
        self.saved: dict[str, _LoggerState] = {}
        self.count = 0

    def attach(self, sink: _Sink) -> None:
        with self.lock:
            if self.count == 0:
                for name in (TRACE_LOGGER, *MODULE_LOGGERS, HARNESS_LOGGER):
                    logger = logging.getLogger(name)
                    self.saved[name] = _LoggerState(
                        logger.level, logger.propagate, logger.disabled, list(logger.handlers)
                    )
                    logger.setLevel(logging.DEBUG)
                    # Our DEBUG records must not reach torch's own stderr handlers.
                    logger.propagate = False
                    logger.disabled = False
                    # First in line: torch's lazy trace handler removes itself from the
                    # list while the logger iterates over it, which skips the next handler.
                    logger.handlers.insert(0, self.handler)
            self.count += 1
            self.handler.sinks = [*self.handler.sinks, sink]

    def detach(self, sink: _Sink) -> None:
        with self.lock:
            self.handler.sinks = [s for s in self.handler.sinks if s is not sink]
            self.count -= 1
            if self.count == 0:
                for name, state in self.saved.items():
                    logger = logging.getLogger(name)
                    # torch's lazy trace handler removes itself when it first sees a
                    # record and no trace directory is set: put back exactly what was there.
                    for handler in list(logger.handlers):
                        logger.removeHandler(handler)
                    for handler in state.handlers:
                        logger.addHandler(handler)
                    logger.setLevel(state.level)
                    logger.propagate = state.propagate
                    logger.disabled = state.disabled
                self.saved.clear()


_ATTACHMENT = _Attachment()


@contextlib.contextmanager
def capture_generated_sources(
    *, threads: Sequence[int] | None = (), warn: bool = True
) -> Iterator[CaptureResult]:
    """Capture generated wrapper sources for the duration of the ``with`` block.

    ``threads``: idents whose records to keep; the default ``()`` means the entering thread
    only, ``None`` means every thread. The yielded :class:`CaptureResult` fills while the
    block runs. On exit, if nothing known was captured but something unrecognised was seen,
    a :class:`CaptureWarning` shows it (``warn=False`` leaves that to the caller).
    """
    wanted = None if threads is None else frozenset(threads or (threading.get_ident(),))
    sink = _Sink(wanted)
    _ATTACHMENT.attach(sink)
    try:
        yield sink.result
    finally:
        _ATTACHMENT.detach(sink)
        if warn and sink.result.unrecognised and not sink.result.artifacts:
            seen = "; ".join(sink.result.unrecognised[:5])
            warnings.warn(
                f"no generated source in a known packaging was captured, but saw: {seen}",
                CaptureWarning,
                stacklevel=3,
            )


def arrived() -> int:
    """How many generated functions the outermost capture that keeps the calling thread's records
    holds so far (0 where none is active): where a later compile's sources start in it."""
    ident = threading.get_ident()
    sink = next((s for s in _ATTACHMENT.handler.sinks if s.threads is None or ident in s.threads), None)
    if sink is None:
        return 0
    with sink.lock:
        return len(sink.result.artifacts)


def capturing() -> bool:
    """Whether a capture that keeps the calling thread's records is active right now.

    Lets a compiler hook open a nested capture (one per compile) only when somebody is
    capturing anyway, so that nothing is attached, and nothing slowed, otherwise.
    """
    ident = threading.get_ident()
    return any(s.threads is None or ident in s.threads for s in _ATTACHMENT.handler.sinks)


def write_trace_log(result: CaptureResult, path: Path) -> Path:
    """Write the captured artifacts as a TORCH_TRACE-style log (one JSON line per artifact
    followed by its payload lines, tab-indented) that tlparse can open."""
    lines = []
    for art in result.artifacts:
        digest = hashlib.md5(art.source.encode("utf-8"), usedforsecurity=False).hexdigest()
        meta = {
            "artifact": {"name": art.name, "encoding": "string"},
            "frame_id": 0,
            "frame_compile_id": 0,
            "attempt": 0,
            "has_payload": digest,
        }
        lines.append(f"V0000 00:00:00.000000 0 capture.py:0] {json.dumps(meta)}")
        lines.extend(f"\t{line}" for line in art.source.splitlines())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
