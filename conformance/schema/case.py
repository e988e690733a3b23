"""A case: its program, inputs, calls, variants, expectations and known failures."""

from __future__ import annotations

import ast
from typing import Annotated, Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import Field, StrictInt, ValidationInfo, field_validator

from conformance.core.entry import AOT_FUNCTION, DEFAULT_BACKENDS
from conformance.schema.common import (
    CASE_ID,
    CONFIG_KEY,
    IDENT,
    SCHEMA_VERSION,
    Backend,
    Behavior,
    JSONScalar,
    Mode,
    Strict,
    check_device,
    check_regex,
)
from conformance.schema.inputs import InputSpec


class CompileSpec(Strict):
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


class RaisesSpec(Strict):
    """A negative case: the call must raise this exception (by class name), on the given sides."""

    type: str = Field(description="Exception class name, e.g. RuntimeError (matched on the MRO).")
    match: str | None = Field(None, description="Regular expression searched in str(exception).")
    sides: tuple[Literal["eager", "compiled"], ...] = ("eager", "compiled")

    @field_validator("type")
    @classmethod
    def _ident(cls, value: str) -> str:
        if not IDENT.match(value):
            raise ValueError(f"{value!r} is not an exception class name")
        return value

    @field_validator("match")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return check_regex(value)


class ExpectSpec(Strict):
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


class BuildCondition(Strict):
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


class KnownFailure(Strict):
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
        return check_regex(value)

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


class Case(Strict):
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
        if value is not None and not CASE_ID.match(value):
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
                check_device(d)
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
            if not CONFIG_KEY.match(key):
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
            if not IDENT.match(name) or name == "torch":
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


def json_schema() -> dict[str, Any]:
    schema = Case.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"torch-conformance case (schema v{SCHEMA_VERSION})"
    return schema
