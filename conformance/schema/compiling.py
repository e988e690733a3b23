"""How a case's program is compiled: the `compile:` block, and what `compile.module` asks of the program."""

from __future__ import annotations

import ast
from typing import Annotated, Literal

from pydantic import Field, field_validator

from conformance.core.entry import FUNCTION_ENTRIES
from conformance.schema.common import NAME, V2, JSONScalar, Strict
from conformance.schema.inputs import InputSpec


class CompileSpec(Strict):
    """How the program is compiled; options a backend does not take are ignored for it."""

    dynamic: bool | None = Field(None, description="torch.compile(dynamic=...); aot_function's and aot_module's "
                                 "dynamic= (null: false); null = torch's default.")
    fullgraph: bool = False
    mode: str | None = Field(None, description="torch.compile(mode=...) for inductor.")
    options: dict[str, JSONScalar] = Field(
        default_factory=dict, description="inductor options, as torch.compile(options=...)."
    )
    keep_inference_input_mutations: tuple[bool, ...] = Field(
        (False,),
        description="aot_function, aot_module_simplified and aot_module only: one variant per value; true shows "
        "as <entry>-kiim (aot_function-kiim).",
    )
    pre_dispatch: bool = Field(False, description="aot_export_module only: export pre-dispatch "
                               "(aot_export_module(..., pre_dispatch=True)).")
    tracing_mode: Literal["real", "fake", "symbolic"] | None = Field(
        None, description="make_fx: its tracing_mode (default fake); aot_module_simplified: what it traces from "
        "(default real: the call's tensors; fake: fake copies; symbolic: fake copies with symbolic sizes under a "
        "ShapeEnv, whose guards are the shape_env_guards artifact).")
    partitioner: Literal["default", "min_cut"] = Field(
        "default", description="aot_function only: its partition_fn, functorch.compile's default_partition or "
        "min_cut_rematerialization_partition.")
    decompositions: Literal["none", "default", "inductor"] = Field(
        "none", description="aot_function only: default is decompositions=functorch.compile.default_decompositions, "
        "inductor is inductor's table, torch._inductor.decomposition.decompositions (as upstream passes it).")
    functionalize: bool = Field(True, description="aot_function only: false is disable_functionalization=True "
                                "(mutations stay in the traced graphs).")
    fw_compiler: str | None = Field(
        None, json_schema_extra=V2, pattern=NAME,
        description="aot_function, aot_module and aot_module_simplified only: a function of the classes block that is "
        "the entry's forward compiler, (gm, example_inputs) -> callable, as upstream installs its own (default: "
        "functorch.compile.nop); the harness still counts the graphs it is handed.")
    closure: tuple[Annotated[str, Field(pattern=NAME)], ...] = Field(
        (), json_schema_extra=V2,
        description="Names of the classes block the program's function closes over, as upstream's function or lambda "
        "closes over its test's locals (`torch.compile(lambda x: model.m(x))`): dynamo reads them from closure "
        "cells, not globals. The one object of each is what both sides see; an action that rebinds the name "
        "rebinds the global, not the cell.")
    around_making: str | None = Field(
        None, json_schema_extra=V2, pattern=NAME,
        description="A function of the classes block giving a context manager that the harness enters around each "
        "making of the compiled function (the first, and each `fresh:` call's), as upstream asserts around "
        "`torch._dynamo.optimize(...)(fn)` that making it changed no global state. What raises on its exit is "
        "a mismatch of the compiled side (the making raised); what raises on its entry breaks the case.")
    module: str | None = Field(
        None, json_schema_extra=V2, min_length=1,
        description="A module input that is itself what the entry compiles, as upstream compiles its module: "
        "torch.compile(mod), aot_module_simplified(mod, ...), aot_module(mod), make_fx(mod), "
        "aot_export_module(mod, ...), called with the other arguments. The program must be `return mod(<its other "
        "arguments, in order>)`, which is what eager runs; aot_function and aot_export_joint_simple compile the "
        "program (the module's call) as a function.")

    @field_validator("keep_inference_input_mutations")
    @classmethod
    def _nonempty(cls, value: tuple[bool, ...]) -> tuple[bool, ...]:
        if not value or len(set(value)) != len(value):
            raise ValueError("give one or both of false, true, each once")
        return value


class BranchSpec(Strict):
    """`branch:` the classes block's functions that save and restore a global state (Case.branch)."""

    save: str = Field(pattern=NAME)
    restore: str = Field(pattern=NAME)


def module_program(func: ast.FunctionDef, module: str, inputs: dict[str, InputSpec], passed: list[str],
                    backends: tuple[str, ...]) -> None:
    """`compile.module`'s program is the module's call and nothing else, so eager runs what the entry compiles."""
    functional = [b for b in backends if b in FUNCTION_ENTRIES]
    if functional:
        raise ValueError(f"compile.module: {', '.join(functional)} compile(s) a function of tensors, not a module")
    if module not in passed or inputs[module].module is None:
        raise ValueError(f"compile.module: {module!r} is not a module input the program takes "
                         f"(module inputs: {', '.join(n for n in passed if inputs[n].module is not None) or 'none'})")
    others = [n for n in passed if n != module]
    body = func.body
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == module
            and not call.keywords and [a.id if isinstance(a, ast.Name) else None for a in call.args] == others):
        raise ValueError(f"compile.module: {module!r} is what the entry compiles, so the program must be "
                         f"`return {module}({', '.join(others)})` and nothing else")
