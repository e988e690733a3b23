"""Every run option, declared once.

The pytest plugin registers each as `--conformance-<name>` (ini-free, with an env-var twin
`TORCH_CONFORMANCE_<NAME>` supplying the default); the CLI's `run`/`list` derive `--<name>`
from the same entry and forward it to pytest; the noxfile forwards its posargs to the CLI.
"""

from __future__ import annotations

import math
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
        try:
            return float(raw)
        except ValueError:
            return raw  # reported by check_number with the flag's name
    return raw


def check_number(option: Option, value: object, *, positive: bool) -> str | None:
    """What is wrong with a numeric option's value, or None."""
    try:
        number = float(value)  # type: ignore[arg-type]  # checked right here
    except (TypeError, ValueError):
        return f"{option.cli_flag} {value!r}: not a number"
    if not math.isfinite(number):
        return f"{option.cli_flag} {value!r}: give a finite number"
    if positive and number <= 0:
        return f"{option.cli_flag} {value!r}: give a number of {option.metavar or 'units'} greater than 0"
    if number < 0:
        return f"{option.cli_flag} {value!r}: give 0 (no limit) or a positive number"
    return None


OPTIONS: tuple[Option, ...] = (
    Option("cases", "path", "", "root folder of the case files; case ids are paths under it (default: cases/ in "
           "the working folder where there is one, else the corpus installed with the package)", "DIR"),
    Option("devices", "csv", "", "only these devices/device types, e.g. cpu or cpu,cuda (default: every "
           "device a case declares; unavailable ones skip with a reason)", "LIST"),
    Option("backends", "csv", "", "only these backends: eager, aot_eager, inductor, aot_function, "
           "aot_module_simplified, aot_module (each also as <entry>-kiim: keep_inference_input_mutations=True), "
           "make_fx, none (no compilation: a control) (default: each case's own)", "LIST"),
    Option("modes", "csv", "", "only these modes: inference, training (default: each case's own)", "LIST"),
    Option("shard", "str", "", "run shard I of N (e.g. 2/4); a case always lands in the same shard", "I/N"),
    Option("results", "path", "results/results.jsonl", "JSON Lines results file, one record per item, "
           "rewritten at the start of a run that selects at least one item; the run manifest is written beside it",
           "PATH"),
    Option("timeout", "float", 600.0, "seconds per item before a hung item becomes an error result: a signal "
           "interrupts Python code, and an item still running a grace period later (native code) is ended "
           "with its worker", "SECONDS"),
    Option("memory_limit", "float", None, "GiB of data memory per worker process (RLIMIT_DATA), so that a "
           "program that allocates without bound fails inside itself; 0 for no limit (default: 80%% of the "
           "machine's memory shared among the workers)", "GIB"),
    Option("strict_internals", "flag", False, "make an internals probe that diverges from the "
           "reference fail the case (default: reported only)"),
    Option("full_reproducers", "flag", False, "beside each failure's short reproducer, write the full one "
           "(<name>.full.py): every contract checked by the harness's own core, torch only"),
    Option("expectations", "str", "", "extra known-failure files (YAML, comma-separated) kept outside "
           "the case files, e.g. by a fork or device vendor", "PATHS"),
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
