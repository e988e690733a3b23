"""How a case declares its inputs: tensors, views, subclasses, scalars, modules, optimizers."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue, StrictInt, ValidationInfo, field_validator, model_validator

from conformance.schema.common import (
    IDENT,
    INNER_KINDS,
    INPUT_KINDS,
    MAX_NDIM,
    MAX_NUMEL,
    MAX_OFFSET,
    MODULE_PATH,
    V2,
    Dim,
    DType,
    Init,
    Layout,
    Strict,
    check_class_ref,
    check_device,
)

FLOATING = ("float32", "float64", "float16", "bfloat16", "complex64")
INT_RANGES = {"int64": (-(1 << 63), (1 << 63) - 1), "int32": (-(1 << 31), (1 << 31) - 1),
              "int16": (-(1 << 15), (1 << 15) - 1), "int8": (-128, 127), "uint8": (0, 255)}


def values_shape(values: Any) -> tuple[int, ...]:
    """The shape of nested lists of numbers (a bare number is 0-dim); ValueError if ragged."""
    shape: list[int] = []
    level = [values]
    for depth in range(MAX_NDIM + 1):
        lists = [isinstance(v, list) for v in level]
        if not any(lists):
            return tuple(shape)
        if not all(lists):
            raise ValueError(f"values: nesting level {depth} mixes lists and numbers (ragged)")
        sizes = {len(v) for v in level}
        if len(sizes) != 1:
            raise ValueError(f"values: the lists at nesting level {depth} have lengths {sorted(sizes)} (ragged)")
        shape.append(sizes.pop())
        level = [x for v in level for x in v]
        if not level:
            return tuple(shape)
    raise ValueError(f"values: nested deeper than {MAX_NDIM} levels")


def overlapping(shape: tuple[int, ...], stride: tuple[int, ...]) -> str | None:
    """Where this geometry may put two elements at one storage location, or None. The rule:
    ordered by stride, each dim (of size > 1) steps past all that the smaller strides reach. It
    also refuses dims that interleave without overlap (shape [3, 2], stride [2, 3]): no case
    needs one, and the exact question is a knapsack problem."""
    if 0 in shape:
        return None
    reach = 0
    for step, size, dim in sorted((st, n, d) for d, (n, st) in enumerate(zip(shape, stride, strict=True)) if n > 1):
        if step <= reach:
            return f"dim {dim} has stride 0 and size {size}" if step == 0 else (
                f"dim {dim} steps {step}, but the smaller strides reach offset {reach}")
        reach += (size - 1) * step
    return None


def _leaves(values: Any) -> list[Any]:
    out, stack = [], [values]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(reversed(v))  # document order, so the first bad value is named
        else:
            out.append(v)
    return out


class TensorSpec(Strict):
    """A dense tensor built from the case's seeded generator, identically for eager and compiled."""

    shape: tuple[Dim, ...] = Field(
        description=f"Logical size, e.g. [4, 8]; [] is a 0-dim tensor. At most {MAX_NDIM} dims and {MAX_NUMEL} "
        "elements. Required unless values gives it.",
        max_length=MAX_NDIM,
    )
    values: Any = Field(
        None,
        description="The tensor's values as nested lists, e.g. [[1, 2], [3, 4]] (a bare number: 0-dim); the "
        "shape follows from them (a given shape must agree). Instead of init.",
        json_schema_extra={"type": ["array", "number", "boolean", "null"], **V2},
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
        None, description="Explicit strides, each >= 0 (overrides layout); storage is sized to fit. Ordered by "
        "stride, each dim (of size > 1) steps past all that the smaller strides reach: no two elements share memory."
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

    @model_validator(mode="before")
    @classmethod
    def _shape_from_values(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("values") is not None:
            shape = values_shape(data["values"])
            if "shape" in data and data["shape"] is not None and list(data["shape"]) != list(shape):
                raise ValueError(f"shape {data['shape']} disagrees with values, which have shape {list(shape)}")
            data = {**data, "shape": list(shape)}
        return data

    @field_validator("device")
    @classmethod
    def _device(cls, value: str | None) -> str | None:
        return None if value is None else check_device(value)

    @field_validator("stride")
    @classmethod
    def _stride(cls, value: tuple[int, ...] | None, info: ValidationInfo) -> tuple[int, ...] | None:
        shape = info.data.get("shape")
        if value is not None and shape is not None and len(shape) == len(value):
            overlap = overlapping(tuple(shape), value)
            if overlap is not None:
                raise ValueError(f"stride {list(value)} for shape {list(shape)}: {overlap}, so elements may share "
                                 "memory; ordered by stride, each dim must step past what the smaller strides "
                                 "reach (for elements that alias, write a view, e.g. base.expand(...))")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> TensorSpec:
        if self.values is not None:
            self._check_values()
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
        self._check_layout(ndim)
        return self

    def _check_layout(self, ndim: int) -> None:
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

    def _check_values(self) -> None:
        if self.init is not None:
            raise ValueError("give values or init, not both")
        for v in _leaves(self.values):
            if self.dtype == "bool":
                if not isinstance(v, bool):
                    raise ValueError(f"values: {v!r} is not a bool (dtype bool)")
            elif self.dtype in INT_RANGES:
                low, high = INT_RANGES[self.dtype]
                if isinstance(v, bool) or not isinstance(v, int):
                    raise ValueError(f"values: {v!r} is not an integer (dtype {self.dtype})")
                if not low <= v <= high:
                    raise ValueError(f"values: {v} is out of range for {self.dtype} [{low}, {high}]")
            elif isinstance(v, bool) or not isinstance(v, int | float):
                raise ValueError(f"values: {v!r} is not a number (dtype {self.dtype})")


class TwoTensorSpec(Strict):
    """`torch.testing._internal.two_tensor.TwoTensor(a, b)`; a and b may be TwoTensors too."""

    a: InnerSpec
    b: InnerSpec
    requires_grad: bool = False


class SubclassSpec(Strict):
    """A tensor subclass instance, `cls(*args, **kwargs)`: a user's own (from the case's classes
    block) or any importable one; e.g. a TwoTensor subclass or a wrapper subclass."""

    class_: str = Field(alias="class", description="A class the case's classes block defines (MyTwo), or a dotted "
                        "import path (torch.testing._internal.two_tensor.TwoTensor).")
    args: tuple[InnerSpec, ...] = Field((), max_length=64, description="Tensor arguments, in order.")
    kwargs: dict[str, JsonValue] = Field(default_factory=dict, description="Further (plain) arguments by name.")
    requires_grad: bool = False

    @field_validator("class_")
    @classmethod
    def _class(cls, value: str) -> str:
        return check_class_ref(value)


class InnerSpec(Strict):
    """A tensor inside a subclass or a module: exactly one of tensor, two_tensor, subclass."""

    tensor: TensorSpec | None = None
    two_tensor: TwoTensorSpec | None = None
    subclass: SubclassSpec | None = Field(None, json_schema_extra=V2)

    @model_validator(mode="after")
    def _one(self) -> InnerSpec:
        given = [k for k in INNER_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(INNER_KINDS)} (got {given or 'none'})")
        inner = self.tensor or self.two_tensor or self.subclass
        if inner is not None and inner.requires_grad:
            raise ValueError("an inner tensor cannot require grad; set it on the outer tensor")
        return self


class ParameterSpec(Strict):
    """An `nn.Parameter` of a module input: exactly one of tensor, two_tensor, subclass."""

    tensor: TensorSpec | None = None
    two_tensor: TwoTensorSpec | None = None
    subclass: SubclassSpec | None = Field(None, json_schema_extra=V2)
    requires_grad: bool = True

    @model_validator(mode="after")
    def _one(self) -> ParameterSpec:
        given = [k for k in INNER_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(INNER_KINDS)} (got {given or 'none'})")
        inner = self.tensor or self.two_tensor or self.subclass
        if (inner is not None and inner.requires_grad) or (self.tensor is not None and not self.tensor.leaf):
            raise ValueError("set requires_grad on the parameter, not on its tensor")
        return self


class ModuleSpec(Strict):
    """An `nn.Module` argument, in one of two forms: an instance of any module class (`class`,
    `args`, `kwargs`, `train`), or a bag of given `parameters` and `buffers`."""

    class_: str | None = Field(None, alias="class", json_schema_extra=V2, description="Any nn.Module class: one "
                               "the case's classes block defines, or a dotted import path (torch.nn.BatchNorm1d).")
    args: tuple[JsonValue, ...] = Field((), max_length=64, json_schema_extra=V2,
                                        description="Constructor arguments (plain values).")
    kwargs: dict[str, JsonValue] = Field(default_factory=dict, json_schema_extra=V2,
                                         description="Constructor keyword arguments.")
    train: bool = Field(True, json_schema_extra=V2, description="module.train(train) after construction (false: "
                        "eval mode).")
    dtype: DType | None = Field(None, json_schema_extra=V2, description="module.to(dtype) after construction.")
    parameters: dict[str, ParameterSpec] = Field(default_factory=dict)
    buffers: dict[str, InnerSpec] = Field(default_factory=dict)

    @field_validator("class_")
    @classmethod
    def _class(cls, value: str | None) -> str | None:
        return None if value is None else check_class_ref(value)

    @model_validator(mode="after")
    def _form(self) -> ModuleSpec:
        for name in (*self.parameters, *self.buffers):
            if not IDENT.match(name):
                raise ValueError(f"{name!r} is not a Python identifier")
        bag = bool(self.parameters or self.buffers)
        if self.class_ is not None and bag:
            raise ValueError("give class (an instance of a module class) or parameters/buffers (a bag), not both")
        if self.class_ is None and not bag:
            raise ValueError("a module needs a class, or at least one parameter or buffer")
        if self.class_ is None and (self.args or self.kwargs or not self.train or self.dtype is not None):
            raise ValueError("args, kwargs, train and dtype belong to the class form (give class)")
        return self


class OptimizerSpec(Strict):
    """A `torch.optim` optimizer over a module input's parameters; built once per pass, so its
    state lives across the calls, and compared after every call."""

    class_: str = Field(alias="class", description="Any torch.optim.Optimizer class (torch.optim.Adam), or one "
                        "the case's classes block defines.")
    params: str = Field(description="The module input whose parameters it steps, or a submodule of it by dotted "
                        "path (net.adapter); that input must say persist: true.")
    kwargs: dict[str, JsonValue] = Field(default_factory=dict, description="Constructor keyword arguments (lr, ...).")

    @field_validator("class_")
    @classmethod
    def _class(cls, value: str) -> str:
        return check_class_ref(value)

    @field_validator("params")
    @classmethod
    def _params(cls, value: str) -> str:
        if not MODULE_PATH.match(value):
            raise ValueError(f"{value!r} is not a module input name or a dotted path into one (net, net.adapter)")
        return value


class ScalarSpec(Strict):
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
        ints = [i for i in items if isinstance(i, int) and not isinstance(i, bool)]
        if "type" not in self.model_fields_set and ints and len(ints) == len(items):
            # the default type would make an int literal a float, which upstream's int is not (equal ints share one
            # symbol under dynamic shapes; floats do not)
            raise ValueError(f"{ints[0]!r} is an int: say type: int, or write {float(ints[0])!r} for a float")
        for item in items:
            if self.type == "int" and (isinstance(item, bool) or not isinstance(item, int)):
                raise ValueError(f"{item!r} is not an int (type: int)")
            if self.type == "bool" and not isinstance(item, bool):
                raise ValueError(f"{item!r} is not a bool (type: bool)")
            if self.type == "float" and isinstance(item, bool):
                raise ValueError(f"{item!r} is not a float (type: float)")
        return self


INT64 = 1 << 63
MAX_POWER = 64  # the largest exponent or shift a view may apply to a value it does not spell out
Number = int | float
_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
}


def _is_sequence(node: ast.AST) -> bool:
    return isinstance(node, ast.List | ast.Tuple) or (isinstance(node, ast.Constant)
                                                      and isinstance(node.value, str | bytes))


def _check_growth(node: ast.BinOp, left: Number | None, right: Number | None) -> None:
    """ValueError where `node` would make a huge value (estimated, never computed)."""
    if isinstance(node.op, ast.Pow | ast.LShift):
        if right is None or (left is None and abs(right) > MAX_POWER):
            raise ValueError(f"raises to a power or shifts by more than {MAX_POWER}, or by an amount the view "
                             "does not spell out")
        if (isinstance(left, int) and isinstance(right, int) and right > 0
                and (abs(left) > 1 if isinstance(node.op, ast.Pow) else left != 0)):  # 1 ** n stays 1; 1 << n grows
            at_least = ((abs(left).bit_length() - 1) * right if isinstance(node.op, ast.Pow)
                        else abs(left).bit_length() + right)
            if at_least > INT64.bit_length():
                raise ValueError(f"is about 2**{at_least}, beyond int64")
    elif isinstance(node.op, ast.Mult):
        for sequence, count in ((node.left, right), (node.right, left)):
            if _is_sequence(sequence) and count is not None and abs(count) > MAX_NUMEL:
                raise ValueError(f"repeats a sequence {count} times")


def _fold(node: ast.AST, known: dict[ast.AST, Number]) -> Number | None:
    """The value of arithmetic on number literals, or None where it depends on more (or would
    raise when the view runs); ValueError for a value beyond int64, found before computing it."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, int | float) else None
    if isinstance(node, ast.UnaryOp) and node.operand in known and isinstance(node.op, ast.USub | ast.UAdd):
        return -known[node.operand] if isinstance(node.op, ast.USub) else known[node.operand]
    if not isinstance(node, ast.BinOp):
        return None
    left, right = known.get(node.left), known.get(node.right)
    _check_growth(node, left, right)
    if left is None or right is None or type(node.op) not in _ARITHMETIC:
        return None
    try:
        value = _ARITHMETIC[type(node.op)](left, right)
    except (ArithmeticError, TypeError, ValueError):
        return None  # it raises when the view runs, promptly
    if isinstance(value, int) and abs(value) > INT64:
        raise ValueError("is beyond int64")
    return value if isinstance(value, int | float) else None


def check_view(expr: str) -> str:
    """A view is a Python expression; its arithmetic on numbers must stay within int64, as
    sizes, strides and indices do: `9 ** 9 ** 9` would run in C, past any timeout, for hours."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not a Python expression: {exc.msg}") from None
    known: dict[ast.AST, Number] = {}
    for node in reversed(list(ast.walk(tree))):  # every node after its children
        try:
            value = _fold(node, known)
        except ValueError as exc:
            segment = ast.get_source_segment(expr, node) or "?"
            segment = segment if len(segment) <= 40 else segment[:40] + "..."
            raise ValueError(f"{segment} {exc}; a view's numbers are sizes, strides and indices") from None
        if value is not None:
            known[node] = value
    return expr


class InputSpec(Strict):
    """One program argument: exactly one of tensor, view, two_tensor, subclass, scalar, module, optimizer."""

    tensor: TensorSpec | None = None
    view: str | None = Field(
        None, max_length=1000,
        description="A Python expression over earlier inputs, e.g. 'base[1:3]' or 'x.t()'; "
        "the aliasing is rebuilt identically for eager and compiled. Its arithmetic on numbers stays "
        f"within int64, and ** and << take a number the view spells out (at most {MAX_POWER} on other values).",
    )
    two_tensor: TwoTensorSpec | None = None
    subclass: SubclassSpec | None = Field(None, json_schema_extra=V2)
    scalar: ScalarSpec | None = None
    module: ModuleSpec | None = None
    optimizer: OptimizerSpec | None = Field(None, json_schema_extra=V2)
    hidden: bool = Field(
        False, description="Build it (e.g. as the base of views) but do not pass it to the program."
    )
    persist: bool | None = Field(
        None, json_schema_extra=V2,
        description="Build it once per pass and pass the same object to every call (a model trained over "
        "steps), instead of a fresh one per call. An optimizer always persists.",
    )

    @model_validator(mode="after")
    def _one(self) -> InputSpec:
        given = [k for k in INPUT_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(INPUT_KINDS)} (got {given or 'none'})")
        if self.persist and (self.view is not None or self.scalar is not None):
            raise ValueError(f"persist: a {self.kind} is made for each call; persist a tensor, subclass or module")
        if self.optimizer is not None and self.persist is False:
            raise ValueError("persist: an optimizer always persists (its state lives across the calls)")
        return self

    @field_validator("view")
    @classmethod
    def _view(cls, value: str | None) -> str | None:
        return None if value is None else check_view(value)

    @property
    def persists(self) -> bool:
        return bool(self.persist) or self.optimizer is not None

    @property
    def kind(self) -> str:
        return next(k for k in INPUT_KINDS if getattr(self, k) is not None)

    def requires_grad(self) -> bool:
        if self.tensor is not None:
            return self.tensor.requires_grad
        if self.two_tensor is not None:
            return self.two_tensor.requires_grad
        if self.subclass is not None:
            return self.subclass.requires_grad
        if self.module is not None:  # a module class's parameters require grad unless it freezes them
            return self.module.class_ is not None or any(p.requires_grad for p in self.module.parameters.values())
        return False


TwoTensorSpec.model_rebuild()
SubclassSpec.model_rebuild()
InnerSpec.model_rebuild()
ParameterSpec.model_rebuild()
