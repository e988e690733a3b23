"""A case's calls: what the first call and each further call replace, what the caller does around them, and
what a call must raise."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator

from conformance.schema.common import IDENT, NAME, V2, Strict, check_regex, statements
from conformance.schema.inputs import InputSpec


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


class CallRaisesSpec(RaisesSpec):
    """What one call must raise: the call itself (at: call), or the caller's `after:` action (at: after)."""

    at: Literal["call", "after"] = Field(
        "call", json_schema_extra=V2,
        description="Where it raises: call (the call itself, in place of expect.raises), or after (the call's "
        "after: action, on the listed sides, and nowhere on the others; the call itself must not raise; "
        "the comparison then compares what the call left, before that action).")


class FirstCallSpec(BaseModel):
    """What the caller does around the first call (the declared inputs'), as around a further call."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)

    before: str | None = Field(
        None, max_length=10_000, json_schema_extra=V2,
        description="Python statements the caller runs on both sides before this call: the inputs by name, the "
        "previous call's return value as out, torch and the classes block's names are in scope; rebinding an "
        "input's name replaces that input.")
    after: str | None = Field(
        None, max_length=10_000, json_schema_extra=V2,
        description="Statements run after this call (and its backward, in training) and before the comparison; "
        "out is this call's return value.")
    compiles: Annotated[StrictInt, Field(ge=0, le=1000)] | None = Field(
        None, json_schema_extra=V2,
        description="How many graphs the backend compiles during this call: upstream's frame_count read after it, "
        "less what it read before (torch.compile backends only; expect.compiles still counts the pass).")
    raises: CallRaisesSpec | None = Field(
        None, json_schema_extra=V2,
        description="What this call must raise, in place of expect.raises for this call (a later call that an "
        "entry without guards refuses, where the first one runs); with at: after, what its after: action raises "
        "(upstream's assertRaises around what the caller does with the output, e.g. its backward).")

    @field_validator("before", "after")
    @classmethod
    def _statements(cls, value: str | None) -> str | None:
        return statements(value)

    @field_validator("raises")
    @classmethod
    def _raises_after(cls, value: CallRaisesSpec | None, info: ValidationInfo) -> CallRaisesSpec | None:
        if value is not None and value.at == "after" and info.data.get("after") is None:
            raise ValueError("at: after declares what the call's after: action raises; the call has no after:")
        return value


class CallSpec(FirstCallSpec):
    """A further call: the inputs it replaces (by name), and what the caller does around it."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=False)
    __pydantic_extra__: dict[str, InputSpec] = Field(init=False)

    fresh: Literal[False, True, "keep_cache", "new_backend"] = Field(
        False, json_schema_extra=V2,
        description="The compiled side compiles the program afresh for this call and the calls after it (a new "
        "torch.compile after torch._dynamo.reset(), a new aot_function, a module entry traced again), as upstream "
        "compiles anew; its graphs count in expect.compiles. The eager side is unchanged. keep_cache: a new "
        "torch.compile of the same code without torch._dynamo.reset(), as upstream compiles a new closure of one "
        "function: dynamo's cache on that code and its automatic-dynamic state are kept (entries without dynamo "
        "compile anew as for true). new_backend: the same with another backend object (counting into the same "
        "count), as upstream's new CompileCounter per torch.compile, so dynamo reuses no frame compiled with the "
        "first.")

    function: str | None = Field(
        None, json_schema_extra=V2, pattern=NAME,
        description="A function of the classes block that this call and the later ones call in place of the program, "
        "eagerly and compiled anew as `fresh` says, as upstream compiles a second function in one test "
        "(`torch.compile(fn)(x)`, then `torch.compile(fn_)(x)`): it takes the program's parameters.")

    @property
    def replaced(self) -> dict[str, InputSpec]:
        return dict(self.model_extra or {})
