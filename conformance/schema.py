"""Case schema v1: the declarative form of one conformance case.

Every model is frozen and forbids unknown keys, so a typo in a case file is an error that
names the key and lists the valid ones (see `conformance.loader`). `cases/schema.json` is
exported from these models (`torch-conformance schema --write`) for editors.
"""

from __future__ import annotations

import ast
import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator, model_validator

from conformance.behaviors import IDS
from conformance.core.entry import AOT_FUNCTION, DEFAULT_BACKENDS

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

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CASE_ID = re.compile(r"^[a-z0-9_][a-z0-9_.\-]*(/[a-z0-9_][a-z0-9_.\-]*)*$")
_CONFIG_KEY = re.compile(r"^torch(\.[A-Za-z_][A-Za-z0-9_]*)*\.config(\.[A-Za-z_][A-Za-z0-9_]*)+$")
_DEVICE = re.compile(r"^[a-z_][a-z0-9_]*(:[0-9]+)?$")

JSONScalar = bool | int | float | str | None
# Note [Hostile case files]: values that validate must also run. Bounds far above any real
# case, low enough that no value allocates a machine's memory or overflows torch's int64.
MAX_DIM = 1 << 20
MAX_NUMEL = 1 << 24
MAX_NDIM = 8
MAX_OFFSET = 1 << 24
Dim = Annotated[StrictInt, Field(ge=0, le=MAX_DIM)]
INPUT_KINDS = ("tensor", "view", "two_tensor", "scalar", "module")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


def _check_regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
    return value


def _check_device(value: str) -> str:
    if not _DEVICE.match(value):
        raise ValueError(f"{value!r} is not a device string; write e.g. 'cpu', 'cuda' or 'cuda:1'")
    return value


class TensorSpec(_Strict):
    """A dense tensor built from the case's seeded generator, identically for eager and compiled."""

    shape: tuple[Dim, ...] = Field(
        description=f"Logical size, e.g. [4, 8]; [] is a 0-dim tensor. At most {MAX_NDIM} dims and {MAX_NUMEL} "
        "elements.",
        max_length=MAX_NDIM,
    )
    dtype: DType = "float32"
    requires_grad: bool = False
    leaf: bool = Field(
        True,
        description="false builds the tensor as the result of an op on a leaf (it has a grad_fn); "
        "needs requires_grad: true.",
    )
    layout: Layout = Field(
        "contiguous",
        description="contiguous; transposed (last two dims swapped in memory); strided (every "
        "other element of the last dim); offset (storage_offset 3); channels_last (4-d only).",
    )
    stride: tuple[Dim, ...] | None = Field(
        None, description="Explicit strides, each >= 0 (overrides layout); storage is sized to fit."
    )
    storage_offset: Annotated[StrictInt, Field(ge=0, le=MAX_OFFSET)] | None = Field(
        None, description="Explicit storage offset (overrides the layout's)."
    )
    init: Init | None = Field(
        None,
        description="How values are drawn: randn (floats default), rand, positive (rand + 0.5), "
        "ones, zeros, arange, randint (integers default, 0..9).",
    )
    device: str | None = Field(
        None, description="Pin this input to a device (e.g. 'cpu') whatever the case's device."
    )
    dynamic_dims: tuple[Annotated[StrictInt, Field(ge=0, lt=MAX_NDIM)], ...] = Field(
        (), description="Dims marked dynamic (torch._dynamo.mark_dynamic) on the compiled side."
    )

    @field_validator("device")
    @classmethod
    def _device(cls, value: str | None) -> str | None:
        return None if value is None else _check_device(value)

    @model_validator(mode="after")
    def _consistent(self) -> TensorSpec:
        ndim = len(self.shape)
        if math.prod(self.shape) > MAX_NUMEL:
            raise ValueError(f"shape {list(self.shape)} has {math.prod(self.shape)} elements; at most {MAX_NUMEL}")
        if self.stride is not None and len(self.stride) == ndim and self.shape and min(self.shape) > 0:
            span = (self.storage_offset or 0) + sum((n - 1) * st for n, st in zip(self.shape, self.stride, strict=True))
            if span >= MAX_NUMEL:
                raise ValueError(f"stride {list(self.stride)} spans {span + 1} storage elements; at most {MAX_NUMEL}")
        if len(set(self.dynamic_dims)) != len(self.dynamic_dims):
            raise ValueError("dynamic_dims: each dim at most once")
        if not self.leaf and not self.requires_grad:
            raise ValueError("leaf: false needs requires_grad: true (a tensor without grad is a leaf)")
        if self.requires_grad and self.dtype not in ("float32", "float64", "float16", "bfloat16", "complex64"):
            raise ValueError(f"requires_grad: true needs a floating dtype, not {self.dtype}")
        if self.layout == "transposed" and ndim < 2:
            raise ValueError("layout: transposed needs at least 2 dims")
        if self.layout == "strided" and ndim < 1:
            raise ValueError("layout: strided needs at least 1 dim")
        if self.layout == "channels_last" and ndim != 4:
            raise ValueError("layout: channels_last needs exactly 4 dims")
        if self.stride is not None and len(self.stride) != ndim:
            raise ValueError(f"stride has {len(self.stride)} entries but shape has {ndim} dims")
        for d in self.dynamic_dims:
            if d >= ndim:
                raise ValueError(f"dynamic_dims: dim {d} out of range for {ndim}-d shape")
        return self


class TwoTensorSpec(_Strict):
    """`torch.testing._internal.two_tensor.TwoTensor(a, b)`; a and b may be TwoTensors too."""

    a: InnerSpec
    b: InnerSpec
    requires_grad: bool = False


class InnerSpec(_Strict):
    """One inner tensor of a TwoTensor: exactly one of `tensor` or `two_tensor`."""

    tensor: TensorSpec | None = None
    two_tensor: TwoTensorSpec | None = None

    @model_validator(mode="after")
    def _one(self) -> InnerSpec:
        given = [k for k in ("tensor", "two_tensor") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of tensor, two_tensor (got {given or 'none'})")
        if self.tensor is not None and self.tensor.requires_grad:
            raise ValueError("inner tensors of a TwoTensor cannot require grad; set it on the TwoTensor")
        return self


class ParameterSpec(_Strict):
    """An `nn.Parameter` of a module input: exactly one of `tensor` or `two_tensor`."""

    tensor: TensorSpec | None = None
    two_tensor: TwoTensorSpec | None = None
    requires_grad: bool = True

    @model_validator(mode="after")
    def _one(self) -> ParameterSpec:
        given = [k for k in ("tensor", "two_tensor") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of tensor, two_tensor (got {given or 'none'})")
        if self.tensor is not None and (self.tensor.requires_grad or not self.tensor.leaf):
            raise ValueError("set requires_grad on the parameter, not on its tensor")
        return self


class ModuleSpec(_Strict):
    """A `torch.nn.Module` holding parameters and buffers (e.g. for inductor freezing)."""

    parameters: dict[str, ParameterSpec] = Field(default_factory=dict)
    buffers: dict[str, InnerSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _names(self) -> ModuleSpec:
        for name in (*self.parameters, *self.buffers):
            if not _IDENT.match(name):
                raise ValueError(f"{name!r} is not a Python identifier")
        if not self.parameters and not self.buffers:
            raise ValueError("a module needs at least one parameter or buffer")
        return self


class ScalarSpec(_Strict):
    """A Python scalar argument: one `value`, or a sweep of `values` (one call per value)."""

    type: Literal["float", "int", "bool"] = "float"
    value: float | int | bool | None = None
    values: tuple[float | int | bool, ...] | None = Field(
        max_length=1000,
        default=None, description="A sweep: the program is called once per value, eager and compiled."
    )

    @model_validator(mode="after")
    def _one(self) -> ScalarSpec:
        if (self.value is None) == (self.values is None):
            raise ValueError("give exactly one of value, values")
        items = [self.value] if self.values is None else list(self.values)
        if self.values is not None and len(self.values) == 0:
            raise ValueError("values: give at least one value")
        for item in items:
            if self.type == "int" and (isinstance(item, bool) or not isinstance(item, int)):
                raise ValueError(f"{item!r} is not an int (type: int)")
            if self.type == "bool" and not isinstance(item, bool):
                raise ValueError(f"{item!r} is not a bool (type: bool)")
            if self.type == "float" and isinstance(item, bool):
                raise ValueError(f"{item!r} is not a float (type: float)")
        return self


class InputSpec(_Strict):
    """One program argument: exactly one of tensor, view, two_tensor, scalar, module."""

    tensor: TensorSpec | None = None
    view: str | None = Field(
        None,
        description="A Python expression over earlier inputs, e.g. 'base[1:3]' or 'x.t()'; "
        "the aliasing is rebuilt identically for eager and compiled.",
    )
    two_tensor: TwoTensorSpec | None = None
    scalar: ScalarSpec | None = None
    module: ModuleSpec | None = None
    hidden: bool = Field(
        False, description="Build it (e.g. as the base of views) but do not pass it to the program."
    )

    @model_validator(mode="after")
    def _one(self) -> InputSpec:
        given = [k for k in INPUT_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(INPUT_KINDS)} (got {given or 'none'})")
        if self.view is not None:
            try:
                ast.parse(self.view, mode="eval")
            except SyntaxError as exc:
                raise ValueError(f"view is not a Python expression: {exc.msg}") from None
        return self

    @property
    def kind(self) -> str:
        return next(k for k in INPUT_KINDS if getattr(self, k) is not None)

    def requires_grad(self) -> bool:
        if self.tensor is not None:
            return self.tensor.requires_grad
        if self.two_tensor is not None:
            return self.two_tensor.requires_grad
        if self.module is not None:
            return any(p.requires_grad for p in self.module.parameters.values())
        return False


class CompileSpec(_Strict):
    """How the program is compiled; options a backend does not take are ignored for it."""

    dynamic: bool | None = Field(None, description="torch.compile(dynamic=...); null = torch's default.")
    fullgraph: bool = False
    mode: str | None = Field(None, description="torch.compile(mode=...) for inductor.")
    options: dict[str, JSONScalar] = Field(
        default_factory=dict, description="inductor options, as torch.compile(options=...)."
    )
    keep_inference_input_mutations: tuple[bool, ...] = Field(
        (False,),
        description="aot_function only: one variant per value; true shows as aot_function-kiim.",
    )

    @field_validator("keep_inference_input_mutations")
    @classmethod
    def _nonempty(cls, value: tuple[bool, ...]) -> tuple[bool, ...]:
        if not value or len(set(value)) != len(value):
            raise ValueError("give one or both of false, true, each once")
        return value


class RaisesSpec(_Strict):
    """A negative case: the call must raise this exception (by class name), on the given sides."""

    type: str = Field(description="Exception class name, e.g. RuntimeError (matched on the MRO).")
    match: str | None = Field(None, description="Regular expression searched in str(exception).")
    sides: tuple[Literal["eager", "compiled"], ...] = ("eager", "compiled")

    @field_validator("type")
    @classmethod
    def _ident(cls, value: str) -> str:
        if not _IDENT.match(value):
            raise ValueError(f"{value!r} is not an exception class name")
        return value

    @field_validator("match")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return _check_regex(value)


class ExpectSpec(_Strict):
    """What must hold besides 'compiled behaves exactly like eager'."""

    rtol: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = Field(
        None, description="Relative tolerance; default torch.testing.assert_close's for the dtype."
    )
    atol: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    strides: bool = Field(True, description="Compare output strides with eager.")
    version: Literal["moved", "exact", "ignore"] = Field(
        "moved",
        description="Input _version: moved compares whether it changed; exact compares the delta.",
    )
    write_through: bool = Field(
        True,
        description="After the call, write through every output and compare inputs again "
        "(proves aliasing, not just shared storage).",
    )
    compiles: Annotated[StrictInt, Field(ge=0, le=10_000)] | None = Field(
        None, description="Graphs the backend compiles over one pass of the sweep (torch.compile)."
    )
    warm_rerun: bool = Field(
        False,
        description="Run the sweep a second time after torch._dynamo.reset(), with the "
        "compiled-artifact caches warm; it must give the same results and compile count.",
    )
    raises: RaisesSpec | None = None


class BuildCondition(_Strict):
    """Where a known failure applies; every given condition must match (absent = any)."""

    torch: str | None = Field(None, description="PEP 440 specifier on the torch version, e.g. '<2.12'.")
    device: tuple[str, ...] | None = Field(None, description="Device types, e.g. [cuda].")
    backend: tuple[str, ...] | None = Field(None, description="Variant backends, e.g. [inductor].")
    mode: tuple[Mode, ...] | None = None

    @field_validator("torch")
    @classmethod
    def _spec(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                SpecifierSet(value)
            except InvalidSpecifier:
                raise ValueError(
                    f"{value!r} is not a version specifier; write e.g. '>=2.12,<2.14'"
                ) from None
        return value

    @field_validator("device", "backend", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("mode", mode="before")
    @classmethod
    def _listify_mode(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class KnownFailure(_Strict):
    """A reviewed, linked expectation that this case fails on matching builds."""

    when: BuildCondition = Field(default_factory=BuildCondition)
    reason: str = Field(min_length=1, description="One line: what is broken.")
    link: str = Field(description="Upstream issue or PR (https://...).")
    mismatch: str | None = Field(
        None,
        description="Regular expression every mismatch message must match for the failure to count as this "
        "known one (e.g. 'graphs compiled'); any other mismatch still fails the case.",
    )

    @field_validator("mismatch")
    @classmethod
    def _mismatch_regex(cls, value: str | None) -> str | None:
        return _check_regex(value)

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("reason must be one line")
        return value.strip()

    @field_validator("link")
    @classmethod
    def _https(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("link must be an https:// URL to the upstream issue or PR")
        return value


class Case(_Strict):
    """One conformance case: a program, its inputs, and how the build must behave on it."""

    version: Literal[1] = Field(1, description="Case schema version.")
    id: str | None = Field(
        None, description="Stable id; defaults to the file path under cases/ without .yaml."
    )
    behavior: Behavior
    summary: str = Field(min_length=1, max_length=1000, description="One sentence: the contract this case checks.")
    upstream: tuple[str, ...] = Field(min_length=1, description="Upstream PR/issue links.")
    devices: tuple[str, ...] | None = Field(
        None, description="Device strings; default cpu, cuda and any other available accelerator."
    )
    backends: tuple[Backend, ...] = Field(
        DEFAULT_BACKENDS, min_length=1,
        description="torch.compile backends by registered name (eager, aot_eager, inductor, or a vendor's own), "
        "and aot_function (functorch.compile.aot_function); a name this build does not register skips.")
    compile: CompileSpec = Field(default_factory=CompileSpec)
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="Torch config overrides by dotted name, e.g. "
        "torch._dynamo.config.specialize_float: false.",
    )
    seed: Annotated[StrictInt, Field(ge=0, lt=1 << 63)] = 0
    inputs: dict[str, InputSpec] = Field(
        description="Program arguments in order (hidden ones are built but not passed)."
    )
    program: str = Field(max_length=100_000, description="Python source of exactly one function; torch is in scope.")
    calls: tuple[dict[str, InputSpec], ...] = Field(
        (),
        max_length=100,
        description="Further calls of the same compiled function after the declared inputs (and "
        "after every value of a sweep), each replacing some inputs, e.g. a new shape or a plain "
        "tensor where a subclass was.",
    )
    modes: tuple[Mode, ...] = Field(
        ("inference",),
        min_length=1,
        description="inference: built with no input requiring grad; training: as declared, "
        "then backward through the outputs.",
    )
    grad_enabled: bool = Field(True, description="Grad mode around the call.")
    expect: ExpectSpec = Field(default_factory=ExpectSpec)
    known_failures: tuple[KnownFailure, ...] = ()

    @field_validator("id")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        if value is not None and not _CASE_ID.match(value):
            raise ValueError(
                f"{value!r} is not a case id; use lowercase letters, digits, '_', '-', '.', "
                "and '/' between parts"
            )
        return value

    @field_validator("upstream")
    @classmethod
    def _links(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for link in value:
            if not link.startswith("https://"):
                raise ValueError(f"{link!r} is not an https:// link")
        return value

    @field_validator("devices")
    @classmethod
    def _devices(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None:
            if not value:
                raise ValueError("give at least one device, or leave devices out for all")
            for d in value:
                _check_device(d)
            if len(set(value)) != len(value):
                raise ValueError("each device at most once (a repeated device would run the same items twice)")
        return value

    @field_validator("backends", "modes")
    @classmethod
    def _unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("each entry at most once")
        return value

    @field_validator("config")
    @classmethod
    def _config(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not _CONFIG_KEY.match(key):
                raise ValueError(
                    f"{key!r} is not a dotted torch config name; write e.g. "
                    "torch._dynamo.config.specialize_float"
                )
        return value

    @field_validator("inputs")
    @classmethod
    def _inputs(cls, value: dict[str, InputSpec]) -> dict[str, InputSpec]:
        seen: list[str] = []
        for name, spec in value.items():
            if not _IDENT.match(name) or name == "torch":
                raise ValueError(f"input name {name!r} must be a Python identifier other than torch")
            if spec.view is not None:
                expr = ast.parse(spec.view, mode="eval")
                for node in ast.walk(expr):
                    if isinstance(node, ast.Name) and node.id != "torch" and node.id not in seen:
                        raise ValueError(
                            f"view of {name!r} uses {node.id!r}, which is not an earlier input; "
                            f"earlier inputs: {', '.join(seen) or 'none'}"
                        )
            seen.append(name)
        sweeps = {
            name: len(s.scalar.values)
            for name, s in value.items()
            if s.scalar is not None and s.scalar.values is not None
        }
        if len(set(sweeps.values())) > 1:
            raise ValueError(f"swept scalars must have the same number of values, got {sweeps}")
        return value

    @field_validator("program")
    @classmethod
    def _program(cls, value: str, info: ValidationInfo) -> str:
        try:
            tree = ast.parse(value)
        except SyntaxError as exc:
            raise ValueError(f"program line {exc.lineno}: {exc.msg}") from None  # see loader._program_line
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        others = [
            n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.Import | ast.ImportFrom)
        ]
        if len(funcs) != 1 or others:
            raise ValueError(
                "program must define exactly one function at top level (imports allowed), "
                f"found {len(funcs)} function(s) and {len(others)} other statement(s)"
            )
        inputs = info.data.get("inputs")
        if inputs is not None:
            params = [a.arg for a in funcs[0].args.args]
            passed = [name for name, spec in inputs.items() if not spec.hidden]
            if params != passed or funcs[0].args.vararg or funcs[0].args.kwonlyargs:
                raise ValueError(
                    f"{funcs[0].name}({', '.join(params)}) must take the non-hidden inputs in "
                    f"order: ({', '.join(passed)})"
                )
        return value

    @field_validator("calls")
    @classmethod
    def _calls(cls, value: tuple[dict[str, InputSpec], ...], info: ValidationInfo) -> tuple[dict[str, InputSpec], ...]:
        inputs = info.data.get("inputs")
        if inputs is not None:
            for i, call in enumerate(value):
                unknown = [n for n in call if n not in inputs]
                if unknown:
                    raise ValueError(
                        f"call {i + 1} replaces {', '.join(unknown)}, not among the inputs "
                        f"({', '.join(inputs)})"
                    )
                for name, spec in call.items():
                    if spec.hidden != inputs[name].hidden:
                        raise ValueError(f"call {i + 1}: {name} cannot change hidden")
        return value

    @field_validator("modes")
    @classmethod
    def _modes(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        inputs = info.data.get("inputs")
        if "training" in value and inputs is not None and not any(s.requires_grad() for s in inputs.values()):
            raise ValueError("training needs at least one input with requires_grad: true")
        return value

    @field_validator("expect")
    @classmethod
    def _expect(cls, value: ExpectSpec, info: ValidationInfo) -> ExpectSpec:
        backends = info.data.get("backends")
        if value.compiles is not None and backends is not None and set(backends) <= {AOT_FUNCTION}:
            raise ValueError("compiles counts torch.compile graphs; aot_function compiles none")
        return value

    @property
    def function_name(self) -> str:
        func = next(n for n in ast.parse(self.program).body if isinstance(n, ast.FunctionDef))
        return func.name


TwoTensorSpec.model_rebuild()
InnerSpec.model_rebuild()
ParameterSpec.model_rebuild()


def json_schema() -> dict[str, Any]:
    schema = Case.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"torch-conformance case (schema v{SCHEMA_VERSION})"
    return schema
