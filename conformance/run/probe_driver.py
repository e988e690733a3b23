"""The harness side of the internals probe: after a cold pass, compare what the build generated
with the reference, one compile at a time, each against the observation of the call that
compiled it and the region the counter recorded (conformance/run/compiles.py)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from conformance.behaviors import BEHAVIORS
from conformance.core.build import BuiltInputs, CallPoint, Env, build_inputs, call_points, source_line, tensors_of
from conformance.core.call import after_raises_of, around_call, backward, call, case_modes, run_action
from conformance.core.compare import matches_exception
from conformance.core.compile import make_function
from conformance.core.entry import AOT_EXPORT_MODULE, AOT_MODULE, AOT_MODULE_SIMPLIFIED, WITHOUT_DYNAMO, counts_graphs
from conformance.core.mismatch import exception_summary
from conformance.core.state import ambient, restore_ambient
from conformance.data.loader import LoadedCase
from conformance.data.variants import Variant
from conformance.probe import GraphSignature, OutputSample, match_outputs, probe_compiles
from conformance.probe.capture import CaptureResult
from conformance.probe.scalar_recompile import ScalarSweep
from conformance.results import GraphValue, ProbeRecord
from conformance.run.compiles import CompileCounter, CompiledRegion
from reference_impl.observe import Observation, flatten_outputs, observe
from reference_impl.region import UnseenAlias
from reference_impl.scalar_recompile import analyze_float_uses


def _inputs_for(lc: LoadedCase, variant: Variant, k: int, classes: dict[str, Any]) -> BuiltInputs:
    """A third, identical copy of the inputs of call `k`: where the case persists inputs or acts
    between calls, the earlier calls are replayed eagerly on it first (calls, backward, actions)."""
    points = call_points(lc.data)
    env = Env(classes)
    replay = any(s.persists for s in lc.case.inputs.values()) or any(p.before or p.after for p in points)
    for j in range(k if replay else 0):
        inputs = build_inputs(lc.data, variant.device, variant.mode, points[j], env)
        _act(lc, points[j], "before", inputs=inputs, env=env, out=env.out)
        side = call(_function_at(lc, j, classes), inputs, lc.data, env=env)
        if side.exc is not None:
            raise side.exc
        if variant.mode == "training":
            backward(side, lc.data, env=env)
        _act(lc, points[j], "after", inputs=inputs, env=env, out=side.result)
        env.out = side.result
    inputs = build_inputs(lc.data, variant.device, variant.mode, points[k], env)
    _act(lc, points[k], "before", inputs=inputs, env=env, out=env.out)
    return inputs


def _function_at(lc: LoadedCase, k: int, classes: dict[str, Any]) -> Any:
    """What call `k` calls: the program, or the classes-block function an earlier call switched to (`function`)."""
    named = [p.function for p in call_points(lc.data)[:k + 1] if p.function is not None]
    if named:
        return classes[named[-1]]
    return make_function(lc.program_source, lc.case.function_name, lc.program_filename, classes,
                         lc.case.compile.closure)


def _act(lc: LoadedCase, point: CallPoint, which: str, *, inputs: BuiltInputs, env: Env, out: Any) -> None:
    """A caller's action on the probe's eager copy; an `after` the call's `raises` declares eager raises (`at:
    after`) may raise that, and stops there as it does in the harness."""
    source = getattr(point, which)
    if source is not None:
        filename = f"<{point.where}.{which} of {lc.display_path}>"
        exc = run_action(inputs, source, filename, env=env, out=out)
        declared = after_raises_of(point) if which == "after" else None
        if exc is not None and not (declared is not None and "eager" in declared["sides"]
                                    and matches_exception(exc, declared["type"], declared["match"])):
            raise RuntimeError(f"{point.where}.{which} raised {exception_summary(exc)}{source_line(exc, filename)} "
                               "on the probe's copy")


def _observe(lc: LoadedCase, variant: Variant, k: int, classes: dict[str, Any]) -> Any:
    """The reference oracle's observation of an eager run of call `k` on a third input copy.

    Tensors the program reaches through its arguments (module parameters and buffers, an
    optimizer's state) are observed as attributes, so that a region that lifts them can be described."""
    modes = ambient()  # call k's `before:` runs here, its `after:` (which may reset them) does not
    try:
        inputs = _inputs_for(lc, variant, k, classes)
        hidden = {n: t for n, t in tensors_of(inputs.named).items() if not any(t is a for a in inputs.args)}
        with case_modes(lc.case.grad_enabled, lc.case.inference_mode), around_call(lc.data, Env(classes), inputs):
            return observe(_function_at(lc, k, classes), inputs.args, attributes=hidden)
    finally:
        restore_ambient(modes)


def scalar_sweep(lc: LoadedCase, compile_count: int) -> ScalarSweep | None:
    """The case's float sweep, as the reference predicts its compile count (``None``: no sweep)."""
    case = lc.case
    swept = [n for n, s in case.inputs.items() if s.scalar is not None and s.scalar.values is not None
             and s.scalar.type == "float"]
    if not swept or case.calls or case.first_call:
        return None
    points = call_points(lc.data)
    values = tuple({name: float(p.scalars[name]) for name in swept} for p in points)
    # a value met again reuses its graph, NaN included (a guard on a NaN float holds for NaN);
    # 0.0 and -0.0 are two values to a guard (hex tells them apart where == does not)
    distinct = {tuple("nan" if math.isnan(v) else v.hex() for v in b.values()) for b in values}
    return ScalarSweep(uses=analyze_float_uses(case.program, swept), n_values=len(distinct),
                       compile_count=compile_count, dynamic=case.compile.dynamic, values=values)


def _covers(parts: Sequence[CaptureResult], whole: CaptureResult) -> bool:
    """The per-compile captures hold every source of the whole capture that a probe reads (a
    debug artifact, such as the runnable graph of a backward compiled lazily after the
    compile returned, may lie outside them)."""
    probed = {a.name for b in BEHAVIORS for a in b.artifacts}
    found = Counter(a.name for c in parts for a in c.artifacts if a.name in probed)
    return not Counter(a.name for a in whole.artifacts if a.name in probed) - found


def _aot_function_inputs(obs: Any) -> tuple[int | str | None, ...]:
    """aot_function's graph inputs in program terms: the leaves of container arguments (each
    the observed attribute it is, else unseen), a tensor given twice once (its dedupe wrapper)."""
    named = [(a.name, a.value) for a in obs.attributes]
    seen: list[object] = []
    refs: list[int | str | None] = []
    for i, arg in enumerate(obs.raw_args):
        if isinstance(arg, dict | list | tuple):
            for leaf in flatten_outputs(arg):
                if isinstance(leaf, torch.Tensor) and not any(leaf is s for s in seen):
                    seen.append(leaf)
                    refs.append(next((n for n, v in named if v is leaf), None))
            continue
        if isinstance(arg, torch.Tensor):
            if any(arg is s for s in seen):
                continue
            seen.append(arg)
        refs.append(i)
    return tuple(refs)


MODULE_ENTRIES = (AOT_MODULE_SIMPLIFIED, AOT_MODULE, AOT_EXPORT_MODULE)


def _module_entry_inputs(obs: Any) -> tuple[int | str | None, ...]:
    """A module entry's graph inputs in program terms (Note [Module entry points]): the bound modules'
    parameters, then their buffers (each the observed attribute it is, else unseen), then the other
    arguments as aot_function sees them."""
    named = [(a.name, a.value) for a in obs.attributes]
    modules = [a for a in obs.raw_args if isinstance(a, torch.nn.Module)]
    lifted: list[torch.Tensor] = [p for m in modules for _, p in m.named_parameters(remove_duplicate=False)]
    lifted += [b for m in modules for _, b in m.named_buffers(remove_duplicate=False)]
    refs: list[int | str | None] = [next((n for n, v in named if v is t), None) for t in lifted]
    return (*refs, *(r for r in _aot_function_inputs(obs)
                     if not (isinstance(r, int) and isinstance(obs.raw_args[r], torch.nn.Module))))


def _matched_outputs(samples: Sequence[OutputSample], obs: Observation, aliases: Mapping[int, UnseenAlias],
                     needs_grad: Sequence[bool] | None, partial: bool) -> list[int | None]:
    """Which program output each graph output is (see match_outputs), with what dynamo's trace
    rules out."""

    def allowed(j: int, i: int) -> bool:
        # a program output that is one of its arguments is never a graph output: dynamo hands
        # it back from its source (so a ReLU of non-negative values is not the input beside it)
        del j
        return not any(obs.raw_outputs[i] is a for a in obs.raw_args)

    matched = list(match_outputs(samples, obs.raw_outputs, allowed))
    for j, m in enumerate(matched):
        if m is None:
            continue
        # a graph output that requires grad is not a program output that does not
        # (a loss the program returns detached after its backward)
        if needs_grad is not None and j < len(needs_grad) and needs_grad[j] \
                and not getattr(obs.raw_outputs[m], "requires_grad", False):
            matched[j] = None
        # an alias of a graph input in dynamo's trace, or any output of a region the
        # program also ran outside of (an intermediate it goes on with), is only a
        # program output it equals, not one it merely has the shape of
        if (j in aliases or partial) and not samples[j].close_to(obs.raw_outputs[m]):
            matched[j] = None
    return matched


def _frozen(lc: LoadedCase, variant: Variant, region: CompiledRegion, obs: Any) -> frozenset[int]:
    """Inductor freezing bakes in the graph module's lifted parameters (not mutated)."""
    if variant.backend != "inductor" or (lc.case.grad_enabled and not lc.case.inference_mode):
        return frozenset()
    import torch._inductor.config as inductor_config  # lazy: start-up

    if not inductor_config.freezing:
        return frozenset()
    attrs = {a.name: a.input for a in obs.attributes}
    return frozenset(
        slot
        for slot, g in enumerate(region.inputs)
        if g.kind == "param" and not (g.name in attrs and attrs[g.name].mutated)
    )


def _signature(region: CompiledRegion, obs: Any, frozen: frozenset[int]) -> tuple[GraphSignature, list[Any] | None]:
    """The region's signature for the probe, and its outputs as recorded (None before a sample)."""
    samples, trace, partial = region.output_samples, region.trace, region.partial
    outputs = None
    if samples is not None:
        symbolic, needs_grad = region.output_symbolic, region.output_requires_grad
        matched = _matched_outputs(samples, obs, trace.output_aliases, needs_grad, partial)
        outputs = tuple(
            GraphValue(
                kind="output" if m is not None else "other",
                index=m,
                symbolic=symbolic[j] if symbolic is not None and j < len(symbolic) else (),
                requires_grad=needs_grad is not None and j < len(needs_grad) and needs_grad[j],
            )
            for j, m in enumerate(matched)
        )
    # a tensor the program reaches by name but that the call created (an optimizer's state on its
    # first step) was not there to observe before it: a value the program does not see
    observed = {a.name for a in obs.attributes}
    inputs = tuple(
        GraphValue(kind="tensor", symbolic=g.symbolic)
        if g.index is None and g.name is not None and g.name not in observed else g
        for g in region.inputs
    )
    signature = GraphSignature.of(inputs, outputs, frozen=frozen, partial=partial, trace=trace)
    return signature, None if outputs is None else list(outputs)


def _entry_compiles(regions: Sequence[CompiledRegion], capture: CaptureResult) -> list[tuple[int, CaptureResult]]:
    """An entry without dynamo's compiles, each with the call that made it and what it generated: one
    compile (the whole capture), or, where calls compiled afresh (`fresh`), the capture cut where each
    compile began (its wrapper comes after its graph reaches the backend, before the next compile)."""
    if len(regions) < 2 or len({r.call for r in regions}) < len(regions):
        return [(regions[0].call if regions else 0, capture)]
    starts = [r.arrived for r in regions]
    ends = [*starts[1:], len(capture.artifacts)]
    return [(r.call, CaptureResult(artifacts=capture.artifacts[a:b], graphs=capture.graphs))
            for r, a, b in zip(regions, starts, ends, strict=True)]


def run_probe(lc: LoadedCase, variant: Variant, capture: CaptureResult, counter: CompileCounter,
              classes: dict[str, Any] | None = None) -> ProbeRecord:
    """Compare what the build generated during the cold pass with the reference (never raises).

    One comparison per compile, each with the observation of the call that compiled it and
    the region the counter recorded (GraphValue); the graph's outputs are matched with the
    observed program outputs. Sources are split per compile when the counter captured them
    so and they account for everything captured; otherwise the whole capture is compared
    with the first compile. For aot_function the region is the program's own signature.
    """
    try:
        points = call_points(lc.data)
        observed: dict[int, Any] = {}

        def observation(call: int) -> Any:
            point = min(call, len(points) - 1)
            if point not in observed:
                observed[point] = _observe(lc, variant, point, classes or {})
            return observed[point]

        def signature(k: int, obs: Any) -> Any:
            region = counter.regions[k]
            sig, outputs = _signature(region, obs, _frozen(lc, variant, region, obs))
            if outputs is not None:
                graph_outputs.append(outputs)
            return sig

        compiles: list[tuple[Any, Any, Any]] = []
        graph_outputs: list[list[dict[str, Any]]] = []
        if variant.backend in WITHOUT_DYNAMO:
            for call, part in _entry_compiles(counter.regions, capture):
                obs = observation(call)
                inputs = _module_entry_inputs(obs) if variant.backend in MODULE_ENTRIES else _aot_function_inputs(obs)
                compiles.append((part, obs, GraphSignature(inputs, tuple(range(len(obs.raw_outputs))))))
        else:
            # compile k's wrapper is captures[k]; a compile that failed generated none in use
            regions = counter.regions
            captured = [r.capture for r in regions if r.capture is not None]
            per_compile = [(k, r.capture) for k, r in enumerate(regions) if r.capture is not None and not r.failed]
            split = per_compile and len(captured) == len(regions) == counter.backend_calls
            if split and _covers(captured, capture):
                for k, c in per_compile:
                    obs = observation(regions[k].call)
                    compiles.append((c, obs, signature(k, obs)))
            else:
                obs = observation(regions[0].call if regions else 0)
                compiles.append((capture, obs, signature(0, obs) if regions else None))
        report = probe_compiles(
            compiles,
            scalar=scalar_sweep(lc, counter.count) if counts_graphs(variant.backend) else None,
            keep_input_mutations=variant.backend not in WITHOUT_DYNAMO or variant.kiim,
            seen=capture,
        )
    except Exception as exc:  # the probe informs; it must never cost the contract verdict
        return ProbeRecord(error=exception_summary(exc), seen=capture.names())
    return ProbeRecord.model_validate({
        **report.model_dump(), "graph_inputs": [list(r.inputs) for r in counter.regions],
        "graph_outputs": graph_outputs, "partial": [r.partial for r in counter.regions]})
