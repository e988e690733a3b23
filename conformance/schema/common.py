"""Vocabulary, bounds and checks shared by the case schema's models."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from conformance.behaviors import IDS

SCHEMA_VERSION = 2
SCHEMA_VERSIONS = (1, 2)  # v2 is a superset of v1: every v1 file loads unchanged and means the same

if TYPE_CHECKING:
    Behavior = str
else:  # the choices come from the registry: one declaration per behaviour (conformance/behaviors)
    Behavior = Literal[IDS]
# Any torch.compile backend registered on the build, or aot_function; a name this build does not
# register makes the item a skip saying so (conformance.core.compile.lookup_backend).
Backend = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.\-]*$", max_length=100)]
Mode = Literal["inference", "training"]
MODES: tuple[str, ...] = get_args(Mode)
DType = Literal[
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "complex64",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
]
Layout = Literal["contiguous", "transposed", "strided", "offset", "channels_last"]
Init = Literal["randn", "rand", "positive", "ones", "zeros", "arange", "randint"]

DEFAULT_DEVICES: tuple[str, ...] = ("cpu", "cuda")

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
NAME = r"^[A-Za-z_]\w*$"  # a field naming a function or class of the classes block


def statements(value: str | None) -> str | None:
    """Python statements (a classes block, a caller's action), or ValueError naming the line (see
    loader._source_line)."""
    if value is not None:
        try:
            ast.parse(value)
        except SyntaxError as exc:
            raise ValueError(f"line {exc.lineno}: {exc.msg}") from None
    return value
CASE_ID = re.compile(r"[a-z0-9_][a-z0-9_.\-]*(/[a-z0-9_][a-z0-9_.\-]*)*")
CASE_ID_MAX = 150  # an id names files (a reproducer, a junit classname): short enough for any file system


def case_id_problem(value: str) -> str | None:
    """Why `value` cannot be a case id (None when it can)."""
    shown = repr(value[:60]) + ("…" if len(value) > 60 else "")
    if len(value) > CASE_ID_MAX:
        return f"{shown} is {len(value)} characters; a case id is at most {CASE_ID_MAX}"
    if not CASE_ID.fullmatch(value):
        return f"{shown} is not a case id; use lowercase letters, digits, '_', '-', '.', and '/' between parts"
    return None


# torch.<...>.config.<flag> or torch.<...>._config.<flag> (torch.fx.experimental._config); a run resolves
# the module (conformance/core/compile.py config_flag) and refuses one that is no torch config module
CONFIG_KEY = re.compile(r"^torch(\.[A-Za-z_][A-Za-z0-9_]*)*\._?config(\.[A-Za-z_][A-Za-z0-9_]*)+$")
DEVICE = re.compile(r"^[a-z_][a-z0-9_]*(:[0-9]+)?$")

JSONScalar = bool | int | float | str | None
# Note [Hostile case files]: values that validate must also run. Bounds far above any real
# case, low enough that no value allocates a machine's memory or overflows torch's int64.
MAX_DIM = 1 << 20
MAX_NUMEL = 1 << 24
MAX_NDIM = 8
MAX_OFFSET = 1 << 24
Dim = Annotated[StrictInt, Field(ge=0, le=MAX_DIM)]
INPUT_KINDS = ("tensor", "view", "two_tensor", "subclass", "scalar", "module", "optimizer")
INNER_KINDS = ("tensor", "two_tensor", "subclass")
# A class named by a case: a name the case's `classes:` block defines, or a dotted import path.
CLASS_REF = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# A module input or a submodule of one, by dotted path (`net`, `net.adapter`, `net.0`).
MODULE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")
# Names a `calls` entry gives its caller actions, and all its own keys; no input may take them.
CALL_ACTIONS = ("before", "after")
CALL_KEYS = (*CALL_ACTIONS, "raises", "fresh", "compiles", "function")
VersionMode = Literal["moved", "exact", "ignore"]
# the training mode's backward: seeded tangents (the harness's), or upstream's `out.sum().backward()` (Note in
# conformance/core/call.py: sum, each output's as verify_aot_autograd; sum_once, one of all outputs' sums)
BackwardMode = Literal["seeded", "sum", "sum_once"]


SINCE = "since_version"  # json_schema_extra key: the schema version that introduced a field
V2: dict[str, Any] = {SINCE: 2}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


def check_regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
    return value


def check_class_ref(value: str) -> str:
    if not CLASS_REF.match(value):
        raise ValueError(f"{value!r} is not a class name; write a name the classes block defines (MyTwo) or a "
                         "dotted import path (torch.nn.BatchNorm1d)")
    return value


def check_device(value: str) -> str:
    if not DEVICE.match(value):
        raise ValueError(f"{value!r} is not a device string; write e.g. 'cpu', 'cuda' or 'cuda:1'")
    return value
