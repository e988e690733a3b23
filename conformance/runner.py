"""Run one case variant: build inputs, run eager and compiled, compare, make one record.

Note [Isolation between cases]
Every variant starts from `torch._dynamo.reset()` inside its own ExitStack of config patches
and grad-mode restore, and resets dynamo again on the way out, so neither compiled frames nor
config overrides survive into the next case — whatever the program did, and also when the
variant raised or timed out (the stack unwinds on BaseException too).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import linecache
import re
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance import oracles
from conformance.devices import default_devices, device_type
from conformance.devices import probe as probe_device
from conformance.expectations import BuildFacts, condition_matches
from conformance.faults import Fault, FaultNotApplicable
from conformance.fingerprint import build_fingerprint, device_fingerprint
from conformance.guard import program_exception
from conformance.inputs import BuiltInputs, CallPoint, FeatureUnavailable, build_inputs, call_points, tensors_of
from conformance.loader import LoadedCase
from conformance.oracles import Mismatch, Tolerance
from conformance.results import KnownFailureRef, ResultRecord
from conformance.schema import Backend, Case, KnownFailure, Mode
from conformance.snapshot import (
    Ambient,
    Relation,
    TensorState,
    ambient,
    flatten_outputs,
    is_subclass,
    output_structure,
    relations,
    storage_key,
    storage_sharing,
    tensor_state,
)


class CaseBroken(Exception):
    """The case itself is wrong (eager fails, a config key is unknown): an `error` result."""


@dataclass(frozen=True)
class Variant:
    device: str
    backend: Backend
    mode: Mode
    kiim: bool = False

    @property
    def backend_label(self) -> str:
        return "aot_function-kiim" if self.kiim else self.backend

    @property
    def label(self) -> str:
        return f"{self.device}-{self.backend_label}-{self.mode}"


def variants_of(
    case: Case,
    *,
    devices: Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
) -> list[Variant]:
    """The case's variants in a fixed order, narrowed by the run's filters (device types match)."""
    out = []
    wanted_types = {device_type(d) for d in devices} if devices else None
    for dev in case.devices or default_devices():
        if wanted_types is not None and device_type(dev) not in wanted_types and dev not in (devices or ()):
            continue
        for backend in case.backends:
            if backends and backend not in backends and not (
                backend == "aot_function" and "aot_function-kiim" in backends
            ):
                continue
            kiims = case.compile.keep_inference_input_mutations if backend == "aot_function" else (False,)
            for kiim in kiims:
                v0 = Variant(dev, backend, "inference", kiim)
                if backends and v0.backend_label not in backends:
                    continue
                for mode in case.modes:
                    if modes and mode not in modes:
                        continue
                    out.append(Variant(dev, backend, mode, kiim))
    return out


@dataclass
class RunOptions:
    strict_internals: bool = False
    probe: bool = True
    extra_known_failures: Callable[[str], tuple[tuple[KnownFailure, str], ...]] | None = None
    fault: Fault | None = None  # self-check only: see conformance.faults


@dataclass
class Timer:
    spent: dict[str, float] = field(default_factory=dict)

    @contextlib.contextmanager
    def __call__(self, bucket: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.spent[bucket] = self.spent.get(bucket, 0.0) + time.perf_counter() - start


@dataclass(frozen=True)
class GraphInput:
    """What one input (or output) of a compiled region is, in the program's terms.

    The probe needs this because generated code indexes the region, not the program:
    dynamo orders graph inputs by first use and inserts symbolic sizes, AOTAutograd lifts
    the graph module's parameters in front, so slot k of generated code is not argument k.
    Kinds: ``"input"``, a program value the graph input *is* (identity): `index` its
    position among the arguments, `name` the input (or `module.param`) name; ``"param"``,
    a parameter or buffer of the graph module, lifted in front of the graph inputs (`name`
    when it is a program value); ``"symint"``, ``"symfloat"``, ``"tensor"``... for values
    the program does not see (symbolic sizes, lifted or tensorified values); for a graph
    output, ``"output"`` with the program output `index` it is, or ``"other"``.
    `symbolic`: per subclass attribute path (``""`` for the value itself), the size and
    stride dims that were symbolic at compile time.
    """

    kind: str
    name: str | None = None
    index: int | None = None
    symbolic: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "index": self.index}
        if self.symbolic:
            out["symbolic"] = [[path, list(sizes), list(strides)] for path, sizes, strides in self.symbolic]
        return out


class CompileCounter:
    """A backend wrapper that counts the graphs dynamo hands to the backend and records, for
    each, what its region is in the program's terms (see GraphInput): its inputs (the graph
    module's lifted parameters, then the example inputs, identified by identity), which
    call compiled it, samples of its outputs on their first call, whether the program also
    ran outside the region during that call (`partial`: another graph in the same call, or
    program inputs changed before the graph ran or after it returned), and, while a capture
    is active, the sources generated during this compile alone."""

    def __init__(self, inner: Callable[..., Any]) -> None:
        self.inner = inner
        self.count = 0
        self.calls = 0
        self._current: BuiltInputs | None = None
        self._states: dict[int, Any] = {}
        self._sampled: int | None = None
        self.graph_inputs: list[tuple[GraphInput, ...]] = []
        self.output_symbolic: list[tuple[tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...], ...] | None] = []
        self.output_samples: list[tuple[Any, ...] | None] = []
        self.compile_calls: list[int] = []
        self.partial: list[bool] = []
        self.captures: list[Any] = []

    @property
    def current(self) -> BuiltInputs | None:
        """The inputs of the call in progress; setting them starts the next call, clearing
        them ends it."""
        return self._current

    @current.setter
    def current(self, value: BuiltInputs | None) -> None:
        if value is not None:
            self.calls += 1
            self._current = value
            self._states = self._input_states()
            return
        if self._sampled is not None and self._input_states() != self._states:
            self.partial[self._sampled] = True  # the program changed its inputs after the graph
        self._sampled = None
        self._current = None

    def _input_states(self) -> dict[int, Any]:
        """Storage, geometry and version of every program tensor of the current call."""
        if self._current is None:
            return {}
        out: dict[int, Any] = {}
        for t in tensors_of(self._current.named).values():
            try:
                out[id(t)] = (t.untyped_storage().data_ptr(), t.size(), t.stride(), t.storage_offset(), t._version)
            except (RuntimeError, NotImplementedError):  # a wrapper subclass has no storage
                out[id(t)] = (t.size(), t.stride(), t._version)
        return out

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        from dataclasses import replace

        from conformance.capture import capture_generated_sources, capturing

        self.count += 1
        k = len(self.compile_calls)
        call_index = max(self.calls - 1, 0)
        # Another graph in this call, or inputs already changed: the region is not the call.
        same_call = [j for j, c in enumerate(self.compile_calls) if c == call_index]
        for j in same_call:
            self.partial[j] = True
        self.partial.append(bool(same_call) or self._input_states() != self._states)
        self.compile_calls.append(call_index)
        nodes = list(gm.graph.nodes) if hasattr(gm, "graph") else []
        placeholders = [n for n in nodes if n.op == "placeholder"]
        lifted: list[GraphInput] = []
        if isinstance(gm, torch.nn.Module):
            for _, t in (*gm.named_parameters(remove_duplicate=False), *gm.named_buffers(remove_duplicate=False)):
                found = self._describe(t)
                lifted.append(GraphInput("param", found.name, found.index, self._symbolic(t)))
        described = []
        for i, e in enumerate(example_inputs):
            g = self._describe(e)
            fake = placeholders[i].meta.get("example_value") if i < len(placeholders) else None
            described.append(replace(g, symbolic=self._symbolic(fake)))
        self.graph_inputs.append((*lifted, *described))
        outs = [n for n in nodes if n.op == "output"]
        if outs:
            values = outs[0].args[0] if isinstance(outs[0].args[0], tuple | list) else (outs[0].args[0],)
            self.output_symbolic.append(
                tuple(self._symbolic(getattr(v, "meta", {}).get("example_value")) for v in values)
            )
        else:
            self.output_symbolic.append(None)
        self.output_samples.append(None)
        with contextlib.ExitStack() as stack:
            cap = stack.enter_context(capture_generated_sources(warn=False)) if capturing() else None
            compiled = self.inner(gm, example_inputs, **kwargs)
        self.captures.append(cap)
        return self._sampling(compiled, k)

    def _sampling(self, compiled: Any, k: int) -> Any:
        """`compiled`, recording samples of what it returns on its first call."""
        import functools

        from conformance.probe import OutputSample

        samples = self.output_samples
        counter = self

        @functools.wraps(compiled)
        def call(*args: Any, **kwargs: Any) -> Any:
            out = compiled(*args, **kwargs)
            if samples[k] is None:
                values = out if isinstance(out, tuple | list) else (out,)
                samples[k] = tuple(OutputSample.of(v) for v in values)
                counter._sampled = k
                counter._states = counter._input_states()
            return out

        return call

    def _describe(self, value: Any) -> GraphInput:
        if self.current is not None:
            tensors = tensors_of(self.current.named)
            for name, t in tensors.items():
                if t is value:
                    index = next((i for i, a in enumerate(self.current.args) if a is t), None)
                    return GraphInput("input", name, index)
        if isinstance(value, torch.SymInt | int):
            return GraphInput("symint")
        if isinstance(value, torch.SymFloat | float):
            return GraphInput("symfloat")
        return GraphInput("tensor" if isinstance(value, torch.Tensor) else type(value).__name__)

    @staticmethod
    def _symbolic(value: Any, path: str = "") -> tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]:
        """Symbolic size/stride dims of a (fake) tensor, per subclass attribute path."""
        if not isinstance(value, torch.Tensor):
            return ()
        size: list[object] = list(value.size())
        stride: list[object] = list(value.stride())
        sizes = tuple(d for d, x in enumerate(size) if isinstance(x, torch.SymInt))
        strides = tuple(d for d, x in enumerate(stride) if isinstance(x, torch.SymInt))
        out: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...] = (
            ((path, sizes, strides),) if sizes or strides else ()
        )
        if is_subclass(value):
            names, _ = type(value).__tensor_flatten__(value)  # type: ignore[attr-defined]  # subclass protocol
            for n in names:
                out += CompileCounter._symbolic(getattr(value, n), f"{path}.{n}" if path else n)
        return out


class _AotCounter(CompileCounter):
    """aot_function's forward compiler sees the flattened program inputs in order. It runs
    inside AOTAutograd, before the wrappers are generated: no per-compile capture here."""

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        self.count += 1
        self.compile_calls.append(max(self.calls - 1, 0))
        args = self.current.args if self.current is not None else []
        self.graph_inputs.append(tuple(GraphInput("input", None, i) for i in range(len(args))))
        self.output_symbolic.append(None)
        self.output_samples.append(None)
        self.partial.append(False)
        self.captures.append(None)
        return self.inner(gm, example_inputs, **kwargs)


def _lookup_backend(name: str) -> Callable[..., Any]:
    import torch._dynamo

    lookup: Callable[[str], Callable[..., Any]] | None = getattr(torch._dynamo, "lookup_backend", None)
    if lookup is None:
        from torch._dynamo.backends.registry import lookup_backend

        lookup = lookup_backend
    return lookup(name)


def _config_patches(case: Case, variant: Variant) -> list[tuple[Any, dict[str, Any]]]:
    patches: list[tuple[Any, dict[str, Any]]] = []
    for key, value in case.config.items():
        module_name, _, attr = key.partition(".config.")
        module_name += ".config"
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise CaseBroken(f"config: {key}: {module_name} is not importable on this build ({exc})") from None
        target: Any = module
        for part in attr.split("."):
            if not hasattr(target, part):
                raise CaseBroken(f"config: {key}: this build has no config {attr!r} in {module_name}")
            target = getattr(target, part)
        patches.append((module, {attr: value}))
    if variant.backend == "inductor" and (case.compile.options or case.compile.mode):
        import torch._inductor
        import torch._inductor.config as inductor_config

        options: dict[str, Any] = {}
        if case.compile.mode:
            options.update(torch._inductor.list_mode_options(case.compile.mode, case.compile.dynamic))
        options.update(case.compile.options)
        patches.append((inductor_config, options))
    return patches


@contextlib.contextmanager
def isolated(case: Case, variant: Variant) -> Iterator[None]:
    """See Note [Isolation between cases]."""
    import torch._dynamo

    torch._dynamo.reset()
    grad = torch.is_grad_enabled()
    try:
        with contextlib.ExitStack() as stack:
            for module, patch in _config_patches(case, variant):
                stack.enter_context(module.patch(patch))
            torch.manual_seed(case.seed)
            yield
    finally:
        torch.set_grad_enabled(grad)
        torch._dynamo.reset()


def program_filename(lc: LoadedCase) -> str:
    return f"<program of {lc.display_path}>"


def make_function(lc: LoadedCase) -> Callable[..., Any]:
    """A fresh function object from the case's program; its line numbers are the case file's.

    The source is registered with linecache under a name of its own: dynamo and tracebacks
    read source lines, and the YAML file itself is not Python they could tokenize.
    """
    filename = program_filename(lc)
    source = "\n" * (lc.program_line - 1) + lc.case.program
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    code = compile(source, filename, "exec")
    namespace: dict[str, Any] = {"torch": torch, "__name__": "torch_conformance_case"}
    exec(code, namespace)
    fn: Callable[..., Any] = namespace[lc.case.function_name]
    return fn


def make_compiled(fn: Callable[..., Any], case: Case, variant: Variant) -> tuple[Callable[..., Any], CompileCounter]:
    if variant.backend == "aot_function":
        try:
            from functorch.compile import aot_function, nop  # type: ignore[attr-defined]  # re-exported without __all__
        except ImportError as exc:
            raise FeatureUnavailable(f"functorch.compile.aot_function is not available: {exc}") from None
        aot_counter = _AotCounter(nop)
        compiled = aot_function(
            fn,
            fw_compiler=aot_counter,
            bw_compiler=nop,
            keep_inference_input_mutations=variant.kiim,
            dynamic=bool(case.compile.dynamic),
        )
        return compiled, aot_counter
    counter = CompileCounter(_lookup_backend(variant.backend))
    compiled = torch.compile(fn, backend=counter, dynamic=case.compile.dynamic, fullgraph=case.compile.fullgraph)
    return compiled, counter


@dataclass
class Side:
    """What one side (eager or compiled) of one call left behind."""

    inputs: BuiltInputs
    before: dict[str, tuple[tuple[str, int] | None, int | None]]
    exc: BaseException | None = None
    outputs: list[Any] = field(default_factory=list)
    structure: str = ""
    out_states: list[TensorState | None] = field(default_factory=list)
    after: dict[str, TensorState] = field(default_factory=dict)
    sharing: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ambient: Ambient | None = None
    relations: list[Relation | None] = field(default_factory=list)
    grads: dict[str, TensorState | None] = field(default_factory=dict)
    backward_exc: BaseException | None = None
    write_errors: list[str | None] = field(default_factory=list)
    after_write: dict[str, TensorState] = field(default_factory=dict)
    where: str = ""  # " at <program of case.yaml>:12" for an exception the program raised


def _program_line(exc: BaseException) -> str:
    """Where in the case's program an exception was raised (its deepest frame there), or ''."""
    found = ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename.startswith("<program of "):
            found = f" at {frame.f_code.co_filename[len('<program of '):-1]}:{lineno}"
    return found


def _light(t: torch.Tensor) -> tuple[tuple[str, int] | None, int | None]:
    try:
        version: int | None = t._version
    except (RuntimeError, AttributeError):
        version = None
    return storage_key(t), version


def _call(fn: Callable[..., Any], inputs: BuiltInputs, case: Case) -> Side:
    side = Side(inputs=inputs, before={n: _light(t) for n, t in tensors_of(inputs.named).items()})
    with torch.set_grad_enabled(case.grad_enabled):
        try:
            result = fn(*inputs.args)
        except BaseException as exc:  # see Note [Every item accounted for]
            if not program_exception(exc):
                raise
            # keep no frame alive: a program that allocated without bound holds it in its locals
            side.where = _program_line(exc)
            side.exc = exc.with_traceback(None)
            result = None
        side.ambient = ambient()
    if side.exc is None:
        side.outputs = flatten_outputs(result)
        side.structure = output_structure(result)
        side.relations = relations(tensors_of(inputs.named), side.outputs)
    return side


def _snapshot(side: Side) -> None:
    side.out_states = [tensor_state(o) if isinstance(o, torch.Tensor) else None for o in side.outputs]
    tensors = tensors_of(side.inputs.named)
    side.after = {n: tensor_state(t) for n, t in tensors.items()}
    side.sharing = storage_sharing(tensors)


def _tangent(out: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A seeded gradient shaped like `out`; for a subclass, the same subclass built from inner
    tangents, so the backward sees what a user's backward of that output would."""
    if is_subclass(out):
        names, ctx = type(out).__tensor_flatten__(out)  # type: ignore[attr-defined]  # subclass protocol
        inner = {n: _tangent(getattr(out, n), gen) for n in names}
        built: torch.Tensor = type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())  # type: ignore[attr-defined]  # subclass protocol
        return built
    draw = torch.randn(tuple(out.shape), generator=gen, dtype=torch.complex64 if out.is_complex() else torch.float32)
    return draw.to(device=out.device, dtype=out.dtype)


def _backward(side: Side, case: Case) -> None:
    """Backward through every differentiable output at once, with seeded tangents."""
    diff = [
        o
        for o in side.outputs
        if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)
    ]
    if diff:
        gen = torch.Generator().manual_seed(case.seed + 7919)
        with torch.enable_grad():
            try:
                torch.autograd.backward(diff, grad_tensors=[_tangent(o, gen) for o in diff])
            except BaseException as exc:
                if not program_exception(exc):
                    raise
                side.backward_exc = exc
    side.grads = {
        name: (tensor_state(leaf.grad, with_storage=False) if leaf.grad is not None else None)
        for name, leaf in side.inputs.grad_leaves.items()
    }


def _write_through(side: Side) -> None:
    """Write through every output, so aliasing shows as changed inputs/outputs (see ExpectSpec)."""
    with torch.no_grad():
        for o in side.outputs:
            if not isinstance(o, torch.Tensor):
                side.write_errors.append(None)
                continue
            try:
                if o.dtype == torch.bool:
                    o.logical_not_()
                else:
                    o.add_(1)
                side.write_errors.append(None)
            except Exception as exc:
                side.write_errors.append(type(exc).__name__)
    states = {n: tensor_state(t) for n, t in tensors_of(side.inputs.named).items()}
    for k, o in enumerate(side.outputs):
        if isinstance(o, torch.Tensor):
            states[f"out[{k}]"] = tensor_state(o)
    side.after_write = states


def _compare_exceptions(eager: Side, comp: Side, case: Case, prefix: str) -> list[Mismatch]:
    """Unexpected eager exceptions break the case; compiled ones (or missing ones) fail it."""
    out: list[Mismatch] = []
    raises = case.expect.raises
    for name, side in (("eager", eager), ("compiled", comp)):
        if raises is not None and name in raises.sides:
            if oracles.matches_exception(side.exc, raises.type, raises.match):
                continue
            want = raises.type + (f" matching {raises.match!r}" if raises.match else "")
            got = oracles.exception_summary(side.exc)
            if name == "eager":
                raise CaseBroken(f"{prefix}expect.raises: eager gives {got}, but the case expects {want}")
            out.append(Mismatch("exception", "call", want, got, source="expect.raises"))
        elif side.exc is not None:
            if name == "eager":
                raise CaseBroken(
                    f"{prefix}eager raised {oracles.exception_summary(side.exc)}; "
                    "fix the program, or declare expect.raises for a negative case"
                )
            out.append(Mismatch("exception", "call", oracles.exception_summary(None),
                                oracles.exception_summary(side.exc)))
    return out


def _compare_outputs(eager: Side, comp: Side, case: Case, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if comp.structure != eager.structure:
        out.append(Mismatch("structure", "outputs", eager.structure, comp.structure))
    if len(comp.outputs) != len(eager.outputs):
        return [*out, Mismatch("number of outputs", "outputs", str(len(eager.outputs)), str(len(comp.outputs)))]
    for k, (a, e) in enumerate(zip(comp.outputs, eager.outputs, strict=True)):
        sa, se = comp.out_states[k], eager.out_states[k]
        if sa is not None and se is not None:
            out += oracles.compare_state(f"out[{k}]", sa, se, tol, strides=case.expect.strides)
        elif (sa is None) != (se is None):
            out.append(Mismatch("type", f"out[{k}]", type(e).__name__, type(a).__name__))
        else:
            out += oracles.compare_plain(f"out[{k}]", a, e, tol)
    out += oracles.compare_relations(comp.relations, eager.relations)
    return out


def _compare_inputs(eager: Side, comp: Side, case: Case, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    for name, se in eager.after.items():
        sa = comp.after[name]
        out += oracles.compare_state(f"input {name}", sa, se, tol)
        ce = oracles.input_change(_as_state(eager.before[name]), se)
        ca = oracles.input_change(_as_state(comp.before[name]), sa)
        out += oracles.compare_change(f"input {name}", ca, ce, case.expect.version)
        shared_e, shared_a = eager.sharing.get(name, ()), comp.sharing.get(name, ())
        if shared_a != shared_e:
            out.append(Mismatch("shares storage with", f"input {name}", str(list(shared_e)), str(list(shared_a))))
    return out


def _compare_grads(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (comp.backward_exc is None) != (eager.backward_exc is None):
        out.append(Mismatch("exception", "backward", oracles.exception_summary(eager.backward_exc),
                            oracles.exception_summary(comp.backward_exc)))
    for name, ge in eager.grads.items():
        ga = comp.grads.get(name)
        if (ga is None) != (ge is None):
            out.append(Mismatch(".grad", f"grad of {name}", "a tensor" if ge is not None else "None",
                                "a tensor" if ga is not None else "None"))
        elif ga is not None and ge is not None:
            out += oracles.compare_state(f"grad of {name}", ga, ge, tol, strides=False, grad_fields=False,
                                         storage=False)
    return out


def _compare_write_through(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if comp.write_errors != eager.write_errors:
        out.append(Mismatch("in-place write through outputs", "outputs", str(eager.write_errors),
                            str(comp.write_errors)))
    for name, se in eager.after_write.items():
        sa = comp.after_write.get(name)
        if sa is not None:
            out += oracles.compare_state(f"after writing through the outputs: {name}", sa, se, tol,
                                         strides=False, grad_fields=False, storage=False)
    return out


def _compare_call(eager: Side, comp: Side, case: Case, prefix: str, training: bool) -> list[Mismatch]:
    """Everything one call left behind, compiled against eager; `where` prefixed with the call."""
    found = _compare_exceptions(eager, comp, case, prefix)
    if eager.exc is None and comp.exc is None:
        tol = Tolerance(case.expect.rtol, case.expect.atol)
        found += _compare_outputs(eager, comp, case, tol)
        found += _compare_inputs(eager, comp, case, tol)
        assert comp.ambient is not None
        assert eager.ambient is not None
        found += oracles.compare_ambient(comp.ambient, eager.ambient)
        if training:
            found += _compare_grads(eager, comp, tol)
        if case.expect.write_through:
            found += _compare_write_through(eager, comp, tol)
    return [dataclasses.replace(m, where=prefix + m.where) for m in found]


def _as_state(light: tuple[tuple[str, int] | None, int | None]) -> TensorState:
    return TensorState(type="", dtype="", device="", shape=(), stride=None, storage_offset=None,
                       requires_grad=False, is_leaf=True, version=light[1], storage=light[0],
                       values=None, storage_values=None)


def _mark_dynamic(inputs: BuiltInputs) -> None:
    import torch._dynamo

    for name, dims in inputs.dynamic_dims.items():
        torch._dynamo.mark_dynamic(inputs.named[name], list(dims))


def _observe(lc: LoadedCase, variant: Variant, point: CallPoint) -> Any:
    """The reference oracle's observation of an eager run on a third, identical input copy.

    Tensors the program reaches through its arguments (module parameters and buffers) are
    observed as attributes, so that a region that lifts them can be described."""
    from reference_impl.observe import observe

    inputs = build_inputs(lc.case, variant.device, variant.mode, point)
    hidden = {n: t for n, t in tensors_of(inputs.named).items() if not any(t is a for a in inputs.args)}
    grad = torch.is_grad_enabled()
    try:
        with torch.set_grad_enabled(lc.case.grad_enabled):
            return observe(make_function(lc), inputs.args, attributes=hidden)
    finally:
        torch.set_grad_enabled(grad)


def _scalar_sweep(lc: LoadedCase, compile_count: int) -> Any:
    from conformance.probe import ScalarSweep
    from reference_impl.scalar_tensorify import analyze_float_uses

    case = lc.case
    swept = [n for n, s in case.inputs.items() if s.scalar is not None and s.scalar.values is not None
             and s.scalar.type == "float"]
    if not swept or case.calls:
        return None
    uses = analyze_float_uses(case.program, swept)
    n = case.sweep_length()
    values = tuple({name: float(case.inputs[name].scalar.values[k]) for name in swept}  # type: ignore[union-attr,index]  # swept: scalar values present
                   for k in range(n))
    return ScalarSweep(uses=uses, n_values=n, compile_count=compile_count, dynamic=case.compile.dynamic,
                       values=values)


def run_probe(lc: LoadedCase, variant: Variant, capture: Any, counter: CompileCounter) -> dict[str, Any]:
    """Compare what the build generated during the cold pass with the reference (never raises).

    One comparison per compile, each with the observation of the call that compiled it and
    the region the counter recorded (GraphInput); the graph's outputs are matched with the
    observed program outputs. Sources are split per compile when the counter captured them
    so and they account for everything captured; otherwise the whole capture is compared
    with the first compile. For aot_function the region is the program's own signature.
    """
    from conformance.probe import GraphSignature, match_outputs, probe_compiles

    try:
        points = call_points(lc.case)
        observed: dict[int, Any] = {}

        def observation(call: int) -> Any:
            point = min(call, len(points) - 1)
            if point not in observed:
                observed[point] = _observe(lc, variant, points[point])
            return observed[point]

        def frozen(k: int, obs: Any) -> frozenset[int]:
            """Inductor freezing bakes in the graph module's lifted parameters (not mutated)."""
            if variant.backend != "inductor" or lc.case.grad_enabled:
                return frozenset()
            import torch._inductor.config as inductor_config

            if not inductor_config.freezing:
                return frozenset()
            attrs = {a.name: a.input for a in obs.attributes}
            return frozenset(
                slot
                for slot, g in enumerate(counter.graph_inputs[k])
                if g.kind == "param" and not (g.name in attrs and attrs[g.name].mutated)
            )

        def signature(k: int, obs: Any) -> Any:
            samples = counter.output_samples[k] if k < len(counter.output_samples) else None
            outputs = None
            if samples is not None:
                symbolic = counter.output_symbolic[k]
                matched = match_outputs(samples, obs.raw_outputs)
                outputs = tuple(
                    GraphInput(
                        "output" if m is not None else "other",
                        None,
                        m,
                        symbolic[j] if symbolic is not None and j < len(symbolic) else (),
                    )
                    for j, m in enumerate(matched)
                )
                graph_outputs.append([g.to_json() for g in outputs])
            partial = k < len(counter.partial) and counter.partial[k]
            return GraphSignature.of(counter.graph_inputs[k], outputs, frozen=frozen(k, obs), partial=partial)

        compiles: list[tuple[Any, Any, Any]] = []
        graph_outputs: list[list[dict[str, Any]]] = []
        if variant.backend == "aot_function":
            obs = observation(counter.compile_calls[0] if counter.compile_calls else 0)
            region = GraphSignature(tuple(range(len(obs.inputs))), tuple(range(len(obs.raw_outputs))))
            compiles.append((capture, obs, region))
        else:
            per_compile = [c for c in counter.captures if c is not None]
            split = len(per_compile) == counter.count > 0
            if split and sum(len(c.artifacts) for c in per_compile) >= len(capture.artifacts):
                for k in range(counter.count):
                    obs = observation(counter.compile_calls[k])
                    compiles.append((counter.captures[k], obs, signature(k, obs)))
            else:
                obs = observation(counter.compile_calls[0] if counter.compile_calls else 0)
                compiles.append((capture, obs, signature(0, obs) if counter.graph_inputs else None))
        report = probe_compiles(
            compiles,
            scalar=_scalar_sweep(lc, counter.count) if variant.backend != "aot_function" else None,
            keep_input_mutations=variant.backend != "aot_function" or variant.kiim,
            seen=capture,
        )
    except Exception as exc:  # the probe informs; it must never cost the contract verdict
        return {"error": oracles.exception_summary(exc), "results": [], "seen": list(capture.names())}
    out: dict[str, Any] = report.to_json()
    out["graph_inputs"] = [[g.to_json() for g in compile_] for compile_ in counter.graph_inputs]
    out["graph_outputs"] = graph_outputs
    out["partial"] = list(counter.partial)
    return out


@dataclass
class Outcome:
    mismatches: list[Mismatch]
    compile_counts: dict[str, int | None]
    calls: int
    probes: dict[str, Any] = field(default_factory=dict)


def execute(
    lc: LoadedCase, variant: Variant, timer: Timer, fault: Fault | None = None, probe: bool = True
) -> Outcome:
    """Run every pass and call of one variant; raise CaseBroken/FeatureUnavailable."""
    case = lc.case
    points = call_points(case)
    passes = 2 if case.expect.warm_rerun else 1
    with contextlib.ExitStack() as stack:
        if case.expect.warm_rerun:
            stack.enter_context(_fresh_compile_caches())
        return _execute_passes(lc, variant, timer=timer, fault=fault, probe=probe, points=points, passes=passes)


@contextlib.contextmanager
def _fresh_compile_caches() -> Iterator[None]:
    """Note [Cold and warm passes]: the on-disk compile caches (inductor's FX graph cache,
    AOTAutograd's cache, triton's) outlive processes, so a "cold" pass would hit whatever an
    earlier run left. A warm-rerun case gets empty cache folders of its own for its cold pass,
    kept for its warm pass, then removed; other cases share the default caches (speed)."""
    import os
    import tempfile

    names = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    saved = {n: os.environ.get(n) for n in names}
    with tempfile.TemporaryDirectory(prefix="torch-conformance-cold-") as tmp:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        try:
            yield
        finally:
            for n, v in saved.items():
                if v is None:
                    os.environ.pop(n, None)
                else:
                    os.environ[n] = v


def _execute_passes(
    lc: LoadedCase,
    variant: Variant,
    *,
    timer: Timer,
    fault: Fault | None,
    probe: bool,
    points: list[CallPoint],
    passes: int,
) -> Outcome:
    from conformance.capture import capture_generated_sources

    case = lc.case
    mismatches: list[Mismatch] = []
    counts: dict[str, int | None] = {}
    calls = 0
    probes: dict[str, Any] = {}
    for p in range(passes):
        pass_name = "cold" if p == 0 else "warm"
        if p:
            import torch._dynamo

            torch._dynamo.reset()
        eager_fn = make_function(lc)
        compiled, counter = make_compiled(make_function(lc), case, variant)
        if fault is not None and fault.wrap is not None:
            compiled = fault.wrap(compiled)
        capturing = probe and p == 0
        with contextlib.ExitStack() as stack:
            capture = stack.enter_context(capture_generated_sources(warn=False)) if capturing else None
            mismatches += _run_pass(
                lc,
                variant=variant,
                timer=timer,
                compiled=compiled,
                counter=counter,
                points=points,
                eager_fn=eager_fn,
                p=p,
            )
        calls += len(points)
        counts[f"{pass_name}_graphs"] = counter.count
        if capture is not None:
            with timer("probe"):
                probes = run_probe(lc, variant, capture, counter)
        expected = case.expect.compiles
        if expected is not None and variant.backend != "aot_function" and counter.count != expected:
            mismatches.append(
                Mismatch(
                    "graphs compiled",
                    f"{pass_name} pass over {len(points)} call(s)",
                    str(expected),
                    str(counter.count),
                    "a recompile per value" if counter.count >= len(points) > 1 else "",
                    source="expect.compiles",
                )
            )
    return Outcome(mismatches=mismatches, compile_counts=counts, calls=calls, probes=probes)


def _run_pass(
    lc: LoadedCase,
    *,
    variant: Variant,
    timer: Timer,
    compiled: Callable[..., Any],
    counter: CompileCounter,
    points: Sequence[CallPoint],
    eager_fn: Callable[..., Any],
    p: int,
) -> list[Mismatch]:
    case = lc.case
    training = variant.mode == "training"
    mismatches: list[Mismatch] = []
    for i, point in enumerate(points):
        prefix = ("warm rerun, " if p else "") + (f"{point.label}: " if len(points) > 1 else "")
        with timer("build_inputs"):
            e_in = build_inputs(case, variant.device, variant.mode, point)
            c_in = build_inputs(case, variant.device, variant.mode, point)
        with timer("eager"):
            eager = _call(eager_fn, e_in, case)
        raises = case.expect.raises
        if eager.exc is not None and (raises is None or "eager" not in raises.sides):
            # the case is broken whatever compiled does; do not run it (it might hang or allocate again)
            raise CaseBroken(f"{prefix}eager raised {oracles.exception_summary(eager.exc)}{eager.where}; fix the "
                             "program, or declare expect.raises for a negative case")
        with timer("oracles"):
            if eager.exc is None:
                _snapshot(eager)
        if variant.backend != "aot_function":
            _mark_dynamic(c_in)
        before = counter.count
        counter.current = c_in
        t0 = time.perf_counter()
        comp = _call(compiled, c_in, case)
        counter.current = None
        # a call during which the backend compiled counts as compile time
        bucket = "compile" if counter.count > before or (i == 0 and p == 0) else "compiled_calls"
        timer.spent[bucket] = timer.spent.get(bucket, 0.0) + time.perf_counter() - t0
        with timer("oracles"):
            if comp.exc is None:
                _snapshot(comp)
        if training:
            with timer("eager"):
                if eager.exc is None:
                    _backward(eager, case)
            with timer("compiled_calls"):
                if comp.exc is None:
                    _backward(comp, case)
        with timer("oracles"):
            if case.expect.write_through:
                for side in (eager, comp):
                    if side.exc is None:
                        _write_through(side)
            mismatches += _compare_call(eager, comp, case, prefix, training)
    return mismatches


def build_facts(variant: Variant) -> BuildFacts:
    return BuildFacts(torch.__version__, variant.device, variant.backend_label, variant.mode)


def _base_fields(lc: LoadedCase, variant: Variant, nodeid: str) -> dict[str, Any]:
    case = lc.case
    return {
        "case_id": lc.id,
        "variant": variant.label,
        "nodeid": nodeid,
        "behavior": case.behavior,
        "device": variant.device,
        "backend": variant.backend_label,
        "mode": variant.mode,
        "summary": case.summary,
        "upstream": case.upstream,
        "case_file": lc.display_path,
        "case_sha256": lc.sha256,
        "fingerprint": {**build_fingerprint(), **device_fingerprint(variant.device)},
    }


def error_record(lc: LoadedCase, variant: Variant, reason: str, nodeid: str = "") -> ResultRecord:
    """An `error` record for an item the runner could not finish (e.g. a timeout)."""
    return ResultRecord(status="error", reason=reason, **_base_fields(lc, variant, nodeid))


def run_variant(  # noqa: PLR0911  # one return per verdict reads plainest
    lc: LoadedCase, variant: Variant, options: RunOptions | None = None, nodeid: str = ""
) -> ResultRecord:
    """One (case, variant) -> one result record. Never raises for a case or build problem."""
    options = options or RunOptions()
    case = lc.case
    timer = Timer()
    start = time.perf_counter()
    base = _base_fields(lc, variant, nodeid)

    def done(status: str, **kw: Any) -> ResultRecord:
        timer.spent["total"] = time.perf_counter() - start
        seen = dict.fromkeys(f"{w.category.__name__}: {w.message}"[:300] for w in caught)
        return ResultRecord(status=status, durations=timer.spent, warnings=tuple(seen)[:10], **base, **kw)

    caught: list[warnings.WarningMessage] = []
    dev = probe_device(variant.device)
    if not dev.available:
        return done("skip", reason=f"device {variant.device}: {dev.reason}", skip_kind="device")
    facts = build_facts(variant)
    known: list[tuple[KnownFailure, str]] = [(k, lc.display_path) for k in case.known_failures]
    if options.extra_known_failures is not None:
        known += list(options.extra_known_failures(lc.id))
    hit = next(((k, src) for k, src in known if condition_matches(k.when, facts)), None)
    try:
        # the build's warnings are data for the record, never errors of ours (pytest may run
        # with filterwarnings=error)
        fault = options.fault
        patch = fault.patch(fault) if fault is not None and fault.patch is not None else contextlib.nullcontext()
        with warnings.catch_warnings(record=True) as log, patch, isolated(case, variant):
            warnings.simplefilter("always")
            try:
                outcome = execute(lc, variant, timer, options.fault, options.probe)
            finally:
                caught.extend(log)
    except FeatureUnavailable as exc:
        return done("skip", reason=str(exc), skip_kind="feature")
    except FaultNotApplicable as exc:
        return done("skip", reason=str(exc), skip_kind="fault")
    except CaseBroken as exc:
        return done("error", reason=f"case error: {exc}")
    except BaseException as exc:
        if not program_exception(exc):
            raise
        tb = "".join(traceback.format_exception(exc)[-6:])
        return done("error", reason=f"harness error: {oracles.exception_summary(exc)}\n{tb}")
    mism = tuple(m.to_json() for m in outcome.mismatches)
    kw: dict[str, Any] = {"mismatches": mism, "compile_counts": outcome.compile_counts, "calls": outcome.calls,
                          "probes": outcome.probes}
    failed = bool(outcome.mismatches)
    if hit is not None:
        kf, src = hit
        kw["known_failure"] = KnownFailureRef(reason=kf.reason, link=kf.link, source=src)
        other = [m for m in outcome.mismatches if kf.mismatch is not None and not re.search(kf.mismatch, m.message())]
        if failed and other:
            return done("fail", reason=f"{other[0].message()} (beyond the known failure {kf.link}, which covers "
                        f"only mismatches matching {kf.mismatch!r})", **kw)
        if failed:
            return done("xfail", reason=f"known failure: {kf.reason} ({kf.link})", **kw)
        return done("xpass", reason=f"passes although declared a known failure ({kf.link}); retire the "
                    f"expectation in {src}", **kw)
    if failed:
        first = outcome.mismatches[0].message()
        more = f" (+{len(outcome.mismatches) - 1} more)" if len(outcome.mismatches) > 1 else ""
        return done("fail", reason=first + more, **kw)
    return done("pass", **kw)
