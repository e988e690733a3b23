"""Compiled regions in the program's terms: how many graphs a pass compiles and, for each,
what its inputs and outputs are (see GraphValue), for the internals probe."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from conformance.core.build import BuiltInputs, tensors_of
from conformance.core.compile import CountingBackend
from conformance.core.entries import TRACED_GRAPH_LOG, TRACED_GRAPH_MESSAGE
from conformance.core.state import is_subclass
from conformance.probe.capture import arrived, capture_generated_sources, capturing
from conformance.probe.region import OutputSample, TraceFacts
from conformance.results import GraphValue, Symbolic
from conformance.schema.generated import CONTEXT_GUARD_ARTIFACTS, NODE_META_ARTIFACTS
from reference_impl.subclass_wrapper import subclass_meta_of

FW_COMPILER_NODE_META, DYNAMO_GRAPH_NODE_META = NODE_META_ARTIFACTS
AOTAUTOGRAD_GUARDS, DYNAMO_SHAPE_ENV_GUARDS = CONTEXT_GUARD_ARTIFACTS


def _version(t: torch.Tensor) -> int | None:
    try:
        return t._version
    except RuntimeError:  # an inference tensor (made under inference_mode) has no version counter
        return None


@dataclass
class CompiledRegion:
    """One graph dynamo handed the backend, in the program's terms: the call that compiled it, its
    inputs (see GraphValue), its outputs' symbolic dims and requires_grad as traced, samples of
    what it returned on its first call, whether the program also ran outside it during that call
    (`partial`), the sources generated while it compiled (`capture`, when a capture is active), where
    its sources start in the whole capture (`arrived`: an entry without dynamo generates its wrapper
    after the backend returns), and whether the backend raised (`failed`: dynamo retries such a
    compile differently)."""

    call: int
    inputs: tuple[GraphValue, ...]
    trace: TraceFacts = field(default_factory=TraceFacts)
    output_symbolic: tuple[Symbolic, ...] | None = None
    output_requires_grad: tuple[bool, ...] | None = None
    output_samples: tuple[Any, ...] | None = None
    partial: bool = False
    capture: Any = None
    arrived: int = 0
    failed: bool = False


class CompileCounter(CountingBackend):
    """A backend wrapper that counts the graphs dynamo hands to the backend and records, for
    each, what its region is in the program's terms (see GraphValue): its inputs (the graph
    module's lifted parameters, then the example inputs, identified by identity), which
    call compiled it, samples of its outputs on their first call, whether the program also
    ran outside the region during that call (`partial`: another graph in the same call, or
    program inputs changed before the graph ran or after it returned), and, while a capture
    is active, the sources generated during this compile alone."""

    def __init__(self, inner: Callable[..., Any]) -> None:
        super().__init__(inner)
        self.calls = 0
        self._current: BuiltInputs | None = None
        self._states: dict[int, Any] = {}
        self._sampled: int | None = None
        self.regions: list[CompiledRegion] = []  # one per compile, in order
        self._contexts: list[tuple[Any, Any]] = []  # each compile of the call in progress: its contexts

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
            self.regions[self._sampled].partial = True  # the program changed its inputs after the graph
        for compile_context, tracing_context in self._contexts:
            _log_guards(compile_context, tracing_context)
        self._contexts.clear()
        self._sampled = None
        self._current = None

    def _input_states(self) -> dict[int, Any]:
        """Storage, geometry and version of every program tensor of the current call."""
        if self._current is None:
            return {}
        out: dict[int, Any] = {}
        for t in tensors_of(self._current.named).values():
            try:
                out[id(t)] = (t.untyped_storage().data_ptr(), t.size(), t.stride(), t.storage_offset(), _version(t))
            except (RuntimeError, NotImplementedError):  # a wrapper subclass has no storage
                out[id(t)] = (t.size(), t.stride(), _version(t))
        return out

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        self.backend_calls += 1
        k = len(self.regions)
        call_index = max(self.calls - 1, 0)
        # Another graph in this call, or inputs already changed: the region is not the call.
        same_call = [r for r in self.regions if r.call == call_index]
        for r in same_call:
            r.partial = True
        partial = bool(same_call) or self._input_states() != self._states
        nodes = list(gm.graph.nodes) if hasattr(gm, "graph") else []
        _log_nodes(DYNAMO_GRAPH_NODE_META, gm)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        lifted: list[GraphValue] = []
        lifted_values: list[Any] = []
        lifted_names: list[str] = []
        if isinstance(gm, torch.nn.Module):
            for name, t in (*gm.named_parameters(remove_duplicate=False), *gm.named_buffers(remove_duplicate=False)):
                lifted_names.append(name)
                found = self._describe(t)
                lifted.append(GraphValue(kind="param", name=found.name, index=found.index, symbolic=self._symbolic(t)))
                lifted_values.append(t)
        described = []
        for i, e in enumerate(example_inputs):
            g = self._describe(e)
            fake = placeholders[i].meta.get("example_value") if i < len(placeholders) else None
            described.append(g.model_copy(update={"symbolic": self._symbolic(fake)}))
        region = CompiledRegion(call_index, (*lifted, *described), partial=partial, arrived=arrived())
        self.regions.append(region)
        fakes = [p.meta.get("example_value") for p in placeholders]
        outs = [n for n in nodes if n.op == "output"]
        examples: list[Any] = []
        if outs:
            values = outs[0].args[0] if isinstance(outs[0].args[0], tuple | list) else (outs[0].args[0],)
            examples = [getattr(v, "meta", {}).get("example_value") for v in values]
            region.output_symbolic = tuple(self._symbolic(e) for e in examples)
            region.output_requires_grad = tuple(isinstance(e, torch.Tensor) and bool(e.requires_grad) for e in examples)
        written, restrided = _written_by_graph(lifted_names, placeholders, nodes)
        values_in = zip(region.inputs, [*lifted_values, *example_inputs], strict=False)
        region.trace = TraceFacts(
            unseen_inputs={k: subclass_meta_of(v) for k, (g, v) in enumerate(values_in)
                           if g.name is None and is_subclass(v)},
            output_aliases=_aliases(examples, fakes, len(lifted)),
            output_subclasses=_subclasses(examples),
            mutated=_mutated(fakes, len(lifted), written),
            metadata_mutated=_reshaped(fakes, example_inputs, len(lifted)),
            requires_grad=frozenset(k for k, t in enumerate((*lifted_values, *fakes))
                                    if isinstance(t, torch.Tensor) and t.requires_grad),
            written=written,
            restrided_only=restrided,
        )
        # a failed compile's sources (dynamo retries it specialised) stay with it, apart from any
        # wrapper in use
        region.failed = True
        self._contexts.append(_contexts())
        with contextlib.ExitStack() as stack:
            region.capture = stack.enter_context(capture_generated_sources(warn=False)) if capturing() else None
            compiled = self.inner(gm, example_inputs, **kwargs)
        region.failed = False
        self.count += 1
        return self._sampling(compiled, k)

    def _sampling(self, compiled: Any, k: int) -> Any:
        """`compiled`, recording samples of what it returns on its first call."""
        region = self.regions[k]
        counter = self

        @functools.wraps(compiled)
        def call(*args: Any, **kwargs: Any) -> Any:
            out = compiled(*args, **kwargs)
            if region.output_samples is None:
                values = out if isinstance(out, tuple | list) else (out,)
                region.output_samples = tuple(OutputSample.of(v) for v in values)
                counter._sampled = k
                counter._states = counter._input_states()
            return out

        return call

    def _describe(self, value: Any) -> GraphValue:
        if self.current is not None:
            tensors = tensors_of(self.current.named)
            for name, t in tensors.items():
                if t is value:
                    index = next((i for i, a in enumerate(self.current.args) if a is t), None)
                    return GraphValue(kind="input", name=name, index=index)
        if isinstance(value, torch.SymInt | int):
            return GraphValue(kind="symint")
        if isinstance(value, torch.SymFloat | float):
            return GraphValue(kind="symfloat")
        return GraphValue(kind="tensor" if isinstance(value, torch.Tensor) else type(value).__name__)

    @staticmethod
    def _symbolic(value: Any, path: str = "") -> Symbolic:
        """Symbolic size/stride dims of a (fake) tensor, per subclass attribute path."""
        if not isinstance(value, torch.Tensor):
            return ()
        size: list[object] = list(value.size())
        stride: list[object] = list(value.stride())
        sizes = tuple(d for d, x in enumerate(size) if _free(x))
        strides = tuple(d for d, x in enumerate(stride) if _free(x))
        out: Symbolic = (
            ((path, sizes, strides),) if sizes or strides else ()
        )
        if is_subclass(value):
            names, _ = type(value).__tensor_flatten__(value)  # type: ignore[attr-defined]  # subclass protocol
            for n in names:
                out += CompileCounter._symbolic(getattr(value, n), f"{path}.{n}" if path else n)
        return out


def _free(d: object) -> bool:
    """A symbolic dim the trace left free: one a guard pinned to a constant (``view(3, 2, 4)``
    of a dynamic size 24) is passed to the graph as no SymInt."""
    if not isinstance(d, torch.SymInt):
        return False
    try:
        return not d.node.shape_env.replace(d.node.expr).is_number
    except AttributeError:  # internals moved: keep what the value says
        return True


def _aliases(outputs: list[Any], inputs: list[Any], offset: int) -> dict[int, Any]:
    """Per graph output that is a graph input or a view of one in dynamo's trace (fake
    values, eager semantics): that input's region slot and the view's geometry (``None``:
    the input itself). Concrete geometry only; a wrapper subclass by its first inner tensor."""
    def storage(t: Any) -> Any:
        if not isinstance(t, torch.Tensor):
            return None
        if is_subclass(t):  # a wrapper aliases what its first inner tensor does
            names, _ = type(t).__tensor_flatten__(t)  # type: ignore[attr-defined]  # subclass protocol
            return storage(getattr(t, names[0])) if names else None
        try:
            return StorageWeakRef(t.untyped_storage())  # type: ignore[no-untyped-call]  # torch leaves it unannotated
        except (RuntimeError, NotImplementedError, AttributeError):
            return None

    found: dict[int, Any] = {}
    in_storages = [storage(t) for t in inputs]
    for j, out in enumerate(outputs):
        st = storage(out)
        for i, t in enumerate(inputs):
            if isinstance(out, torch.Tensor) and out is t:
                found[j] = (offset + i, None)
                break
            if st is not None and in_storages[i] is not None and in_storages[i] == st:
                geometry = (tuple(out.size()), tuple(out.stride()), out.storage_offset())
                if all(isinstance(x, int) for x in (*geometry[0], *geometry[1], geometry[2])):
                    found[j] = (offset + i, geometry)
                break
    return found


def _written_by_graph(lifted: list[str], placeholders: list[Any], nodes: list[Any]) -> tuple[frozenset[int],
                                                                                              frozenset[int]]:
    """Region slots an in-place call of dynamo's graph takes as its target (``p.add_``,
    ``torch._foreach_add_([p, q], ...)``, an item assignment), the ``lifted`` parameters (by attribute name) first:
    those have no fake value whose version could tell, and a fake's version does not move
    under every such op; and of those, the ones only restrided (every such call one of RESTRIDING)."""
    index: dict[Any, int] = {p: len(lifted) + i for i, p in enumerate(placeholders)}
    for n in nodes:
        if n.op == "get_attr" and n.target in lifted:
            index[n] = lifted.index(n.target)
    found: set[int] = set()
    data: set[int] = set()
    for n in nodes:
        if n.op not in ("call_method", "call_function") or not n.args:
            continue
        kernel = {index[t] for t in _kernel_writes(n) if t in index}
        found |= kernel
        data |= kernel
        name = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
        name = name.split(".")[0]  # an ATen overload: as_strided_.default
        augmented = n.target in _AUGMENTED and _is_tensor(n.args[0])
        if not augmented and (not name.endswith("_") or (name.startswith("_") and not name.startswith("_foreach_"))):
            continue
        first = n.args[0]
        targets = {index[t] for t in (first if isinstance(first, list | tuple) else (first,)) if t in index}
        found |= targets
        if name not in RESTRIDING:
            data |= targets
    return frozenset(found), frozenset(found - data)


# In-place calls that change only a tensor's size, stride or offset, never its data or storage.
RESTRIDING = frozenset({"as_strided_", "t_", "transpose_", "squeeze_", "unsqueeze_", "swapdims_", "swapaxes_"})


# Augmented and item assignments, in place on a tensor.
_AUGMENTED = frozenset({
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
    operator.ipow, operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift,
    operator.setitem,
})


def _is_tensor(node: Any) -> bool:
    """A graph node whose value is a tensor in dynamo's trace (a get_attr: a lifted parameter
    or buffer)."""
    if getattr(node, "op", None) == "get_attr":
        return True
    return isinstance(getattr(node, "meta", {}).get("example_value"), torch.Tensor)


# Out-of-place calls whose kernel writes some arguments in place (no ``_`` in the name, no
# version bump of a fake value): per function, the training flag's position and keyword, and
# the written arguments' positions and keywords.
_KERNEL_WRITES: dict[Any, tuple[tuple[int, str], tuple[tuple[int, str], ...]]] = {
    torch.nn.functional.batch_norm: ((5, "training"), ((1, "running_mean"), (2, "running_var"))),
    torch.batch_norm: ((5, "training"), ((3, "running_mean"), (4, "running_var"))),
}


def _kernel_writes(node: Any) -> list[Any]:
    """The arguments a call of dynamo's graph writes without being in-place by name: batch
    norm's running statistics when it trains."""
    spec = _KERNEL_WRITES.get(node.target) if node.op == "call_function" else None
    if spec is None:
        return []

    def arg(position: int, keyword: str) -> Any:
        return node.args[position] if len(node.args) > position else node.kwargs.get(keyword)

    (flag_at, flag), written = spec
    return [arg(*w) for w in written] if arg(flag_at, flag) is True else []


def _mutated(inputs: list[Any], offset: int, written: frozenset[int] = frozenset()) -> frozenset[int] | None:
    """Region inputs an in-place op of dynamo's trace wrote to: a fake value's version moves
    under every op the trace ran on it (those dynamo ran outside the graph before a break
    included, so this may say more than the graph writes); ``written`` (region slots) are the
    targets of the graph's in-place calls (``None`` when a value is missing)."""
    if any(not isinstance(t, torch.Tensor) and t is not None and not isinstance(t, int | float | torch.SymInt
                                                                                  | torch.SymFloat) for t in inputs):
        return None
    try:
        return written | frozenset(offset + i for i, t in enumerate(inputs)
                                   if isinstance(t, torch.Tensor) and t._version > 0)
    except (RuntimeError, NotImplementedError):
        return None


def _reshaped(fakes: list[Any], reals: Sequence[Any], offset: int) -> frozenset[int] | None:
    """Region inputs whose size, stride or offset dynamo's trace changed: the fake value ends
    as the trace left it, the real one is as the call received it (``None`` where a symbolic
    geometry would need a guard to compare)."""
    found = set()
    for i, (fake, real) in enumerate(zip(fakes, reals, strict=False)):
        if not isinstance(fake, torch.Tensor) or not isinstance(real, torch.Tensor):
            continue
        try:
            geometry = (*fake.size(), *fake.stride(), fake.storage_offset())
        except (RuntimeError, NotImplementedError):
            return None
        if not all(isinstance(d, int) for d in geometry):
            return None
        if (tuple(fake.size()), tuple(fake.stride()), fake.storage_offset()) != (
            tuple(real.size()), tuple(real.stride()), real.storage_offset()
        ):
            found.add(offset + i)
    return frozenset(found)


def _subclasses(outputs: list[Any]) -> dict[int, Any]:
    """The subclass structure of each wrapper-subclass output in dynamo's trace (concrete
    sizes only: a symbolic one is left to the signature's symbolic dims)."""
    def concrete(t: Any) -> bool:
        if not isinstance(t, torch.Tensor):
            return True
        dims = (*t.size(), *t.stride())
        if not all(isinstance(d, int) for d in dims):
            return False  # int() on a SymInt would add a guard to the trace's shape env
        if is_subclass(t):
            names, _ = type(t).__tensor_flatten__(t)  # type: ignore[attr-defined]  # subclass protocol
            return all(concrete(getattr(t, n)) for n in names)
        return True

    found: dict[int, Any] = {}
    for j, out in enumerate(outputs):
        if is_subclass(out) and concrete(out):
            try:
                found[j] = subclass_meta_of(out)
            except (TypeError, RuntimeError, NotImplementedError):
                continue
    return found


class _AotCounter(CompileCounter):
    """aot_function's forward compiler sees the flattened program inputs in order. It runs
    inside AOTAutograd, before the wrappers are generated: no per-compile capture here, only where
    the compile's sources start in the whole capture (`arrived`)."""

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        self.count += 1
        self.backend_calls += 1
        args = self.current.args if self.current is not None else []
        self.regions.append(CompiledRegion(max(self.calls - 1, 0), tuple(GraphValue(kind="input", index=i)
                                                                          for i in range(len(args))),
                                           arrived=arrived()))
        _log_nodes(FW_COMPILER_NODE_META, gm)
        return self.inner(gm, example_inputs, **kwargs)


def _log_nodes(artifact: str, gm: Any) -> None:
    """Each node of the graph a wrapped compiler is handed, as the capture keeps it (NODE_META_ARTIFACTS)."""
    if TRACED_GRAPH_LOG.isEnabledFor(logging.DEBUG) and hasattr(gm, "graph"):  # only while a capture listens
        nodes = "\n".join(f"{n.op} {n.name}: {', '.join(sorted(map(str, n.meta)))}" for n in gm.graph.nodes)
        TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, artifact, nodes)


def _contexts() -> tuple[Any, Any]:
    """The compile's CompileContext and TracingContext, where the build has them: dynamo fills in their guards after
    the backend returns, so they are read when the call ends (as upstream's backends keep them to read later)."""
    try:
        from torch._guards import CompileContext, TracingContext  # guarded: private, absent on some builds

        return CompileContext.try_get(), TracingContext.try_get()
    except (ImportError, AttributeError, RuntimeError):
        return None, None


def _source_name(source: Any) -> str:
    name = getattr(source, "name", None)
    try:
        return str(name() if callable(name) else name) if name is not None else repr(source)
    except Exception:  # a source that cannot name itself is shown as it prints
        return repr(source)


def _guard_line(guard: Any) -> str:
    """`StorageOverlap(overlapping_sources=[a, b], non_overlapping_sources=[c])`: a source by its name."""
    if not dataclasses.is_dataclass(guard):
        return repr(guard)
    parts = []
    for f in dataclasses.fields(guard):
        value = getattr(guard, f.name, None)
        shown = (f"[{', '.join(map(_source_name, value))}]" if isinstance(value, list | tuple)
                 else _source_name(value))
        parts.append(f"{f.name}={shown}")
    return f"{type(guard).__name__}({', '.join(parts)})"


def _lines(items: Iterable[str]) -> str:
    """One line per item, whatever line breaks an item's text holds."""
    return "\n".join(" ".join(item.splitlines()) for item in items)


def _log_guards(compile_context: Any, tracing_context: Any) -> None:
    """What upstream's backends read off the compile's contexts, once the call that compiled ends: the TracingContext's
    AOTAutograd guards (AOTAUTOGRAD_GUARDS) and the CompileContext's ShapeEnv guards (DYNAMO_SHAPE_ENV_GUARDS)."""
    if not TRACED_GRAPH_LOG.isEnabledFor(logging.DEBUG):  # only while a capture listens
        return
    guards = getattr(getattr(tracing_context, "guards_context", None), "aotautograd_guards", None)
    if isinstance(guards, list):
        TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, AOTAUTOGRAD_GUARDS, _lines(map(_guard_line, guards)))
    shape = getattr(compile_context, "shape_env_guards", None)
    if isinstance(shape, list):
        TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, DYNAMO_SHAPE_ENV_GUARDS, _lines(map(str, shape)))


def counting(inner: Callable[..., Any], aot: bool) -> CompileCounter:
    """The region-recording counter for an entry point (aot_function's sees the program's inputs)."""
    return _AotCounter(inner) if aot else CompileCounter(inner)
