"""Extension points of the runner (conformance/run/runner.py), for whoever needs to change a run
from outside it: the self-check's seeded faults (conformance/selftest/) are the one user here.

An extension wraps the compiled callable the loop calls, and may hold a context open around the
whole variant (to patch what the build generates before it runs). An extension that cannot apply to
this build raises ExtensionNotApplicable from `around_variant`: the item is then a `skip` saying why.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol

Compiled = Callable[..., Any]


class ExtensionNotApplicable(Exception):
    """The build offers no place for this extension (e.g. it generates no code at all)."""


class RunExtension(Protocol):
    def compiled(self, compiled: Compiled) -> Compiled:
        """The compiled callable the loop will call instead of `compiled`."""
        ...

    def around_variant(self) -> contextlib.AbstractContextManager[None]:
        """Held open while the variant runs (compiles included)."""
        ...
