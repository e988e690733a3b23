"""The case as the core reads it: the validated case model (conformance/schema/) dumped to JSON with
every default present (conformance/data/loader.py, `LoadedCase.data`), one TypedDict per level, so
that a misspelt key is a type error. Only the keys the core reads are declared; the dumped dict has
the others too (summary, known_failures, ...), which the core never looks at.

A key in the dump is always there, so every key is required; a value the case may leave out is
None. The functional form names the keys spelt `class`.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, cast

Plain = Any  # a plain value the case file gives (a number, a string, nested lists): the user's, open
ScalarValue = float | int | bool
Action = Literal["before", "after"]
SideName = Literal["eager", "compiled"]
DTypeName = Literal["float32", "float64", "float16", "bfloat16", "complex64", "int64", "int32", "int16", "int8",
                    "uint8", "bool"]
InputKind = Literal["tensor", "view", "two_tensor", "subclass", "scalar", "module", "optimizer"]


class TensorData(TypedDict):
    shape: list[int]
    values: Plain  # nested lists of numbers, or None
    dtype: DTypeName
    requires_grad: bool
    leaf: bool
    layout: Literal["contiguous", "transposed", "strided", "offset", "channels_last"]
    stride: list[int] | None
    storage_offset: int | None
    init: Literal["randn", "rand", "positive", "ones", "zeros", "arange", "randint"] | None
    device: str | None
    dynamic_dims: list[int]


class InnerData(TypedDict):
    """A tensor inside a subclass or a module: exactly one of the three is not None."""

    tensor: TensorData | None
    two_tensor: TwoTensorData | None
    subclass: SubclassData | None


class TwoTensorData(TypedDict):
    a: InnerData
    b: InnerData
    requires_grad: bool


SubclassData = TypedDict("SubclassData", {
    "class": str, "args": "list[InnerData]", "kwargs": "dict[str, Plain]", "requires_grad": bool})


class ParameterData(InnerData):
    requires_grad: bool


ModuleData = TypedDict("ModuleData", {
    "class": "str | None", "args": "list[Plain]", "kwargs": "dict[str, Plain]", "train": bool,
    "dtype": "DTypeName | None", "parameters": "dict[str, ParameterData]", "buffers": "dict[str, InnerData]"})

OptimizerData = TypedDict("OptimizerData", {"class": str, "params": str, "kwargs": "dict[str, Plain]"})


class ScalarData(TypedDict):
    type: Literal["float", "int", "bool"]
    value: ScalarValue | None
    values: list[ScalarValue] | None


class InputData(TypedDict):
    """One input: exactly one of the kinds (InputKind) is not None."""

    tensor: TensorData | None
    view: str | None
    two_tensor: TwoTensorData | None
    subclass: SubclassData | None
    scalar: ScalarData | None
    module: ModuleData | None
    optimizer: OptimizerData | None
    hidden: bool
    persist: bool | None


class RaisesData(TypedDict):
    type: str
    match: str | None
    sides: list[SideName]


class CallRaisesData(RaisesData):
    at: Literal["call", "after"]


class FirstCallData(TypedDict):
    before: str | None
    after: str | None
    compiles: int | None
    raises: CallRaisesData | None


class CallData(FirstCallData):
    """A `calls` entry; its other keys are the inputs it replaces, by name (see replaced_inputs)."""

    fresh: Literal[False, True, "keep_cache", "new_backend"]
    function: str | None


class CompileData(TypedDict):
    dynamic: bool | None
    fullgraph: bool
    mode: str | None
    options: dict[str, str | int | float | bool | None]
    pre_dispatch: bool
    tracing_mode: Literal["real", "fake", "symbolic"] | None
    partitioner: Literal["default", "min_cut"]
    decompositions: Literal["none", "default", "inductor"]
    functionalize: bool
    fw_compiler: str | None
    closure: list[str]
    around_making: str | None
    module: str | None


VersionMode = Literal["moved", "exact", "ignore"]


class ExpectData(TypedDict):
    rtol: float | None
    atol: float | None
    strides: bool | Literal["all"]
    version: VersionMode | dict[str, VersionMode]
    write_through: bool
    compiles: int | None
    compiles_at_most: int | None
    warm_rerun: bool
    raises: RaisesData | None


class BranchData(TypedDict):
    save: str
    restore: str


class CaseData(TypedDict):
    seed: int
    config: dict[str, Plain]  # torch config flags by dotted name: any value a flag takes
    compile: CompileData
    inputs: dict[str, InputData]
    first_call: FirstCallData | None
    calls: list[CallData]
    backward: Literal["seeded", "sum", "sum_once"]
    grad_enabled: bool
    inference_mode: bool
    around: str | None
    branch: BranchData | None
    expect: ExpectData


CALL_ACTIONS: tuple[Action, ...] = ("before", "after")
# a calls entry's own keys; the rest are the inputs it replaces
CALL_KEYS = (*CALL_ACTIONS, "raises", "fresh", "compiles", "function")


def replaced_inputs(entry: CallData) -> dict[str, InputData]:
    """The inputs a `calls` entry replaces: its keys other than CALL_KEYS, each an input's."""
    # a TypedDict cannot declare extra keys of one type (PEP 728 is not in the standard library yet)
    return cast("dict[str, InputData]", {k: v for k, v in entry.items() if k not in CALL_KEYS})


def input_kind(spec: InputData) -> InputKind:
    """Which kind an input is: the one of its kind keys that is not None."""
    kinds: tuple[InputKind, ...] = ("scalar", "module", "optimizer", "tensor", "two_tensor", "subclass", "view")
    return next(k for k in kinds if spec[k] is not None)
