"""Helpers shared by the five codegens: accumulate lines, exec them into a function."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SourceBuilder:
    """Lines of one generated function plus the globals it closes over."""

    lines: list[str] = field(default_factory=list)
    globals: dict[str, object] = field(default_factory=dict)
    _counter: int = 0

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def fresh(self, prefix: str) -> str:
        name = f"{prefix}_{self._counter}"
        self._counter += 1
        return name

    def bind(self, prefix: str, value: object) -> str:
        """Bind ``value`` to a fresh global name and return that name."""
        name = self.fresh(prefix)
        self.globals[name] = value
        return name

    def source(self) -> str:
        return "\n".join(self.lines)


def exec_function(
    source: str, globals_: Mapping[str, object], name: str, *, filename: str
) -> Callable[..., Any]:
    """Compile ``source``, exec it with a copy of ``globals_``, return function ``name``."""
    namespace: dict[str, Any] = dict(globals_)
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace[name]
    assert callable(fn)
    return fn  # type: ignore[no-any-return]  # exec'd namespace is untyped
