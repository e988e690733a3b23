"""Load and validate case files: YAML (safe only) → `Case`, errors as `path:line: field: message`.

Note [Line numbers for schema errors]
PyYAML's safe_load drops positions, so we compose the node graph once (safe: composing builds
no Python objects), record the line of every mapping key and sequence item under its path,
then construct the plain data from the same nodes. A pydantic error's `loc` is that path, so
each error is reported at the line of the offending key; a missing field is reported at the
line of the mapping that lacks it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, cast, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from conformance.core.spec import CaseData
from conformance.data.corpus_files import CORPUS_SUFFIXES
from conformance.schema import Case
from conformance.schema.common import case_id_problem

CASE_SUFFIXES = CORPUS_SUFFIXES  # one declaration: corpus_files.py, which the package build loads by path
NOT_CASES = frozenset({"UPSTREAM.yaml"})  # data beside the cases, not a case: the upstream parity mapping


def is_case_file(path: Path) -> bool:
    return path.suffix in CASE_SUFFIXES and path.name not in NOT_CASES
Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class CaseError:
    """One problem in one case file, printable as `path:line: field: message`."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.message}"


class CaseLoadError(Exception):
    def __init__(self, errors: Sequence[CaseError]) -> None:
        self.errors = tuple(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


@dataclass(frozen=True)
class LoadedCase:
    case: Case
    id: str
    path: Path
    display_path: str
    sha256: str
    program_line: int = 1
    classes_line: int = 1
    lines: dict[Loc, int] = field(default_factory=dict, compare=False, repr=False)

    @functools.cached_property
    def data(self) -> CaseData:
        """The case as plain data, every default present: what conformance.core works on."""
        return cast(CaseData, self.case.model_dump(mode="json", by_alias=True))  # its dump has the keys CaseData names

    @property
    def program_filename(self) -> str:
        """The name the program's code objects carry (tracebacks, linecache, dynamo)."""
        return f"<program of {self.display_path}>"

    @property
    def program_source(self) -> str:
        """The program placed at its line in the case file, so that tracebacks point there."""
        return "\n" * (self.program_line - 1) + self.case.program

    @property
    def classes_filename(self) -> str:
        return f"<classes of {self.display_path}>"

    @property
    def classes_source(self) -> str | None:
        """The classes block placed at its line in the case file (like the program)."""
        if self.case.classes is None:
            return None
        return "\n" * (self.classes_line - 1) + self.case.classes

    def line_of(self, *loc: str | int) -> int:
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return 1


_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, where built: 6x faster


# Note [Hostile case files]: a case file is code (its program runs), but a *broken* one must
# still be an error at a line, never a crash or a machine-sized allocation. PyYAML's composer
# recurses per nesting level, aliases expand a few hundred bytes into gigabytes once something
# walks the tree (and an alias inside its own anchor, forever), a tag names a constructor, and
# a sexagesimal integer (1:2:3:...) costs quadratic time to build: so one pass over the event
# stream, before any node is built, bounds nesting and the expanded size (an alias counts its
# anchor's values and height at every use), and refuses recursive aliases, keys that are not
# plain values, tags other than JSON's types, and scalars that would not construct.
MAX_BYTES = 1 << 20
MAX_DEPTH = 40
MAX_NODES = 20_000
MAX_INT_CHARS = 100  # int64 needs 20 digits (64 in binary); longer ones cost bignum time to build

_CORE = "tag:yaml.org,2002:"
SCALAR_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null"))
# typed here: the stubs leave it untyped
_resolve: Callable[[type[yaml.Node], str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve
_SCALARS = yaml.constructor.SafeConstructor()


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag


@dataclass
class _Open:
    """A collection the event pass is inside: where it is, and what it expands to so far."""

    loc: Loc
    mapping: bool
    anchor: str | None
    values: int = 1
    height: int = 1
    items: int = 0
    key: str | None = None  # a mapping's key awaiting its value; None: the next node is a key


def _scalar_problem(event: yaml.ScalarEvent) -> str | None:
    """Why a scalar would not construct (or would take bignum time to), else None."""
    explicit = event.tag not in (None, "!")
    # what the composer does with an untagged value: resolve it from how it is written
    tag = str(event.tag) if explicit else _resolve(yaml.ScalarNode, event.value, event.implicit)
    if explicit and tag not in SCALAR_TAGS:
        return f"a YAML tag ({_tag_name(tag)}) is not allowed" + (
            " on a plain value" if tag in (_CORE + "seq", _CORE + "map") else "")
    if tag == _CORE + "int" and len(event.value) > MAX_INT_CHARS:
        return f"an integer of {len(event.value)} characters; a case's integers fit in 64 bits"
    construct = _SCALARS.yaml_constructors.get(tag)
    if tag != _CORE + "str" and construct is not None:
        try:
            construct(_SCALARS, yaml.ScalarNode(tag, event.value))
        except Exception:  # the constructors raise ValueError, KeyError, ...
            written = repr(event.value) if len(event.value) <= 60 else repr(event.value[:60]) + "..."
            return f"{written} is not a valid {_tag_name(tag)}" + ("" if explicit else "; quote it to make it a string")
    return None


class _EventCheck:
    """Note [Hostile case files]: every problem the event stream shows, each at its line and key;
    iterative (no recursion), and no alias is ever expanded."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.errors: list[CaseError] = []
        self.stack: list[_Open] = []
        self.closed: dict[str, tuple[int, int]] = {}  # anchor -> (values, height) of the node it names
        self.total = 0

    def run(self, text: str) -> None:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.CollectionEndEvent):
                self._close()
            elif isinstance(event, yaml.NodeEvent):
                self._node(event)
        if self.errors:
            raise CaseLoadError(self.errors)

    def _error(self, event: yaml.Event, loc: Loc, message: str, *, fatal: bool = False) -> None:
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        self.errors.append(CaseError(self.shown, line, field_name(loc), message))
        if fatal:
            raise CaseLoadError(self.errors)

    def _close(self) -> None:
        done = self.stack.pop()
        if done.anchor is not None:
            self.closed[done.anchor] = (done.values, done.height)
        self._add(done.values, done.height)

    def _add(self, values: int, height: int) -> None:
        if self.stack:
            self.stack[-1].values += values
            self.stack[-1].height = max(self.stack[-1].height, height + 1)

    def _place(self, event: yaml.NodeEvent) -> tuple[Loc, bool]:
        """The node's location, and whether it is a mapping's key."""
        parent = self.stack[-1] if self.stack else None
        scalar = event.value if isinstance(event, yaml.ScalarEvent) else None
        if parent is None:
            return (), False
        if not parent.mapping:
            parent.items += 1
            return (*parent.loc, parent.items - 1), False
        if parent.key is None:
            parent.key = scalar if scalar is not None else "?"
            return (*parent.loc, scalar) if scalar is not None else parent.loc, True
        loc, parent.key = (*parent.loc, parent.key), None
        return loc, False

    def _node(self, event: yaml.NodeEvent) -> None:
        loc, is_key = self._place(event)
        if isinstance(event, yaml.AliasEvent):
            anchor = event.anchor or ""
            if anchor not in self.closed and any(o.anchor == anchor for o in self.stack):
                self._error(event, loc, f"the alias *{anchor} is inside the node its anchor names (a recursive "
                            "alias)", fatal=True)
            values, height = self.closed.get(anchor, (1, 0))
            if is_key and height > 0:
                self._error(event, loc, f"a mapping key must be a plain value, not an alias (*{anchor}) of a list "
                            "or mapping")
        elif isinstance(event, yaml.ScalarEvent):
            values, height = 1, 0
            problem = _scalar_problem(event)
            if problem is not None:
                self._error(event, loc, problem)
        elif isinstance(event, yaml.CollectionStartEvent):
            values, height = 1, 1
            self._collection(event, loc, is_key)
        if len(self.stack) + height > MAX_DEPTH:
            self._error(event, loc, f"nested more than {MAX_DEPTH} levels deep (aliases expanded); a case needs a "
                        "few", fatal=True)
        self.total += values
        if self.total > MAX_NODES:
            self._error(event, loc, f"the document expands to more than {MAX_NODES} values (YAML anchors and "
                        "aliases?); a case needs a few hundred", fatal=True)
        if isinstance(event, yaml.CollectionStartEvent):
            self.closed.pop(event.anchor or "", None)  # an alias names the latest node of its anchor
            self.stack.append(_Open(loc, isinstance(event, yaml.MappingStartEvent), event.anchor))
            return
        if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
            self.closed[event.anchor] = (values, height)
        self._add(values, height)

    def _collection(self, event: yaml.CollectionStartEvent, loc: Loc, is_key: bool) -> None:
        kind = "mapping" if isinstance(event, yaml.MappingStartEvent) else "list"
        if event.tag not in (None, "!", _CORE + ("map" if kind == "mapping" else "seq")):
            self._error(event, loc, f"a YAML tag ({_tag_name(str(event.tag))}) is not allowed"
                        + (f" on a {kind}" if event.tag in SCALAR_TAGS else ""))
        if is_key:
            self._error(event, loc, f"a mapping key must be a plain value, not a {kind}")


def _walk(root: yaml.Node) -> tuple[dict[Loc, int], list[tuple[int, Loc, str]]]:
    """The line of every mapping key and sequence item under its path, and duplicate keys;
    iterative, and bounded by _EventCheck."""
    lines: dict[Loc, int] = {}
    errors: list[tuple[int, Loc, str]] = []
    stack: list[tuple[yaml.Node, Loc]] = [(root, ())]
    while stack:
        node, loc = stack.pop()
        lines.setdefault(loc, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
                if key in seen:
                    errors.append((key_node.start_mark.line + 1, (*loc, key), f"duplicate key {key!r}"))
                seen.add(key)
                at = (*loc, key)  # a name, not `lines[*loc, key]`: that subscript is Python 3.11 syntax
                lines[at] = key_node.start_mark.line + 1
                stack.append((value_node, at))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                at = (*loc, i)
                lines[at] = item.start_mark.line + 1
                stack.append((item, at))
    return lines, errors


def case_id_for(path: Path, root: Path | None) -> str:
    """The default id: the path under the cases root, without suffix, '/'-separated."""
    try:
        rel = path.resolve().relative_to(root.resolve()) if root is not None else Path(path.name)
    except ValueError:
        rel = Path(path.name)
    return rel.with_suffix("").as_posix().lower()


def field_name(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<case>"


def _unwrap(tp: Any) -> Any:
    """Optional[X] → X; Annotated[X, ...] → X."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, UnionType):
            members = [a for a in get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def _keys(model: type[BaseModel]) -> dict[str, Any]:
    """A model's keys as a case file writes them (aliases: `class`), with their annotations."""
    return {info.alias or name: info.annotation for name, info in model.model_fields.items()}


def _model_at(loc: Loc, root: type[BaseModel] = Case) -> type[BaseModel] | None:
    """The model class that owns the mapping at `loc` (for listing its valid keys)."""
    node: Any = root
    for part in loc:
        node = _unwrap(node)
        if isinstance(node, type) and issubclass(node, BaseModel):
            keys = _keys(node)
            allow = node.model_config.get("extra") == "allow"
            extra = node.__annotations__.get("__pydantic_extra__") if allow else None
            node = keys[str(part)] if str(part) in keys else (get_args(extra)[1] if extra is not None else None)
        elif get_origin(node) is dict:
            node = get_args(node)[1]
        elif get_origin(node) in (tuple, list):
            node = get_args(node)[0]
        else:
            return None
    node = _unwrap(node)
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def _message(err: Any, root: type[BaseModel] = Case) -> str:
    kind = err["type"]
    loc: Loc = tuple(err["loc"])
    if kind == "extra_forbidden":
        owner = _model_at(loc[:-1], root)
        valid = ", ".join(_keys(owner)) if owner is not None else "?"
        return f"unknown key {loc[-1]!r}; valid keys: {valid}"
    if kind == "missing":
        return "required key is missing"
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if kind not in ("value_error", "assertion_error") and "input" in err:
        got = err["input"]
        if not isinstance(got, dict | list):
            msg += f" (got {got!r}, a {type(got).__name__})"
    return msg


def _strip_union_noise(loc: Loc) -> Loc:
    # pydantic puts the union member's type name in loc, e.g. ('scalar', 'value', 'float')
    return tuple(p for p in loc if not (isinstance(p, str) and p in {"float", "int", "bool", "str"}))


M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class _Document:
    node: yaml.MappingNode
    data: Any
    lines: dict[Loc, int]
    sha256: str


def _compose(path: Path, shown: str, what: str) -> _Document:
    """Read, parse (safely) and map every key to its line; raise CaseLoadError."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise CaseLoadError([CaseError(shown, 1, "<file>", f"{path.stat().st_size} bytes; {what} is at most "
                                           f"{MAX_BYTES} bytes")])
        raw = path.read_bytes()
    except OSError as exc:
        raise CaseLoadError([CaseError(shown, 1, "<file>", f"cannot read: {exc.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CaseLoadError([CaseError(shown, line, "<file>", f"not UTF-8: {exc.reason} at byte {exc.start}; save "
                                       "the file as UTF-8")]) from None
    try:
        _EventCheck(shown).run(text)
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        raise CaseLoadError([_yaml_error(exc, shown)]) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow, e.g. a control character
        line = text[: exc.position].count("\n") + 1
        char = f"#x{exc.character:04x}" if isinstance(exc.character, int) else repr(exc.character)
        raise CaseLoadError([CaseError(shown, line, "<yaml>", f"invalid YAML: character {char} is not allowed "
                                       f"({exc.reason}); remove it or write it as an escape in a quoted string")]
                            ) from None
    except yaml.YAMLError as exc:
        raise CaseLoadError([CaseError(shown, 1, "<yaml>", f"invalid YAML: {exc}")]) from None
    if node is None:
        raise CaseLoadError([CaseError(shown, 1, "<case>", f"the file is empty; {what} is a mapping")])
    if not isinstance(node, yaml.MappingNode):
        raise CaseLoadError([CaseError(shown, node.start_mark.line + 1, "<case>", f"{what} must be a mapping")])
    lines, dupes = _walk(node)
    if dupes:
        raise CaseLoadError([CaseError(shown, ln, field_name(loc), msg) for ln, loc, msg in dupes])
    try:
        data = _Loader(text).get_single_data()
    except yaml.MarkedYAMLError as exc:  # e.g. a merge key (<<) given a scalar
        raise CaseLoadError([_yaml_error(exc, shown)]) from None
    except yaml.YAMLError as exc:
        raise CaseLoadError([CaseError(shown, 1, "<yaml>", f"invalid YAML: {str(exc).splitlines()[0]}")]) from None
    return _Document(node, data, lines, hashlib.sha256(raw).hexdigest())


def _yaml_error(exc: yaml.MarkedYAMLError, shown: str) -> CaseError:
    mark = exc.problem_mark or exc.context_mark
    problem = " ".join(p for p in (exc.context, exc.problem) if p)
    return CaseError(shown, mark.line + 1 if mark is not None else 1, "<yaml>", f"invalid YAML: {problem}")


def _validate(model: type[M], doc: _Document, shown: str) -> M:
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        errors: dict[Loc, CaseError] = {}
        for err in exc.errors():
            loc = _strip_union_noise(tuple(err["loc"]))
            # a key that YAML builds to a number (`1: 2`) is in the line map as its text
            line = doc.lines.get(loc) or doc.lines.get((*loc[:-1], str(loc[-1])) if loc else ()) or _nearest(
                doc.lines, loc)
            message = _message(err, model)
            line, message = _source_line(doc.node, loc, line, message)
            # a union reports once per member; the first member's message is the useful one
            errors.setdefault(loc, CaseError(shown, line, field_name(loc), message))
        raise CaseLoadError(sorted(errors.values(), key=lambda e: (e.line, e.field))) from None


def _problems(case: Case, doc: _Document, shown: str) -> list[CaseError]:
    """The case's cross-field problems (Case.problems), each at the line of its key."""
    return [CaseError(shown, doc.lines.get(loc) or _nearest(doc.lines, loc), field_name(loc), message)
            for loc, message in case.problems()]


Check = Callable[["LoadedCase"], list[CaseError]]


def load_case(path: Path, root: Path | None = None, display: str | None = None, check: Check | None = None
              ) -> LoadedCase:
    """Load one case file; raise CaseLoadError listing every problem with its line. `check` adds
    checks that need the build (conformance/data/deep_check.py)."""
    shown = display or str(path)
    doc = _compose(path, shown, "a case file")
    case = _validate(Case, doc, shown)
    problems = _problems(case, doc, shown)
    loaded = LoadedCase(
        case=case,
        id=case.id or case_id_for(path, root),
        path=path,
        display_path=shown,
        sha256=doc.sha256,
        program_line=_text_line(doc, "program"),
        classes_line=_text_line(doc, "classes"),
        lines=doc.lines,
    )
    if case.id is None and (problem := case_id_problem(loaded.id)):  # an `id:` the schema has checked
        problems.append(CaseError(shown, 1, "id", f"{problem} (the id comes from the file's path; give an `id:`)"))
    if check is not None:
        seen = {(e.line, e.field) for e in problems}
        problems += [e for e in check(loaded) if (e.line, e.field) not in seen]
    if problems:
        raise CaseLoadError(sorted(problems, key=lambda e: (e.line, e.field)))
    return loaded


def _text_line(doc: _Document, key: str) -> int:
    """The line a top-level block of source starts on (a block scalar: the line after `|`)."""
    node = _value_node(doc.node, key)
    block = node is not None and node.style in ("|", ">")
    return doc.lines.get((key,), 1) + (1 if block else 0)


def load_model(path: Path, model: type[M], what: str, display: str | None = None) -> tuple[M, dict[Loc, int]]:
    """Load any strict YAML document (e.g. an expectations file) with the same line-numbered errors."""
    shown = display or str(path)
    doc = _compose(path, shown, what)
    return _validate(model, doc, shown), doc.lines


def _source_line(node: yaml.MappingNode, loc: Loc, line: int, message: str) -> tuple[int, str]:
    """A syntax error inside Python source (the program, classes, a caller action), reported at
    its line in the case file: the schema says `[program ]line N: ...` relative to the source."""
    match = re.match(r"(?:program )?line (\d+): (.*)", message)
    if match is None:
        return line, message
    value = _node_at(node, loc)
    start = line + (1 if isinstance(value, yaml.ScalarNode) and value.style in ("|", ">") else 0)
    return start + int(match.group(1)) - 1, match.group(2)


def _node_at(node: yaml.Node, loc: Loc) -> yaml.Node | None:
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            found = node.value[part]
        else:
            return None
        if found is None:
            return None
        node = found
    return node


def _value_node(node: yaml.MappingNode, key: str) -> yaml.ScalarNode | None:
    value = _node_at(node, (key,))
    return value if isinstance(value, yaml.ScalarNode) else None


def _nearest(lines: dict[Loc, int], loc: Loc) -> int:
    while loc:
        loc = loc[:-1]
        if loc in lines:
            return lines[loc]
    return 1


def discover(paths: Iterable[Path]) -> list[Path]:
    """Every case file under the given files/folders, sorted (the order every worker sees)."""
    found: set[Path] = set()
    for p in paths:
        if p.is_dir():
            found.update(q for q in p.rglob("*") if is_case_file(q) and q.is_file())
        elif is_case_file(p):
            found.add(p)
    return sorted(found, key=lambda q: q.as_posix())


def load_all(
    paths: Iterable[Path], root: Path | None = None, check: Check | None = None
) -> tuple[list[LoadedCase], list[CaseError]]:
    """Load every case; duplicate ids are errors for each file that carries them."""
    cases: list[LoadedCase] = []
    errors: list[CaseError] = []
    for path in discover(paths):
        try:
            cases.append(load_case(path, root, check=check))
        except CaseLoadError as exc:
            errors.extend(exc.errors)
        except Exception as exc:  # a loader bug must cost this file only, and say so
            errors.append(CaseError(str(path), 1, "<case>", f"the harness could not load this file: "
                                    f"{type(exc).__name__}: {str(exc)[:300]}"))
    by_id: dict[str, list[LoadedCase]] = {}
    for c in cases:
        by_id.setdefault(c.id, []).append(c)
    keep = []
    for c in cases:
        others = [o.display_path for o in by_id[c.id] if o is not c]
        if others:
            errors.append(
                CaseError(c.display_path, c.line_of("id"), "id", f"id {c.id!r} is also used by {', '.join(others)}")
            )
        else:
            keep.append(c)
    return keep, errors
