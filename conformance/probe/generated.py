"""Check a case's assertions on what the build generated (conformance/schema/generated.py).

Note [Generated assertions: holds, fails, not observable]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An assertion is told from the cold pass's capture (conformance/probe/capture.py) alone:

* ``not observable`` where the pass captured nothing of the artifact's family: no generated function
  at all (a build without the codegen, a backend that runs no AOTAutograd, the probe switched off), or
  no traced graph at all for a graph. Such a build cannot be asked, and it is never a pass.
* otherwise ``holds`` or ``fails``: an artifact upstream expects and the build did not emit fails, as
  upstream's test would on that build.

A traced graph is compared as statements (:func:`graph_statements`): the build logs a graph's readable
form (type annotations, a comment per value, one argument per line), upstream writes either ``gm.code``
or that readable form; both are reduced to statements in the form upstream wrote, and a difference is
shown as a diff of them. What upstream's text carries counts (:class:`GraphForm`): where it annotates
values, the annotations are compared (a tensor's strides and device, which the build's log adds and
``print_readable``'s default leaves out, aside); where it carries a comment after a value (the AOT
descriptors of ``expanded_def``), those comments are compared, in order. Comments on lines of their own
(``# File: ...``, which upstream's ``normalize_gm`` removes) never count.
"""

from __future__ import annotations

import difflib
import io
import re
import textwrap
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

from conformance.probe.capture import CaptureResult
from conformance.results import GeneratedRecord, GeneratedStatus
from conformance.schema.generated import (
    NODE_META_ARTIFACTS,
    TRACED_ARTIFACTS,
    GeneratedAssertion,
    is_graph,
)

__all__ = ["GraphForm", "graph_form", "graph_statements", "judge"]

_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
_MODULE_HEADER = re.compile(r"^class .+ \( torch \. nn \. Module \) :$")
_DELETION = re.compile(r"^\w+( = \w+)* = None$")


# a tensor's annotation as the build logs it, "f32[s47, s16][s16, 1]cpu": its strides and device go
_TENSOR_ANNOTATION = re.compile(r'^"(?P<kept>[a-z0-9]+\[[^\]]*\])(?:\[[^\]]*\])?[a-z]*(?::\d+)?"$')


@dataclass(frozen=True)
class GraphForm:
    """What of a graph's readable form counts: what the expected text itself carries (see the Note above)."""

    annotations: bool = False
    comments: bool = False


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(textwrap.dedent(text).strip() + "\n").readline))


def _trailing(tok: tokenize.TokenInfo) -> bool:
    return tok.type == tokenize.COMMENT and bool(tok.line[:tok.start[1]].strip())


def _logical_lines(tokens: list[tokenize.TokenInfo]) -> list[list[tokenize.TokenInfo]]:
    lines: list[list[tokenize.TokenInfo]] = [[]]
    for tok in tokens:
        if tok.type == tokenize.NEWLINE:
            lines.append([])
        elif tok.type not in _SKIP:
            lines[-1].append(tok)
    return [line for line in lines if line]


def _is_annotation(line: list[tokenize.TokenInfo], k: int) -> bool:
    """`name: "type"` followed by =, a comma or a parenthesis."""
    return (line[k].string == ":" and k > 0 and line[k - 1].type == tokenize.NAME and k + 2 < len(line)
            and line[k + 1].type == tokenize.STRING and line[k + 2].string in ("=", ",", ")"))


def _unannotated(line: list[tokenize.TokenInfo], keep: bool) -> list[str]:
    """The line's tokens; its annotations dropped, or (``keep``) kept with a tensor's strides and device cut."""
    out: list[str] = []
    k = 0
    while k < len(line):
        if _is_annotation(line, k):
            if keep:
                said = line[k + 1].string
                out += [":", (m["kept"].join('""') if (m := _TENSOR_ANNOTATION.match(said)) else said)]
            k += 2
            continue
        out.append(line[k].string)
        k += 1
    return out


def _statements(tokens: list[str]) -> list[str]:
    """Split at top-level `;`; drop the `x = None` deletions FX appends; a def's trailing comma goes, and the
    outputs are one tuple however written ([a, b], (a, b,) and (a, b) alike)."""
    parts: list[list[str]] = [[]]
    depth = 0
    for t in tokens:
        depth += t in "([{" and len(t) == 1
        depth -= t in ")]}" and len(t) == 1
        if t == ";" and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    said = []
    for raw in parts:
        part = raw
        if part and part[0] == "def" and len(part) > 3 and part[-3:] == [",", ")", ":"]:
            part = [*part[:-3], ")", ":"]
        if part and part[0] == "return" and len(part) > 2 and part[1] in "([" and part[-1] in ")]":
            inner = part[2:-1]
            if inner[-1:] == [","] and "," in inner[:-1]:
                inner = inner[:-1]  # (a, b,) is (a, b); (a,) keeps its comma
            part = ["return", "(", *inner, *([","] if inner and "," not in inner else []), ")"]
        text = " ".join(part)
        if text and not _DELETION.match(text) and not _MODULE_HEADER.match(text):
            said.append(text)
    return said


def graph_form(text: str) -> GraphForm:
    """What a graph's text carries: annotations, comments after values (see the Note above)."""
    try:
        tokens = _tokens(text)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return GraphForm()
    return GraphForm(annotations=any(_is_annotation(line, k) for line in _logical_lines(tokens)
                                     for k in range(len(line))),
                     comments=any(_trailing(t) for t in tokens))


def graph_statements(text: str, form: GraphForm = GraphForm()) -> list[str]:
    """A graph's code as statements, one string each, tokens separated by one space: the same for the
    readable form a build logs and the `gm.code` upstream writes inline (see the Note above); with ``form``,
    its annotations and then the comments after its values (one line each, after the statements) too."""
    try:
        tokens = _tokens(text)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    said = [s for line in _logical_lines(tokens) for s in _statements(_unannotated(line, form.annotations))]
    return said + ([t.string for t in tokens if _trailing(t)] if form.comments else [])


def _problems(a: GeneratedAssertion, source: str) -> list[str]:
    out = [f"lacks {s!r}" for s in a.contains if s not in source]
    out += [f"holds {s!r}, which upstream asserts is absent" for s in a.lacks if s in source]
    out += [f"no match for /{p}/" for p in a.matches if not re.search(p, source, re.MULTILINE)]
    out += [f"/{p}/ matches {m[0]!r}, which upstream asserts nothing does" for p in a.no_match
            if (m := re.search(p, source, re.MULTILINE))]
    lines = source.splitlines()
    if a.fewer_lines_than is not None and len(lines) >= a.fewer_lines_than:
        out.append(f"{len(lines)} line(s), upstream asserts fewer than {a.fewer_lines_than}")
    for p, n in a.line_counts.items():
        if (seen := sum(1 for line in lines if re.search(p, line))) != n:
            out.append(f"{seen} line(s) match /{p}/, upstream asserts {n}")
    if a.graph is not None:
        form = graph_form(a.graph)
        want, got = graph_statements(a.graph, form), graph_statements(source, form)
        if want != got:
            diff = difflib.unified_diff(want, got, "upstream's graph", "the build's graph", lineterm="", n=1)
            out.append("the graph differs:\n" + "\n".join(list(diff)[2:40]))
    return out


# What a pass logs in kinds it may log apart: a pass that logged one kind cannot tell of another (the eager
# backend logs dynamo's graph and guards, no AOTAutograd graph; an entry without dynamo, no dynamo graph).
_FAMILIES = {"dynamo_cpp_guards_str": "dynamo guard text", "shape_env_guards": "shape-env guard text",
             "recompile_reasons": "recompile reason", "aot_forward_graph_fw_metadata": "AOTAutograd compile metadata",
             "aot_forward_graph_fw_subclass_metadata": "AOTAutograd subclass metadata",
             "aotautograd_guards": "AOTAutograd guards of a compile context",
             "dynamo_shape_env_guards": "shape-env guards of a compile context",
             "aot_export_graph_str": "exported graph's str", "aot_export_signature": "export signature",
             "dynamo_output_graph": "dynamo graph",
             **dict(zip(NODE_META_ARTIFACTS, ("node of an entry's forward graph", "node of dynamo's graphs"),
                        strict=True))}


def _family(artifact: str) -> str:
    return _FAMILIES.get(artifact, "traced graph")


def _one(index: int, a: GeneratedAssertion, capture: CaptureResult) -> GeneratedRecord:
    graph = a.artifact in TRACED_ARTIFACTS or is_graph(a.artifact)
    pool = capture.graphs if graph else capture.artifacts
    family = _family(a.artifact) if graph else "generated function"
    if graph:
        pool = [x for x in pool if _family(x.name) == family]

    def said(status: GeneratedStatus, detail: str) -> GeneratedRecord:
        return GeneratedRecord(index=index, artifact=a.artifact, status=status, detail=detail)

    if not pool:
        return said("not observable", f"the pass logged no {family} at all, so it cannot tell")
    sources = [x.source for x in pool if x.name == a.artifact]
    emitted = list(dict.fromkeys(x.name for x in pool))
    if not a.emitted:
        return said("fails", f"emitted {len(sources)} time(s); upstream asserts it is not") if sources else \
            said("holds", f"not emitted (emitted: {', '.join(emitted)})")
    if not sources:
        return said("fails", f"not emitted; the pass emitted: {', '.join(emitted)}")
    if a.count is not None and len(sources) != a.count:
        return said("fails", f"emitted {len(sources)} time(s), upstream asserts {a.count}")
    chosen = {"first": sources[:1], "last": sources[-1:], "all": ["\n".join(sources)]}.get(a.instance, sources)
    problems = [(k, _problems(a, s)) for k, s in enumerate(chosen)]
    bad = [(k, p) for k, p in problems if p]
    ok = not bad if a.instance != "any" else len(bad) < len(problems)
    if ok:
        return said("holds", f"{len(sources)} instance(s) emitted")
    shown = "; ".join(f"instance {k + 1} of {len(chosen)}: {', '.join(p)}" for k, p in bad[:3])
    return said("fails", shown[:3900])


def judge(assertions: Sequence[GeneratedAssertion], capture: CaptureResult | None, backend: str, mode: str,
          device: str = "cpu", *, why_none: str = "nothing was captured (the internals probe is off)"
          ) -> tuple[GeneratedRecord, ...]:
    """The status (holds, fails, not observable) of each assertion that applies to a variant with this backend
    (label), mode and device, on the cold pass's capture (``None``: nothing captured, ``why_none``)."""
    if capture is None:
        return tuple(GeneratedRecord(index=i, artifact=a.artifact, status="not observable", detail=why_none)
                     for i, a in enumerate(assertions) if a.applies(backend, mode, device))
    return tuple(_one(i, a, capture) for i, a in enumerate(assertions) if a.applies(backend, mode, device))
