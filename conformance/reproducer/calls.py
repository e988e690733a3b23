"""How a short reproducer writes its calls compactly: a leaf named only to make a non-leaf input built
inside that input's line, and consecutive calls that differ only in the literal a name is given (a float
sweep's value) written as one loop over those values."""

from __future__ import annotations

import ast
import re

_NON_LEAF = re.compile(r"(\w+) = non_leaf\((\w+_leaf)\)")


def unnamed_leaves(calls: list[list[str]]) -> list[list[str]]:
    """The calls' lines with a leaf that is named only to make a non-leaf input built inside that
    input's line (`b = non_leaf(torch.randn(...).requires_grad_())`): the same objects, one line fewer."""
    out = []
    for k, lines in enumerate(calls):
        kept: list[str] = []
        for i, line in enumerate(lines):
            m = _NON_LEAF.fullmatch(line)
            later = [lines[i + 1 :], *calls[k + 1 :]]
            if m and kept and kept[-1].startswith(f"{m[2]} = ") and not _read_later(m[2], later):
                kept[-1] = f"{m[1]} = non_leaf({kept[-1].split(' = ', 1)[1]})"
                continue
            kept.append(line)
        out.append(kept)
    return out


def _read_later(name: str, blocks: list[list[str]]) -> bool:
    """Whether `name` is read in these lines before it is bound again."""
    for line in (x.strip() for block in blocks for x in block):
        if line.startswith(f"{name} = "):
            return False
        if re.search(rf"\b{name}\b", line):
            return True
    return False


_ASSIGN = re.compile(r"(\w+) = (.+)")
_FLOAT = re.compile(r"float\('[-+a-z]+'\)")


def _literal(text: str) -> bool:
    if _FLOAT.fullmatch(text):
        return True
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _varying(a: list[str], b: list[str]) -> list[int] | None:
    """The lines at which two calls' code differs, where they differ only in the literal a name is
    given (a float sweep's value); None where they differ otherwise."""
    if len(a) != len(b):
        return None
    at = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        mx, my = _ASSIGN.fullmatch(x), _ASSIGN.fullmatch(y)
        if not (mx and my and mx[1] == my[1] and _literal(mx[2]) and _literal(my[2])):
            return None
        at.append(i)
    return at


def _unlabelled(lines: list[str]) -> list[str]:
    return lines[1:] if lines and lines[0].startswith("# call ") else lines


def runs(calls: list[list[str]]) -> list[tuple[int, list[list[str]]]]:
    """Consecutive calls whose code differs from the first's only in literals given to names,
    grouped as (index of the first, the calls)."""
    groups: list[tuple[int, list[list[str]]]] = []
    for i, lines in enumerate(calls):
        if groups and _varying(_unlabelled(groups[-1][1][0]), _unlabelled(lines)) is not None:
            groups[-1][1].append(lines)
        else:
            groups.append((i, [lines]))
    return groups


def loop(first: int, run: list[list[str]]) -> list[str]:
    """Calls that differ only in some names' values, as one loop over those values."""
    bodies = [_unlabelled(lines) for lines in run]
    at = sorted({i for body in bodies[1:] for i in _varying(bodies[0], body) or []})
    span = f"  # calls {first + 1} to {first + len(run)}"
    if not at:
        return [f"for _ in range({len(run)}):{span}", *(f"    {line}" for line in bodies[0])]
    names = [_ASSIGN.fullmatch(bodies[0][i])[1] for i in at]  # type: ignore[index]  # _varying matched each
    values = [[_ASSIGN.fullmatch(body[i])[2] for i in at] for body in bodies]  # type: ignore[index]  # as above
    items = ", ".join(v[0] if len(v) == 1 else f"({', '.join(v)})" for v in values)
    body = [f"    {line}" for i, line in enumerate(bodies[0]) if i not in at]
    return [f"for {', '.join(names)} in [{items}]:{span}", *body]
