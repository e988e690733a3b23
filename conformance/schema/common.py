"""Vocabulary, bounds and checks shared by the case schema's models."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from conformance.behaviors import IDS

SCHEMA_VERSION = 1

if TYPE_CHECKING:
    Behavior = str
else:  # the choices come from the registry: one declaration per behaviour (conformance/behaviors.py)
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
CASE_ID = re.compile(r"^[a-z0-9_][a-z0-9_.\-]*(/[a-z0-9_][a-z0-9_.\-]*)*$")
CONFIG_KEY = re.compile(r"^torch(\.[A-Za-z_][A-Za-z0-9_]*)*\.config(\.[A-Za-z_][A-Za-z0-9_]*)+$")
DEVICE = re.compile(r"^[a-z_][a-z0-9_]*(:[0-9]+)?$")

JSONScalar = bool | int | float | str | None
# Note [Hostile case files]: values that validate must also run. Bounds far above any real
# case, low enough that no value allocates a machine's memory or overflows torch's int64.
MAX_DIM = 1 << 20
MAX_NUMEL = 1 << 24
MAX_NDIM = 8
MAX_OFFSET = 1 << 24
Dim = Annotated[StrictInt, Field(ge=0, le=MAX_DIM)]
INPUT_KINDS = ("tensor", "view", "two_tensor", "scalar", "module")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


def check_regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
    return value


def check_device(value: str) -> str:
    if not DEVICE.match(value):
        raise ValueError(f"{value!r} is not a device string; write e.g. 'cpu', 'cuda' or 'cuda:1'")
    return value
