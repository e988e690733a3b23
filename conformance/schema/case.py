"""A case: its program, inputs, calls, variants, expectations and known failures."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StrictInt, ValidationInfo, field_validator

from conformance.core.entry import COMPILER_ENTRIES, DEFAULT_BACKENDS, WITHOUT_DYNAMO
from conformance.schema.calls import CallSpec, FirstCallSpec, RaisesSpec
from conformance.schema.common import (
    CALL_ACTIONS,
    CALL_KEYS,
    CONFIG_KEY,
    IDENT,
    SCHEMA_VERSION,
    SCHEMA_VERSIONS,
    SINCE,
    V2,
    Backend,
    BackwardMode,
    Behavior,
    Mode,
    Strict,
    VersionMode,
    case_id_problem,
    check_device,
    statements,
)
from conformance.schema.compiling import BranchSpec, CompileSpec, module_program
from conformance.schema.generated import GeneratedAssertion
from conformance.schema.inputs import InputSpec, ModuleSpec, OptimizerSpec, SubclassSpec
from conformance.schema.known import Divergence, KnownFailure, overlapping_known_failures, unlinked

Loc = tuple[str | int, ...]

SEED_LIMIT = 1 << 63  # a case's seed is below it (torch.manual_seed takes a signed 64-bit integer)


class ExpectSpec(Strict):
    """What must hold besides 'compiled behaves exactly like eager'."""

    rtol: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = Field(
        None, description="Relative tolerance; default torch.testing.assert_close's for the dtype."
    )
    atol: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    strides: bool | Literal["all"] = Field(
        True, description="Compare the outputs' strides (and storage offsets) with eager: true, those of dims longer "
        "than 1, as a size-1 dim's stride has no layout; all, every dim's, size-1 dims included (upstream's "
        "assertEqual(out.stride(), ref.stride())); false, none.")
    version: VersionMode | dict[str, VersionMode] = Field(
        "moved",
        description="Input _version: moved compares whether it changed; exact compares the delta; ignore does "
        "not compare it. A mapping scopes it: {bn.running_mean: ignore} for that tensor only (a name covers "
        "the tensors under it, e.g. bn); every other tensor is moved.",
    )
    write_through: bool = Field(
        True,
        description="After the call, write through every output and compare inputs again "
        "(proves aliasing, not just shared storage).",
    )
    compiles: Annotated[StrictInt, Field(ge=0, le=10_000)] | None = Field(
        None, description="Graphs the backend compiles over one pass of the sweep (torch.compile)."
    )
    compiles_at_most: Annotated[StrictInt, Field(ge=0, le=10_000)] | None = Field(
        None, description="At most this many graphs over one pass (torch.compile): upstream's "
        "`frame_count <= N`, where a build that compiles fewer also passes. Not with compiles."
    )
    warm_rerun: bool = Field(
        False,
        description="Run the sweep a second time after torch._dynamo.reset(), with the "
        "compiled-artifact caches warm; it must give the same results and compile count.",
    )
    raises: RaisesSpec | None = None

    def stated_count(self) -> str | None:
        """The compile count stated, as the parity mapping writes one: `== N`, `<= N`, or None."""
        if self.compiles is not None:
            return f"== {self.compiles}"
        return None if self.compiles_at_most is None else f"<= {self.compiles_at_most}"

    @field_validator("strides", mode="before")
    @classmethod
    def _strides(cls, value: Any) -> Any:
        if not isinstance(value, bool) and value != "all":  # one message, not one per member of the union
            raise ValueError(f"give true (the strides of dims longer than 1), all (every dim's) or false; got "
                             f"{value!r}")
        return value


def _top_level_names(source: str | None) -> list[str]:
    """The names the classes block binds at its top level (classes, functions, assignments,
    imports): what a `view` expression may use besides torch and earlier inputs."""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:  # the classes block's own check says where
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names += [(a.asname or a.name).split(".")[0] for a in node.names]
    return names


class Case(Strict):
    """One conformance case: a program, its inputs, and how the build must behave on it."""

    version: Literal[SCHEMA_VERSIONS] = Field(  # type: ignore[valid-type]  # a Literal of the tuple's values
        SCHEMA_VERSION, description="Case schema version; 2 (the default) is a superset of 1.")
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
        "and the entry points upstream's tests call: aot_function (functorch.compile.aot_function), "
        "aot_module_simplified and aot_module (the program as a module, its module arguments as submodules), "
        "make_fx (traced with fake tensors, the graph called), aot_export_module (exported once, the graph run with "
        "its signature's mutations applied), aot_export_joint_simple (a function of tensors returning a tuple, "
        "exported once, the graph called); a name this build does not register skips.")
    compile: CompileSpec = Field(default_factory=CompileSpec)
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="Torch config overrides by dotted name, patched for this case only: a flag of a torch config "
        "module (one with patch()), torch.<...>.config.<flag> or torch.<...>._config.<flag>, e.g. "
        "torch._dynamo.config.specialize_float: false, "
        "torch.fx.experimental._config.symbol_guard_limit_before_specialize: 3.",
    )
    seed: Annotated[StrictInt, Field(ge=0, lt=SEED_LIMIT)] = 0
    classes: str | None = Field(
        None, max_length=100_000, json_schema_extra=V2,
        description="Python source run once per variant before the inputs are built: tensor subclasses, modules, "
        "autograd Functions and helpers that inputs (by class name) and the program use; torch is in scope.")
    inputs: dict[str, InputSpec] = Field(
        description="Program arguments in order (hidden ones are built but not passed)."
    )
    program: str = Field(max_length=100_000, description="Python source of exactly one function (and any classes "
                         "it uses); torch and the classes block's names are in scope.")
    first_call: FirstCallSpec | None = Field(
        None, json_schema_extra=V2,
        description="What the caller does around the first call (the declared inputs', the sweep's first value's): "
        "before:, after:, raises:, as on a further call; upstream's actions on its first compiled call, without "
        "a second call to carry them.")
    calls: tuple[CallSpec, ...] = Field(
        (),
        max_length=100,
        description="Further calls of the same compiled function after the declared inputs (and "
        "after every value of a sweep), each replacing some inputs, e.g. a new shape or a plain "
        "tensor where a subclass was, and each with the caller's actions before and after it.",
    )
    modes: tuple[Mode, ...] = Field(
        ("inference",),
        min_length=1,
        description="inference: built with no input requiring grad; training: as declared, "
        "then backward through the outputs.",
    )
    backward: BackwardMode = Field(
        "seeded", json_schema_extra=V2,
        description="training's backward on both sides: seeded, one backward through every differentiable output "
        "with seeded tangents; sum, out.sum().backward(retain_graph=True) per output that requires grad in "
        "flattened order (verify_aot_autograd's); sum_once, one backward of those outputs' sums added "
        "(out.sum().backward() for one output). sum and sum_once hand the backward an expanded stride-0 tangent.")
    grad_enabled: bool = Field(True, description="Grad mode around the call.")
    inference_mode: bool = Field(False, description="torch.inference_mode() around the call (inside its grad mode).")
    around: str | None = Field(
        None, max_length=2_000, json_schema_extra=V2,
        description="A Python expression giving a context manager that each side enters around each of its calls "
        "and around the harness's backward (inside the grad modes; the compiled side's first call compiles in it), "
        "made afresh each time: "
        "torch.autocast('cpu'), a TorchDispatchMode, or a helper of the classes block that reseeds "
        "Python's random before the call. torch, the classes block's names and the inputs are in scope.")
    branch: BranchSpec | None = Field(
        None, json_schema_extra=V2,
        description="Each side of each call runs on a branch of a global state of its own, as upstream runs each "
        "side inside branch_nested_state(): `save` (no arguments) returns the state, `restore(state)` makes it "
        "current as a copy. The harness saves it as a call starts, each side's part of the call starts from "
        "there and goes on from where that side left it, and the saved state is restored when the call ends.")
    expect: ExpectSpec = Field(default_factory=ExpectSpec)
    known_failures: tuple[KnownFailure, ...] = ()
    divergences: tuple[Divergence, ...] = Field(
        (), description="Reviewed internals-probe divergences on builds where the contract holds.")
    generated: tuple[GeneratedAssertion, ...] = Field(
        (), max_length=50, json_schema_extra=V2,
        description="Upstream's assertions on what the build generated in the first pass (a wrapper's source, "
        "a traced graph, that an artifact was emitted): checked on the capture, counted by the parity table, "
        "never the item's status.")

    @field_validator("around")
    @classmethod
    def _around(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ast.parse(value, mode="eval")
            except SyntaxError as exc:
                raise ValueError(f"not one Python expression: {exc.msg}") from None
        return value

    @field_validator("id")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        if value is not None and (problem := case_id_problem(value)):
            raise ValueError(problem)
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
                    f"{key!r} is not a dotted torch config name (torch.<...>.config.<flag> or "
                    "torch.<...>._config.<flag>); write e.g. torch._dynamo.config.specialize_float"
                )
        return value

    @field_validator("inputs")
    @classmethod
    def _inputs(cls, value: dict[str, InputSpec], info: ValidationInfo) -> dict[str, InputSpec]:
        classes = _top_level_names(info.data.get("classes"))
        seen: list[str] = []
        for name, spec in value.items():
            if not IDENT.match(name) or name in ("torch", *CALL_KEYS):
                raise ValueError(f"input name {name!r} must be a Python identifier other than torch, "
                                 f"{', '.join(CALL_KEYS)}")
            if spec.view is not None:
                expr = ast.parse(spec.view, mode="eval")
                for node in ast.walk(expr):
                    if isinstance(node, ast.Name) and node.id != "torch" and node.id not in seen + classes:
                        raise ValueError(
                            f"view of {name!r} uses {node.id!r}, which is neither an earlier input nor a name "
                            f"the classes block defines; earlier inputs: {', '.join(seen) or 'none'}"
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
            raise ValueError(f"program line {exc.lineno}: {exc.msg}") from None  # see loader._source_line
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        others = [
            n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom)
        ]
        if len(funcs) != 1 or others:
            raise ValueError(
                "program must define exactly one function at top level (classes and imports allowed; helper "
                f"functions go in the classes block), found {len(funcs)} function(s) and {len(others)} other "
                "statement(s)"
            )
        inputs = info.data.get("inputs")
        if inputs is not None:
            params = [a.arg for a in funcs[0].args.args]
            passed = [name for name, spec in inputs.items() if not spec.hidden]
            sig = funcs[0].args
            # upstream's f(*args) takes the inputs after the named ones; a parameter after them keeps its default
            takes = (params[:len(passed)] == passed and len(params) - len(passed) <= len(sig.defaults)
                     if len(params) >= len(passed) else sig.vararg is not None and params == passed[:len(params)])
            if not takes or sig.kwonlyargs or sig.kwarg or sig.posonlyargs:
                shown = [a.arg for a in (*sig.posonlyargs, *sig.args)]
                raise ValueError(
                    f"{funcs[0].name}({', '.join(shown)}) must take the non-hidden inputs in "
                    f"order: ({', '.join(passed)}), or the first of them and *args for the rest; a parameter "
                    "after them must have a default"
                )
            options = info.data.get("compile")
            if options is not None and options.module is not None:
                module_program(funcs[0], options.module, inputs, passed, info.data.get("backends", ()))
        return value

    @field_validator("calls")
    @classmethod
    def _calls(cls, value: tuple[CallSpec, ...], info: ValidationInfo) -> tuple[CallSpec, ...]:
        inputs = info.data.get("inputs")
        if inputs is not None:
            for i, call in enumerate(value):
                unknown = [n for n in call.replaced if n not in inputs]
                if unknown:
                    raise ValueError(
                        f"call {i + 1} replaces {', '.join(unknown)}, not among the inputs "
                        f"({', '.join(inputs)}); a call's other keys are {', '.join(CALL_KEYS)}"
                    )
                for name, spec in call.replaced.items():
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

    @field_validator("backward")
    @classmethod
    def _backward(cls, value: str, info: ValidationInfo) -> str:
        modes = info.data.get("modes")
        if value != "seeded" and modes is not None and "training" not in modes:
            raise ValueError(f"{value} is how training runs its backward; the modes ({', '.join(modes)}) run none: "
                             "add training, or leave backward out")
        return value

    @field_validator("expect")
    @classmethod
    def _expect(cls, value: ExpectSpec, info: ValidationInfo) -> ExpectSpec:
        backends = info.data.get("backends")
        counted = value.compiles if value.compiles is not None else value.compiles_at_most
        if counted is not None and backends is not None and set(backends) <= set(WITHOUT_DYNAMO):
            raise ValueError(f"compiles counts torch.compile graphs; {', '.join(backends)} compile none")
        if value.compiles is not None and value.compiles_at_most is not None:
            raise ValueError("compiles and compiles_at_most: one count or one ceiling, not both")
        return value

    def stated_counts(self) -> tuple[str | None, bool]:
        """The pass's compile count as the parity mapping writes one, and whether a call states its own."""
        calls = [self.first_call, *self.calls]
        return self.expect.stated_count(), any(c is not None and c.compiles is not None for c in calls)

    @functools.cached_property  # read on every pass of every item; the program never changes
    def function_name(self) -> str:
        func = next(n for n in ast.parse(self.program).body if isinstance(n, ast.FunctionDef))
        return func.name

    @field_validator("classes")
    @classmethod
    def _classes(cls, value: str | None) -> str | None:
        return statements(value)

    def defined_classes(self) -> tuple[str, ...]:
        """The names the classes block binds at top level (classes, functions, assignments)."""
        if self.classes is None:
            return ()
        names: list[str] = []
        for node in ast.parse(self.classes).body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                names.append(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names += [(a.asname or a.name).split(".")[0] for a in node.names]
        return tuple(names)

    def problems(self) -> list[tuple[Loc, str]]:
        """What the models cannot check field by field: names that refer across the case, and
        schema-2 keys in a file that says version: 1. Each with the location of the offending key."""
        found: list[tuple[Loc, str]] = []
        defined = self.defined_classes()
        for loc, ref in class_refs(self):
            if ref.split(".")[0] not in defined and "." not in ref:
                found.append((loc, f"class {ref!r} is not defined in the classes block "
                                   f"(it defines: {', '.join(defined) or 'nothing'}); or give a dotted import path"))
        earlier: dict[str, InputSpec] = {}
        for name, spec in self.inputs.items():
            if spec.optimizer is not None:
                found += _optimizer_problems(("inputs", name, "optimizer", "params"), spec.optimizer, earlier)
            earlier[name] = spec
        if isinstance(self.expect.version, dict):
            for key in self.expect.version:
                head = key.split(".")[0].split("[")[0]
                if head not in self.inputs:
                    found.append((("expect", "version", key), f"{key!r} does not name an input or a tensor under "
                                  f"one (inputs: {', '.join(self.inputs)})"))
        for name, what in (("out", "the call's return value (out)"), ("compiled", "which side acts (compiled)")):
            if name in self.inputs:
                found += [((*loc, action), f"an input named {name} hides {what} from the caller's actions; rename "
                           "the input") for loc, action in self._actions()]
        if self.version == 1:
            found += [(loc, f"{what} is schema version 2; write version: 2 (or leave version out)")
                      for loc, what in newer_keys(self, ())]
        refs: list[tuple[Loc, str | None]] = [
            *((("compile", "closure"), n) for n in self.compile.closure),
            (("compile", "fw_compiler"), self.compile.fw_compiler),
            (("compile", "around_making"), self.compile.around_making),
            (("branch", "save"), self.branch.save if self.branch else None),
            (("branch", "restore"), self.branch.restore if self.branch else None),
            *((("calls", i, "function"), c.function) for i, c in enumerate(self.calls))]
        named = [(loc, n) for loc, n in refs if n is not None]
        found += [(loc, f"{name!r} is not defined in the classes block (it defines: {', '.join(defined) or 'nothing'})")
                  for loc, name in named if name not in defined]
        found += self._functions()
        compiler = self.compile.fw_compiler
        others = sorted(set(self.backends) - set(COMPILER_ENTRIES))
        if compiler is not None and others:
            installers = ", ".join(COMPILER_ENTRIES)
            found.append((("compile", "fw_compiler"),
                          f"a forward compiler is installed by {installers}; not by {', '.join(others)}"))
        found += overlapping_known_failures(self.known_failures)
        found += [(("known_failures", i), "links no upstream issue that describes it: add `searched:` (the queries "
                   "sent, the nearest issue found, why it is not this one), or link the issue")
                  for i, k in enumerate(self.known_failures) if k.searched is None and unlinked(k)]
        return found


    def _functions(self) -> list[tuple[Loc, str]]:
        """A call's `function` is compiled anew (`fresh`) and takes the program's parameters, as eager calls it."""
        program = next(n for n in ast.parse(self.program).body if isinstance(n, ast.FunctionDef))
        funcs = {n.name: n for n in ast.parse(self.classes or "").body if isinstance(n, ast.FunctionDef)}
        found: list[tuple[Loc, str]] = []
        for i, call in enumerate(self.calls):
            func = funcs.get(call.function or "")
            if call.function is not None and not call.fresh:
                found.append((("calls", i, "function"), "another function is compiled anew: give the call fresh: "
                              "true, keep_cache or new_backend (as upstream compiles it: after a reset or not)"))
            elif func is not None and ast.dump(func.args) != ast.dump(program.args):
                found.append((("calls", i, "function"), f"{func.name}({ast.unparse(func.args)}) must take the "
                              f"program's parameters: ({ast.unparse(program.args)})"))
        return found

    def _actions(self) -> Iterator[tuple[Loc, str]]:
        if self.first_call is not None:
            for action in CALL_ACTIONS:
                if getattr(self.first_call, action) is not None:
                    yield ("first_call",), action
        for i, call in enumerate(self.calls):
            for action in CALL_ACTIONS:
                if getattr(call, action) is not None:
                    yield ("calls", i), action


def _optimizer_problems(loc: Loc, spec: OptimizerSpec, earlier: dict[str, InputSpec]) -> list[tuple[Loc, str]]:
    head = spec.params.split(".")[0]
    target = earlier.get(head)
    if target is None or target.module is None:
        modules = [n for n, s in earlier.items() if s.module is not None]
        return [(loc, f"{spec.params!r}: an optimizer steps the parameters of a module input declared before it "
                      f"(earlier module inputs: {', '.join(modules) or 'none'})")]
    if not target.persists:
        return [(loc, f"{spec.params!r}: {head} is rebuilt for every call; give it persist: true so that the "
                      "optimizer steps the module the program gets")]
    return []


def class_refs(model: BaseModel, loc: Loc = ()) -> Iterator[tuple[Loc, str]]:
    """Every class a case names (subclass, module and optimizer inputs, nested ones too), with its location."""
    if isinstance(model, SubclassSpec | OptimizerSpec) or (isinstance(model, ModuleSpec) and model.class_):
        yield (*loc, "class"), str(model.class_)
    for where, child in _children(model):
        yield from class_refs(child, (*loc, *where))


def newer_keys(model: BaseModel, loc: Loc) -> Iterator[tuple[Loc, str]]:
    """Keys given in `model` (recursively) that a schema version after 1 introduced."""
    for name, info in type(model).model_fields.items():
        extra = info.json_schema_extra
        since = extra.get(SINCE, 1) if isinstance(extra, dict) else 1
        if name in model.model_fields_set and isinstance(since, int) and since > 1:
            yield (*loc, info.alias or name), f"{info.alias or name}"
    if isinstance(model, ExpectSpec) and isinstance(model.version, dict):
        yield (*loc, "version"), "version as a mapping"
    if isinstance(model, ExpectSpec) and model.strides == "all":
        yield (*loc, "strides"), "strides: all"
    for where, child in _children(model):
        yield from newer_keys(child, (*loc, *where))


def _children(model: BaseModel) -> Iterator[tuple[Loc, BaseModel]]:
    fields = type(model).model_fields.items()
    values: list[tuple[str, Any]] = [(info.alias or n, getattr(model, n)) for n, info in fields]
    values += list((model.model_extra or {}).items())
    for key, value in values:
        if isinstance(value, BaseModel):
            yield (key,), value
        elif isinstance(value, dict):
            yield from (((key, k), v) for k, v in value.items() if isinstance(v, BaseModel))
        elif isinstance(value, tuple):
            yield from (((key, i), v) for i, v in enumerate(value) if isinstance(v, BaseModel))


def json_schema() -> dict[str, Any]:
    schema = Case.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"torch-conformance case (schema v{SCHEMA_VERSION}; v1 files load unchanged)"
    return schema
