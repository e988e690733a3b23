"""Every run option, declared once.

The pytest plugin registers each as `--conformance-<name>` (ini-free, with an env-var twin
`TORCH_CONFORMANCE_<NAME>` supplying the default); the CLI's `run`/`list` derive `--<name>`
from the same entry and forward it to pytest; the noxfile forwards its posargs to the CLI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["flag", "str", "csv", "path", "float"]


@dataclass(frozen=True)
class Option:
    name: str
    kind: Kind
    default: Any
    help: str
    metavar: str | None = None
    run_only: bool = False

    @property
    def pytest_flag(self) -> str:
        return f"--conformance-{self.name.replace('_', '-')}"

    @property
    def cli_flag(self) -> str:
        return f"--{self.name.replace('_', '-')}"

    @property
    def env(self) -> str:
        return f"TORCH_CONFORMANCE_{self.name.upper()}"

    @property
    def dest(self) -> str:
        return f"conformance_{self.name}"

    def env_default(self) -> Any:
        raw = os.environ.get(self.env)
        if raw is None or raw == "":
            return self.default
        return parse(self, raw)


def parse(option: Option, raw: str) -> Any:
    if option.kind == "flag":
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if option.kind == "float":
        return float(raw)
    return raw


OPTIONS: tuple[Option, ...] = (
    Option("cases", "path", "cases", "root folder of the case files; case ids are paths under it", "DIR"),
    Option("devices", "csv", "", "only these devices/device types, e.g. cpu or cpu,cuda (default: every "
           "device a case declares; unavailable ones skip with a reason)", "LIST"),
    Option("backends", "csv", "", "only these backends: eager, aot_eager, inductor, aot_function, "
           "aot_function-kiim (default: each case's own)", "LIST"),
    Option("modes", "csv", "", "only these modes: inference, training (default: each case's own)", "LIST"),
    Option("shard", "str", "", "run shard I of N (e.g. 2/4); a case always lands in the same shard", "I/N"),
    Option("results", "path", "results/results.jsonl", "JSON Lines results file, one record per item, "
           "rewritten at the start of a run", "PATH", run_only=True),
    Option("timeout", "float", 600.0, "seconds per item before a hung compile becomes an error result "
           "(pytest-timeout)", "SECONDS", run_only=True),
    Option("strict_internals", "flag", False, "make an internals probe that diverges from the "
           "reference fail the case (default: reported only)", run_only=True),
    Option("expectations", "str", "", "extra known-failure files (YAML, comma-separated) kept outside "
           "the case files, e.g. by a fork or device vendor", "PATHS", run_only=True),
)

BY_NAME = {o.name: o for o in OPTIONS}


def csv(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def shard_of(value: str) -> tuple[int, int] | None:
    """Parse 'I/N' (1-based) or '' → None; raise ValueError with what to write otherwise."""
    if not value:
        return None
    try:
        i_text, n_text = value.split("/")
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ValueError(f"--conformance-shard {value!r}: write I/N, e.g. 1/4") from None
    if not 1 <= i <= n:
        raise ValueError(f"--conformance-shard {value!r}: I must be between 1 and N")
    return i, n
