"""The four tables of ``torch-conformance bench`` (issue 7), measured on the installed build.

==================  ==================================================================
table               what is timed, per row
==================  ==================================================================
runtime_wrapper     the orchestration step alone: reference interpreted loop, reference
                    codegen, and the build's own ``_runtime_wrapper``, all around the same
                    trivial compiled graph (preset outputs) and no-op epilogues
backward_unwrap     the backward prologue's unwrap of N plain saved args: reference
                    ``isinstance`` loop, reference codegen, the build's ``unwrap_fn``
subclass_wrapper    end to end: one compiled (aot_eager) call on a TwoTensor / nested
                    TwoTensor; beside it the wrapper step alone (build ``inner_fn`` vs
                    the reference loop) and the end-to-end ratio that step implies
mutation_epilogue   end to end: one aot_function call (nop compilers) mutating k
                    inputs; an A/A run of the same call gives the noise floor; the
                    epilogue alone (build ``_apply_mutations`` vs the reference loop)
                    gives the effect expected end to end, and whether it exceeds the noise
==================  ==================================================================

On one build only the build's *own* code is real; its "before" is the reference's
interpreted form of the same behaviour. The real before/after of a build's code is
``torch-conformance bench compare OLD.json NEW.json`` between two builds.
"""

from __future__ import annotations

import contextlib
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.behaviors import BACKWARD_UNWRAP, MUTATION_EPILOGUE, RUNTIME_WRAPPER, SUBCLASS_WRAPPER, Behavior
from conformance.bench import published as pub
from conformance.bench.generated import BuildFunction, capture_sources, exec_generated, find_def
from conformance.bench.timing import Ratio, Settings, Stats, measure_interleaved, ratio
from reference_impl import backward_unwrap as bu
from reference_impl import mutation_epilogue as me
from reference_impl import runtime_wrapper as rw
from reference_impl import subclass_wrapper as sw
from reference_impl.runtime_wrapper import as_list
from reference_impl.subclass_wrapper import is_wrapper_subclass

__all__ = ["TABLES", "TABLE_IDS", "BenchTable", "Row", "Table", "estimate_ratio", "run_tables"]


@dataclass
class Row:
    id: str
    label: str
    forms: dict[str, Stats | None]
    published: pub.Published
    ratios: dict[str, Ratio] = field(default_factory=dict)
    headline: str | None = None
    build: BuildFunction | None = None
    notes: list[str] = field(default_factory=list)
    verdict: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "forms": {k: (v.to_json() if v is not None else None) for k, v in self.forms.items()},
            "ratios": {k: v.to_json() for k, v in self.ratios.items()},
            "headline": self.headline,
            "published": self.published.to_json(),
            "build": self.build.to_json() if self.build is not None else None,
            "notes": list(self.notes),
            "verdict": self.verdict,
        }


@dataclass
class Table:
    id: str
    title: str
    what: str
    form_labels: dict[str, str]
    rows: list[Row] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "what": self.what, "unit": "us/call",
                "form_labels": dict(self.form_labels), "rows": [r.to_json() for r in self.rows]}


def estimate_ratio(e2e: Stats, step_after: Stats, step_before: Stats, *, resamples: int = 2000,
                   seed: int = 0) -> Ratio:
    """End-to-end before/after implied by swapping one step: ``(E - after + before) / E``,
    with a seeded bootstrap 95 % interval over the three sets of repeats."""

    def value(e: float, a: float, b: float) -> float:
        return (e - a + b) / e if e > 0 else math.inf

    point = value(e2e.median, step_after.median, step_before.median)
    rng = random.Random(seed)  # noqa: S311  # a reproducible bootstrap, not cryptography
    draws = sorted(
        value(
            statistics.median(rng.choices(e2e.samples, k=len(e2e.samples))),
            statistics.median(rng.choices(step_after.samples, k=len(step_after.samples))),
            statistics.median(rng.choices(step_before.samples, k=len(step_before.samples))),
        )
        for _ in range(resamples)
    )
    return Ratio(point, draws[int(0.025 * (resamples - 1))], draws[int(0.975 * (resamples - 1))])


def _noop0() -> None:
    return None


def _noop2(a: object, b: object) -> None:
    return None


def _passthrough(orig_inputs: object, fw_outs: Any) -> Any:
    return fw_outs


def _reset() -> None:
    import torch._dynamo  # lazy: start-up

    torch._dynamo.reset()


def _program(source: str, name: str = "f") -> Callable[..., Any]:
    namespace: dict[str, Any] = {"torch": torch}
    exec(compile(source, f"<bench program {name}>", "exec"), namespace)
    fn: Callable[..., Any] = namespace[name]
    return fn


# -- 1. runtime wrapper orchestration ---------------------------------------------------


def orchestration_source(aliases: int, mutations: int, nargs: int) -> str:
    """A program with ``nargs`` inputs, the first ``mutations`` mutated in place, ``aliases``
    outputs that are views of the next inputs, and one plain output."""
    if aliases + mutations > nargs:
        raise ValueError("aliases + mutations must not exceed nargs")
    params = ", ".join(f"a{i}" for i in range(nargs))
    body = [f"    a{i}.add_(1)" for i in range(mutations)]
    outs = [f"a{mutations + i}.view(-1)" for i in range(aliases)]
    outs.append("(" + " + ".join(f"a{i}" for i in range(nargs)) + ").sum()")
    return f"def f({params}):\n" + "".join(line + "\n" for line in body) + f"    return ({', '.join(outs)},)\n"


# What the build's _runtime_wrapper delegates to, made trivial: the step alone is timed.
ORCHESTRATION_STUBS: dict[str, Any] = {
    "torch": torch,
    "_apply_mutations_": _noop2,
    "_replay_aliases_": _passthrough,
    "_increment_version_": torch.autograd.graph.increment_version,
    "_normalize_as_list_": as_list,
    "_mark_dynamic_": _noop2,
}
ORCHESTRATION_PATTERNS: tuple[tuple[str, Any], ...] = ((r"_dyn_dims_\d+", frozenset()),)


def build_runtime_wrapper(aliases: int, mutations: int, nargs: int) -> BuildFunction:
    """Compile the row's program (aot_function, inference, runtime epilogue) and exec the
    build's ``_runtime_wrapper`` with trivial epilogues (see Note [Timing the build's
    generated code])."""
    from functorch.compile import (  # type: ignore[attr-defined]  # re-exported without __all__
        aot_function,  # lazy: start-up
        nop,
    )

    fn = _program(orchestration_source(aliases, mutations, nargs))
    args = [torch.randn(4) for _ in range(nargs)]

    def program() -> None:
        compiled = aot_function(fn, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False)
        compiled(*args)

    cap = capture_sources(program)
    found = find_def(cap, "_runtime_wrapper")
    if found is None:
        return BuildFunction("absent", seen=cap.names(), reason="the build generated no _runtime_wrapper")
    artifact, source = found
    built = exec_generated(source, "_runtime_wrapper", ORCHESTRATION_STUBS, ORCHESTRATION_PATTERNS,
                           artifact=artifact)
    built.seen = cap.names()
    return built


def orchestration_row(aliases: int, mutations: int, nargs: int, settings: Settings) -> Row:
    outputs = (
        *(rw.OutputSpec(rw.AliasKind.ALIAS_OF_INPUT, mutations + i) for i in range(aliases)),
        rw.OutputSpec(),
    )
    meta = rw.RuntimeWrapperMeta(num_inputs=nargs, mutated_runtime=tuple(range(mutations)), outputs=outputs)
    args = [torch.empty(0) for _ in range(nargs)]
    results = [torch.empty(0) for _ in range(meta.expected_outputs)]

    def compiled_fn(a: list[Any]) -> list[Any]:
        return results

    ref = rw.compile_runtime_wrapper(meta, apply_mutations=_noop2, replay_aliases=_passthrough)
    build = build_runtime_wrapper(aliases, mutations, nargs)
    forms: dict[str, Callable[[], Any]] = {
        "interpreted": lambda: rw.run_runtime_wrapper_interpreted(
            meta, compiled_fn, list(args), apply_mutations=_noop2, replay_aliases=_passthrough
        ),
        "reference_codegen": lambda: ref(compiled_fn, contextlib.nullcontext, _noop0, list(args)),
    }
    notes = []
    if build.fn is not None:
        bfn = build.fn
        try:
            out = bfn(compiled_fn, contextlib.nullcontext, _noop0, list(args))
            if len(out) != aliases + 1:
                raise AssertionError(f"returned {len(out)} outputs, expected {aliases + 1}")
        except Exception as exc:
            build.status, build.fn = "unusable", None
            build.reason = f"calling it with the row's stubs failed: {type(exc).__name__}: {exc}"
        else:
            forms["build"] = lambda: bfn(compiled_fn, contextlib.nullcontext, _noop0, list(args))
    if build.fn is None:
        notes.append(f"build: {build.status}" + (f" ({build.reason})" if build.reason else ""))
    row = _timed_row(
        f"{aliases}a{mutations}m{nargs}n",
        f"{aliases} alias, {mutations} mut, {nargs} args",
        forms,
        ("interpreted", "reference_codegen", "build"),
        pub.ORCHESTRATION[(aliases, mutations, nargs)],
        settings,
    )
    row.build = build
    row.notes += notes
    return row


def _timed_row(  # noqa: PLR0917  # one row's facets, positional like the table's columns
    row_id: str,
    label: str,
    forms: dict[str, Callable[[], Any]],
    order: Sequence[str],
    published: pub.Published,
    settings: Settings,
) -> Row:
    names = [n for n in order if n in forms]
    stats = dict(zip(names, measure_interleaved([forms[n] for n in names], settings), strict=True))
    row = Row(row_id, label, {n: stats.get(n) for n in order}, published)
    before = stats["interpreted"]
    for after in ("reference_codegen", "build"):
        if after in stats:
            row.ratios[f"interpreted/{after}"] = ratio(before, stats[after])
    row.headline = "interpreted/build" if "build" in stats else "interpreted/reference_codegen"
    return row


# -- 2. backward unwrap -----------------------------------------------------------------


def _two_tensor(nested: bool, requires_grad: bool) -> torch.Tensor:
    from conformance.core.build import two_tensor_type  # lazy: start-up

    tt = two_tensor_type()
    gen = torch.Generator().manual_seed(0)

    def leaf() -> torch.Tensor:
        return torch.randn(4, generator=gen).requires_grad_(requires_grad)

    if nested:
        return tt(tt(leaf(), leaf()), tt(leaf(), leaf()))
    return tt(leaf(), leaf())


def _subclass_fn(x: torch.Tensor) -> torch.Tensor:
    return x.sin() * 2


def build_unwrap() -> BuildFunction:
    """The build's backward ``unwrap_fn``, from a TwoTensor forward + backward."""
    _reset()
    x = _two_tensor(nested=False, requires_grad=True)

    def program() -> None:
        out = torch.compile(_subclass_fn, backend="aot_eager")(x)
        torch.autograd.backward([out.sum()])

    try:
        cap = capture_sources(program)
    finally:
        _reset()
    found = find_def(cap, "unwrap_fn")
    if found is None:
        return BuildFunction("absent", seen=cap.names(), reason="the build generated no unwrap_fn")
    built = exec_generated(found[1], "unwrap_fn", {"torch": torch}, artifact=found[0])
    built.seen = cap.names()
    return built


def unwrap_rows(counts: Sequence[int], settings: Settings) -> list[Row]:
    build = build_unwrap()
    rows = []
    for n in counts:
        args = [torch.empty(0) for _ in range(n)]
        ref = bu.compile_backward_unwrap(bu.BackwardUnwrapMeta((bu.SavedKind.TENSOR,) * n))
        forms: dict[str, Callable[[], Any]] = {
            "interpreted": lambda args=args: bu.unwrap_interpreted(args),  # type: ignore[misc]  # default binds the loop value
            "reference_codegen": lambda args=args, ref=ref: ref(args),  # type: ignore[misc]  # default binds the loop value
        }
        if build.fn is not None:
            bfn = build.fn
            if len(bfn(args)) != n:
                raise AssertionError("the build's unwrap_fn changed the argument count")
            forms["build"] = lambda args=args, bfn=bfn: bfn(args)  # type: ignore[misc]  # default binds the loop value
        row = _timed_row(f"{n}args", f"{n} args", forms, ("interpreted", "reference_codegen", "build"),
                         pub.UNWRAP[n], settings)
        row.build = build
        if build.fn is None:
            row.notes.append(f"build: {build.status}" + (f" ({build.reason})" if build.reason else ""))
        else:
            row.notes.append("the build's unwrap_fn was generated for a TwoTensor backward; it is the same "
                             "identity for any number of plain saved args")
        rows.append(row)
    return rows


# -- 3. subclass wrapper end to end -------------------------------------------------------


def _leaves(t: Any) -> list[Any]:
    if not is_wrapper_subclass(t):
        return [t]
    names, _ = t.__tensor_flatten__()
    return [leaf for n in names for leaf in _leaves(getattr(t, n))]


def subclass_row(nested: bool, settings: Settings) -> Row:
    from conformance.core.build import two_tensor_type  # lazy: start-up

    tt = two_tensor_type()
    _reset()
    x = _two_tensor(nested=nested, requires_grad=False)
    compiled = torch.compile(_subclass_fn, backend="aot_eager")
    box: list[Any] = []
    cap = capture_sources(lambda: box.append(compiled(x)))
    out = box[0]
    inner_outs = _leaves(out)

    def graph(args: list[Any]) -> list[Any]:
        return inner_outs

    _, ctx = x.__tensor_flatten__()  # type: ignore[attr-defined]  # subclass protocol
    meta = sw.SubclassWrapperMeta(inputs=(sw.subclass_meta_of(x),), outputs=(sw.subclass_meta_of(out),))
    ref = sw.compile_subclass_wrapper(meta, graph)
    found = find_def(cap, "inner_fn")
    if found is None:
        build = BuildFunction("absent", seen=cap.names(), reason="the build generated no inner_fn")
    else:
        build = exec_generated(
            found[1], "inner_fn", {"torch": torch, "compiled_fn": graph},
            [(r"_expected_type_\d+", tt), (r"_subclass_type_\d+", tt), (r"_meta_\d+", ctx)],
            artifact=found[0],
        )
        build.seen = cap.names()
    step: dict[str, Callable[[], Any]] = {
        "interpreted": lambda: sw.run_subclass_wrapper_interpreted(meta, graph, [x]),
        "reference_codegen": lambda: ref([x]),
    }
    if build.fn is not None:
        bfn = build.fn
        try:
            got = bfn([x])
            if type(got[0]) is not type(out):
                raise AssertionError(f"returned {type(got[0]).__name__}, expected {type(out).__name__}")
        except Exception as exc:
            build.status, build.fn = "unusable", None
            build.reason = f"calling it with the row's stubs failed: {type(exc).__name__}: {exc}"
        else:
            step["build"] = lambda: bfn([x])
    names = ["end_to_end", *step]
    fns = [lambda: compiled(x), *step.values()]
    stats = dict(zip(names, measure_interleaved(fns, settings), strict=True))
    _reset()
    key = "nested_twotensor" if nested else "twotensor"
    row = Row(key, "nested TwoTensor" if nested else "TwoTensor",
              {n: stats.get(n) for n in ("end_to_end", "interpreted", "reference_codegen", "build")},
              pub.SUBCLASS[key], build=build)
    if "build" in stats:
        row.ratios["step interpreted/build"] = ratio(stats["interpreted"], stats["build"])
        row.ratios["end_to_end estimated"] = estimate_ratio(stats["end_to_end"], stats["build"],
                                                            stats["interpreted"])
        row.headline = "end_to_end estimated"
        row.notes.append("end_to_end estimated = (E - build step + interpreted step) / E: this build with its "
                         "generated inner_fn replaced by the interpreted loop; bench compare of two builds gives "
                         "the real before/after")
    else:
        row.ratios["step interpreted/reference_codegen"] = ratio(stats["interpreted"], stats["reference_codegen"])
        row.notes.append(f"build: {build.status}" + (f" ({build.reason})" if build.reason else ""))
    return row


# -- 4. mutation epilogue end to end -----------------------------------------------------


def mutation_source(k: int) -> str:
    params = ", ".join(["w", *(f"x{i}" for i in range(k))])
    body = "".join(f"    x{i}.add_(1)\n" for i in range(k))
    return f"def f({params}):\n{body}    return w * x0\n"


def mutation_row(k: int, settings: Settings) -> Row:
    from functorch.compile import (  # type: ignore[attr-defined]  # re-exported without __all__
        aot_function,  # lazy: start-up
        nop,
    )

    gen = torch.Generator().manual_seed(0)
    w = torch.randn(4, generator=gen)
    xs = [torch.randn(4, generator=gen) for _ in range(k)]
    # torch.compile keeps inference mutations in the graph and, on 2.13, data mutations of
    # inputs that do not require grad too: aot_function without kiim is the path that always
    # runs the epilogue.
    compiled = aot_function(_program(mutation_source(k)), fw_compiler=nop, bw_compiler=nop,
                            keep_inference_input_mutations=False)
    cap = capture_sources(lambda: compiled(w, *xs))
    found = find_def(cap, "_apply_mutations")
    build: BuildFunction
    if found is None:
        build = BuildFunction("absent", seen=cap.names(), reason="the build generated no _apply_mutations")
        slots: tuple[int, ...] = tuple(range(1, k + 1))
    else:
        build = exec_generated(found[1], "_apply_mutations", {"torch": torch, "_unwrap_tensoralias": me.unwrap_alias},
                               artifact=found[0])
        build.seen = cap.names()
        slots = me.structural_form(found[1]).slots
    orig = {s: torch.randn(4, generator=gen) for s in slots}
    updated = [torch.randn(4, generator=gen) for _ in slots]
    meta = me.MutationEpilogueMeta(tuple(me.InputMutation(s, mutates_data=True) for s in slots))
    ref = me.compile_mutation_epilogue(meta)
    step: dict[str, Callable[[], Any]] = {
        "interpreted": lambda: me.apply_mutations_interpreted(meta, orig, updated),
        "reference_codegen": lambda: ref(orig, updated),
    }
    if build.fn is not None:
        bfn = build.fn
        step["build"] = lambda: bfn(orig, updated)
    names = ["end_to_end", "end_to_end_again", *step]
    fns = [lambda: compiled(w, *xs), lambda: compiled(w, *xs), *step.values()]
    stats = dict(zip(names, measure_interleaved(fns, settings), strict=True))
    row = Row(f"{k}mut", f"{k} mutated input{'s' if k > 1 else ''}",
              {n: stats.get(n) for n in ("end_to_end", "end_to_end_again", "interpreted", "reference_codegen",
                                         "build")},
              pub.MUTATION_EPILOGUE, build=build)
    aa = ratio(stats["end_to_end"], stats["end_to_end_again"])
    row.ratios["A/A noise floor"] = aa
    after = stats.get("build") or stats["reference_codegen"]
    est = estimate_ratio(stats["end_to_end"], after, stats["interpreted"])
    row.ratios["end_to_end estimated"] = est
    row.headline = "end_to_end estimated"
    floor = max(abs(aa.high - 1.0), abs(1.0 - aa.low))
    effect = est.value - 1.0
    if est.low > 1.0 + floor:
        row.verdict = (f"distinguishable: estimated effect {effect:+.1%} (95% CI {est.low - 1:+.1%}.."
                       f"{est.high - 1:+.1%}) exceeds the end-to-end noise floor ±{floor:.1%} (A/A)")
    else:
        row.verdict = (f"cannot be told apart here: estimated effect {effect:+.1%} (95% CI {est.low - 1:+.1%}.."
                       f"{est.high - 1:+.1%}) is within the end-to-end noise floor ±{floor:.1%} (A/A)")
    if build.fn is None:
        row.notes.append(f"build: {build.status}" + (f" ({build.reason})" if build.reason else "")
                         + "; the estimate uses the reference codegen as 'after'")
    row.notes.append("end_to_end estimated = (E - generated epilogue + interpreted epilogue) / E")
    return row


# -- all tables ----------------------------------------------------------------------------

@dataclass(frozen=True)
class BenchTable:
    """A behaviour's table: what it times, its columns, and how its rows are measured."""

    behavior: Behavior
    title: str
    what: str
    form_labels: dict[str, str]
    rows: Callable[[Settings], list[Row]]

    def measure(self, settings: Settings) -> Table:
        return Table(self.behavior.id, self.title, self.what, dict(self.form_labels), self.rows(settings))


TABLES: tuple[BenchTable, ...] = (
    BenchTable(MUTATION_EPILOGUE, "Mutation epilogue, end to end (aot_function call, nop compilers, inference, "
               "runtime epilogue)",
               "w * x0 after x_i.add_(1) on k inputs of 4 floats; A/A = the same call timed twice, interleaved",
               {"end_to_end": "compiled call", "end_to_end_again": "compiled call (A/A)",
                "interpreted": "step: reference loop", "reference_codegen": "step: reference codegen",
                "build": "step: build's _apply_mutations"},
               lambda settings: [mutation_row(k, settings.scaled(3)) for k in (1, 4)]),
    BenchTable(RUNTIME_WRAPPER, "RuntimeWrapper orchestration step in isolation",
               "trivial compiled graph with preset outputs, no-op epilogues; args/aliases/mutations as in the row",
               {"interpreted": "reference interpreted", "reference_codegen": "reference codegen",
                "build": "build's _runtime_wrapper"},
               lambda settings: [orchestration_row(a, m, n, settings) for (a, m, n) in pub.ORCHESTRATION]),
    BenchTable(SUBCLASS_WRAPPER, "Subclass wrapper, end to end (compiled aot_eager call, inference)",
               "x.sin() * 2 on a TwoTensor of 4 floats (nested: TwoTensor of two TwoTensors); the step columns "
               "time the wrapper alone around a preset graph",
               {"end_to_end": "compiled call", "interpreted": "step: reference loop",
                "reference_codegen": "step: reference codegen", "build": "step: build's inner_fn"},
               lambda settings: [subclass_row(False, settings), subclass_row(True, settings)]),
    BenchTable(BACKWARD_UNWRAP, "Backward prologue unwrap step in isolation", "N plain saved tensors",
               {"interpreted": "isinstance loop", "reference_codegen": "reference codegen",
                "build": "build's unwrap_fn"},
               lambda settings: unwrap_rows(sorted(pub.UNWRAP), settings)),
)
TABLE_IDS: tuple[str, ...] = tuple(t.behavior.id for t in TABLES)


def run_tables(
    settings: Settings,
    only: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Table]:
    """Measure the wanted tables (all by default), in the order of :data:`TABLES`."""
    say = progress or (lambda s: None)
    tables: list[Table] = []
    grad = torch.is_grad_enabled()
    try:
        torch.set_grad_enabled(True)
        for table in TABLES:
            if only is None or table.behavior.id in only:
                say(f"measuring {table.behavior.id}")
                tables.append(table.measure(settings))
    finally:
        torch.set_grad_enabled(grad)
    return tables
