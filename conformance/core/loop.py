"""A whole variant: every pass and every call, eager against compiled, with fresh inputs each.

`run_passes` is the loop the harness runs and a full reproducer runs; `LoopCallbacks` is what a caller
adds around it (the harness: region recording, source capture, the probe, timing; the
self-check: faults), without the loop knowing of any of it.
"""

from __future__ import annotations

import contextlib
import functools
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from conformance.core.build import (
    BuiltInputs,
    CallPoint,
    Env,
    build_inputs,
    call_points,
    load_classes,
    source_line,
)
from conformance.core.call import (
    Side,
    act,
    after_raises_of,
    backward,
    call,
    compare_call,
    declared_raise,
    eager_must_not_raise,
    mark_dynamic,
    program_raised,
    raises_of,
    release_frames,
    run_action,
    snapshot,
    undo_write_through,
    write_through,
)
from conformance.core.checks import C, allowance_for
from conformance.core.compare import matches_exception
from conformance.core.compile import (
    CountingBackend,
    fresh_compile_caches,
    isolated,
    item_cache_key,
    make_compiled,
    make_function,
)
from conformance.core.entry import WITHOUT_DYNAMO, counts_graphs
from conformance.core.mismatch import CaseBroken, Mismatch, exception_summary
from conformance.core.spec import CallRaisesData, CaseData

# How a reproducer script exits (the short and the full one alike); 1 and 2 are Python's own
# (a crash, a bad command line), so they never mean a verdict.
REPRO_MATCHES, REPRO_DIFFERS, REPRO_CANNOT_TELL = 0, 3, 4


class LoopCallbacks:
    """Extension points of the loop; every default does nothing."""

    def program_exception(self, exc: BaseException) -> bool:
        """Whether an exception out of the program is the program's own (else it stops the run)."""
        return program_raised(exc)

    def counting(self, inner: Callable[..., Any], aot: bool) -> CountingBackend:
        """The backend wrapper that counts (and may describe) the graphs compiled."""
        return CountingBackend(inner)

    def compiled(self, compiled: Callable[..., Any]) -> Callable[..., Any]:
        """The compiled callable the loop calls (a seeded fault wraps it)."""
        return compiled

    def around_pass(self, index: int) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def loaded(self, classes: dict[str, Any]) -> None:
        """The case's classes block ran (once per variant); its names."""

    def pass_done(self, index: int, counter: CountingBackend) -> None:
        """After pass `index` (0 cold, 1 warm), with the counter of its compiles."""

    def calling(self, counter: CountingBackend, inputs: BuiltInputs | None) -> None:
        """Right before the compiled call (its inputs) and right after it (None)."""

    def timed(self, bucket: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def spent(self, bucket: str, seconds: float) -> None:
        """Time measured by the loop itself (the compiled call: `compile` or `compiled_calls`)."""


@dataclass
class Outcome:
    mismatches: list[Mismatch] = field(default_factory=list)
    compile_counts: dict[str, int | None] = field(default_factory=dict)
    calls: int = 0
    recompiles: str | None = None  # graphs compiled after the first call where expect.compiles says nothing
    allowed: list[tuple[str, Mismatch]] = field(default_factory=list)  # (allowance id, the difference it allows)
    raised: list[str] = field(default_factory=list)  # the compiled side's exceptions the case declares, per call


@dataclass(frozen=True)
class Target:
    """What a variant runs: the program and the classes block (and where their lines come
    from) on a device and backend."""

    program: str
    function: str
    filename: str
    device: str
    backend: str
    mode: str
    kiim: bool = False
    classes: str | None = None
    classes_filename: str = "<classes>"
    closure: tuple[str, ...] = ()  # compile.closure: classes-block names the program's function closes over


def compile_count_mismatch(case: CaseData, target: Target, pass_name: str, calls: int, count: int) -> Mismatch | None:
    exact, ceiling = case["expect"]["compiles"], case["expect"]["compiles_at_most"]
    within = (exact is None or count == exact) and (ceiling is None or count <= ceiling)
    if not counts_graphs(target.backend) or within:
        return None
    key = "compiles" if exact is not None else "compiles_at_most"
    return C.GRAPHS_COMPILED.mismatch(f"{pass_name} pass over {calls} call(s)", expected_compiles(case),
                                              str(count), "a recompile per value" if count >= calls > 1 else "",
                                              source=f"expect.{key}")


def expected_compiles(case: CaseData) -> str:
    """The count a case states, as the mismatch and the reproducer say it: `2`, or `at most 2`."""
    exact, ceiling = case["expect"]["compiles"], case["expect"]["compiles_at_most"]
    return str(exact) if exact is not None else f"at most {ceiling}"


def recompile_note(case: CaseData, target: Target, per_call: list[int], fresh: tuple[bool, ...] = ()) -> str | None:
    """Graphs compiled after the first call of the cold pass, where the case does not say how
    many to expect: never a silent pass (the record and the report show it), never a verdict. A call
    compiled afresh (`fresh`, per call) compiles a first time again: no recompile."""
    counts = [n for i, n in enumerate(per_call) if i and not (i < len(fresh) and fresh[i])]
    later = sum(counts)
    stated = case["expect"]["compiles"] is not None or case["expect"]["compiles_at_most"] is not None
    if stated or not counts_graphs(target.backend) or not later:
        return None
    every = all(n > 0 for n in counts)
    return (f"{sum(per_call)} graph(s) over {len(per_call)} calls, {later} of them after the first call"
            + (" (a recompile on every call)" if every and len(counts) > 1 else "")
            + "; expect.compiles is not set")


def run_passes(case: CaseData, target: Target, callbacks: LoopCallbacks | None = None) -> Outcome:
    """Every pass of the variant (a second, with caches warm, where the case asks), isolated."""
    import torch._dynamo  # lazy: start-up

    callbacks = callbacks or LoopCallbacks()
    points = call_points(case)
    warm = case["expect"]["warm_rerun"]
    outcome = Outcome()
    with contextlib.ExitStack() as stack:
        if warm:
            stack.enter_context(fresh_compile_caches())
        stack.enter_context(item_cache_key(case, target.program, target.classes, target.device, target.backend,
                                           target.kiim, target.mode))
        stack.enter_context(isolated(case, target.backend))
        classes = load_classes(target.classes, target.classes_filename)
        callbacks.loaded(classes)
        for p in range(2 if warm else 1):
            pass_name = "cold" if p == 0 else "warm"
            if p:
                torch._dynamo.reset()
            eager_fn = make_function(target.program, target.function, target.filename, classes, target.closure)
            program = make_function(target.program, target.function, target.filename, classes, target.closure)
            (compiled, counter), unkept = made_watched(case, classes, functools.partial(
                make_compiled, program, case, target.backend, target.kiim, callbacks.counting))
            outcome.mismatches += [m.located(call=None, call_label="", warm=bool(p)) for m in unkept]
            per_call: list[int] = []
            branches = Branches(case, classes)
            with callbacks.around_pass(p), branches.kept():
                outcome.mismatches += _run_pass(
                    case, target, callbacks, eager_fn=eager_fn, compiled=callbacks.compiled(compiled), counter=counter,
                    points=points, warm_prefix="warm rerun, " if p else "", envs=(Env(classes), Env(classes)),
                    per_call=per_call, raised=outcome.raised,
                    anew=functools.partial(compile_anew, case, target, classes, callbacks, counter, first=program),
                    branches=branches)
            outcome.calls += len(points)
            outcome.compile_counts[f"{pass_name}_graphs"] = counter.count
            outcome.compile_counts[f"{pass_name}_backend_calls"] = counter.backend_calls
            if p == 0:
                outcome.recompiles = recompile_note(case, target, per_call, tuple(bool(p.fresh) for p in points))
                outcome.compile_counts["cold_first_call"] = per_call[0] if per_call else 0
            callbacks.pass_done(p, counter)
            miscount = compile_count_mismatch(case, target, pass_name, len(points), counter.count)
            if miscount is not None:
                outcome.mismatches.append(miscount)
    return _allow(outcome, target.backend)


def compile_anew(case: CaseData, target: Target, classes: dict[str, Any], callbacks: LoopCallbacks,
                 counter: CountingBackend, *, first: Callable[..., Any], keep_cache: bool,
                 new_backend: bool = False, function: str | None = None) -> tuple[Callable[..., Any], list[Mismatch]]:
    """The program compiled afresh for a call that asks for it (`fresh`), as upstream compiles anew: a new
    function object through the same entry point, after torch._dynamo.reset() for torch.compile so that no
    cached frame is reused; its graphs count with the pass's (the same counter). `keep_cache`: a new function
    object of the pass's own code (`first`'s) and no reset, as upstream makes a new closure of one function and
    compiles it: dynamo's cache on that code and its automatic-dynamic state stay; `new_backend`, with another backend
    object that counts into `counter`, as upstream's new CompileCounter per compile (dynamo guards the backend's
    identity, so it reuses no frame compiled with the first). `function`: the classes block's function of that name is
    what is compiled, itself (a call's `function`), after a reset or not as `keep_cache` says."""
    import torch._dynamo  # lazy: start-up

    if function is not None:
        if not keep_cache and target.backend not in WITHOUT_DYNAMO:
            torch._dynamo.reset()
        fn: Callable[..., Any] = classes[function]
    elif keep_cache:
        fn = types.FunctionType(first.__code__, first.__globals__, first.__name__, first.__defaults__,
                                first.__closure__)
    else:
        if target.backend not in WITHOUT_DYNAMO:
            torch._dynamo.reset()
        fn = make_function(target.program, target.function, target.filename, classes, target.closure)
    backend = _AnotherBackend(counter) if new_backend and target.backend not in WITHOUT_DYNAMO else counter
    (compiled, _), unkept = made_watched(
        case, classes, lambda: make_compiled(fn, case, target.backend, target.kiim, lambda _inner, _aot: backend))
    return callbacks.compiled(compiled), unkept


def loop_only(case: CaseData) -> list[str]:
    """The keys of the case that only this loop models (the short reproducer does not): each side's state apart,
    the making watched, another function called."""
    return [k for k, v in (("branch", case["branch"]), ("compile.around_making", case["compile"]["around_making"]),
                           ("calls[].function", any(c["function"] for c in case["calls"]))) if v]


MAKING = "making the compiled function"
Within = Callable[[int], contextlib.AbstractContextManager[None]]  # a side's part of a call (Branches.side)


def made_watched(case: CaseData, classes: dict[str, Any], make: Callable[[], Any]) -> tuple[Any, list[Mismatch]]:
    """What `make` returns, made inside the case's `compile.around_making` context where it has one; what that
    context raises on its exit is the compiled side's mismatch (upstream asserts around the making)."""
    name = case["compile"]["around_making"]
    if name is None:
        return make(), []
    try:
        context = classes[name]()
        context.__enter__()
    except Exception as exc:  # the case's own code: it broke the case, not the build
        raise CaseBroken(f"compile.around_making: entering {name}() raised {exception_summary(exc)}") from None
    made = make()
    try:
        context.__exit__(None, None, None)
    except Exception as exc:  # the check upstream makes around the making
        return made, [C.EXCEPTION.mismatch(MAKING, "no exception", exception_summary(exc), source=f"{name}()")]
    return made, []


class Branches:
    """Note [Branched state]: each side of a call on a branch of the case's global state (`branch:`)."""

    def __init__(self, case: CaseData, classes: dict[str, Any]) -> None:
        spec = case["branch"]
        self.save = classes[spec["save"]] if spec else None
        self.restore = classes[spec["restore"]] if spec else None
        self.base: Any = None
        self.states: list[Any] = []

    def start(self) -> None:
        """A call starts: both sides from the state as it is."""
        if self.save is not None:
            self.base = self._do(self.save)
            self.states = [self.base, self.base]

    def end(self) -> None:
        """The call ended: the state it started from is back."""
        if self.restore is not None and self.states:
            self.states = []
            self._do(self.restore, self.base)

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        """Around a pass: a call that stopped part-way (a broken case) still leaves the state it started from."""
        try:
            yield
        finally:
            self.end()

    @contextlib.contextmanager
    def side(self, k: int) -> Iterator[None]:
        """One side's part of the call, from where that side left the state."""
        if self.save is None or self.restore is None or not self.states:
            yield
            return
        self._do(self.restore, self.states[k])
        try:
            yield
        finally:
            self.states[k] = self._do(self.save)

    @staticmethod
    def _do(fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:  # the case's own code: it broke the case
            raise CaseBroken(f"branch: {getattr(fn, '__name__', fn)}() raised {exception_summary(exc)}") from None


# Note [Branched state]: upstream runs each side of a check inside a context that saves a global state and restores
# it on exit (branch_nested_state() for the nested-tensor registry and id counter), so that the compiled side and
# the eager side each start from the state the check started from. The harness interleaves the two sides within a
# call (inputs, actions, the calls, the backwards), so it keeps each side's state apart: at each part of the call,
# the side's own state is made current first and saved after. When the call ends, the state it started from is back.


class _AnotherBackend(CountingBackend):
    """A backend object of its own that compiles through `counter` (and counts there): dynamo tells backends apart by
    identity, as upstream's new CompileCounter per torch.compile is another backend."""

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        return self.inner(gm, example_inputs, **kwargs)


def _allow(outcome: Outcome, backend: str) -> Outcome:
    """The differences a declared allowance accepts (conformance/core/checks.py) move out of the mismatches."""
    kept: list[Mismatch] = []
    for m in outcome.mismatches:
        allowance = allowance_for(m, backend)
        if allowance is None:
            kept.append(m)
        else:
            outcome.allowed.append((allowance.id, m))
    outcome.mismatches = kept
    return outcome


def _actions(target: Target, callbacks: LoopCallbacks, point: CallPoint, which: str, *, sides: list[tuple[Side, Env]],
             prefix: str, within: Within) -> list[Mismatch]:
    """The call's `before`/`after` block on each side: eager raising breaks the case; compiled
    raising alone is a mismatch (e.g. an output that should alias an input and does not)."""
    source = getattr(point, which)
    if source is None:
        return []
    filename = _action_file(target, point, which)
    raised = []
    for k, (side, env) in enumerate(sides):
        if side.exc is None:
            out = side.result if which == "after" else env.out
            with within(k):
                raised.append(act(side.inputs, source, filename, env=env, out=out, compiled=k == 1,
                                  is_program_exception=callbacks.program_exception))
        else:
            raised.append(None)
    if raised[0] is not None:
        raise CaseBroken(f"{prefix}{point.where}.{which}: eager raised {raised[0]}; fix the case")
    if len(raised) > 1 and raised[1] is not None:
        return [C.EXCEPTION.mismatch(f"{point.where}.{which}", "no exception", raised[1])]
    return []


def _action_file(target: Target, point: CallPoint, which: str) -> str:
    return f"<{point.where}.{which} of {target.filename.removeprefix('<program of ').rstrip('>')}>"


# Note [A raise after the call]: upstream asserts that what the caller does with the compiled output raises
# (`out = compiled(x)`, then `assertRaises` around `out.sum().backward()`) where eager's runs. A call's
# `raises` with `at: after` says so: its `after:` block must raise as declared on the sides listed and not on
# the others. A block that raised stops there, so after it the two sides differ by construction (eager's
# gradients, an input it rebound or zeroed, where compiled's has none). Such a call is therefore compared as the
# call (and its backward, in training) left it: both sides are snapshotted before the block runs, and its
# write-through pass is not run (its writes would move the version counters the block's backward checks; after
# the block the states differ by construction). The block is judged by its raise alone; the calls after it see
# what each side's block left.
def _after_as_declared(target: Target, callbacks: LoopCallbacks, point: CallPoint, declared: CallRaisesData, *,
                       sides: list[tuple[Side, Env]], prefix: str, raised: list[str], label: str,
                       within: Within) -> list[Mismatch]:
    """The call's `after` block where its `raises` says `at: after` (Note [A raise after the call]): on a side
    that `sides` lists it must raise as declared (the rest of the block then does not run), on the other it must
    not raise. Eager otherwise breaks the case; compiled otherwise is a mismatch, saying what it raised against
    what the case declares. What compiled raised as declared goes to `raised` (the record's `raised:`)."""
    filename, where = _action_file(target, point, "after"), f"{point.where}.after"
    want = declared["type"] + (f" matching {declared['match']!r}" if declared["match"] else "")
    found: list[Mismatch] = []
    for k, (name, (side, env)) in enumerate(zip(("eager", "compiled"), sides, strict=True)):
        if side.exc is not None:  # the call itself raised: its exception is compared, there is no `out` to act on
            continue
        with within(k):
            exc = run_action(side.inputs, point.after or "", filename, env=env, out=side.result,
                             compiled=name == "compiled", is_program_exception=callbacks.program_exception)
        got = "no exception" if exc is None else exception_summary(exc) + source_line(exc, filename)
        listed = name in declared["sides"]
        if matches_exception(exc, declared["type"], declared["match"]) if listed else exc is None:
            if listed and name == "compiled":
                raised.append(f"{label}: {exception_summary(exc)}")
        elif name == "eager":
            raise CaseBroken(f"{prefix}{where}: eager gives {got}, but {point.where}.raises expects "
                             + (want if listed else "no exception on the eager side") + "; fix the case")
        elif listed:
            found.append(C.EXCEPTION.mismatch(where, want, got, source=f"{point.where}.raises"))
        else:
            found.append(C.EXCEPTION.mismatch(where, "no exception", got))
        if exc is not None:
            release_frames(exc)
    return found


def _run_pass(case: CaseData, target: Target, callbacks: LoopCallbacks, *, eager_fn: Callable[..., Any],
              compiled: Callable[..., Any],
              counter: CountingBackend, points: list[CallPoint], warm_prefix: str, envs: tuple[Env, Env],
              per_call: list[int], raised: list[str], anew: Callable[..., tuple[Callable[..., Any], list[Mismatch]]],
              branches: Branches) -> list[Mismatch]:
    """Each call: both sides' inputs (fresh, or persisted), the `before` actions, eager then
    compiled, the backward (training), the `after` actions, then everything compared."""
    training = target.mode == "training"
    e_env, c_env = envs
    found: list[Mismatch] = []
    for i, point in enumerate(points):
        branches.start()
        prefix = warm_prefix + (f"{point.label}: " if len(points) > 1 else "")
        if point.function is not None:  # eager calls it too, from here on
            eager_fn = e_env.classes[point.function]
        e_in, c_in = _inputs(case, target, callbacks, point, envs=envs, within=branches.side)
        pending: list[Mismatch] = []
        e_pre, c_pre = Side(e_in, {}), Side(c_in, {})
        pending += _actions(target, callbacks, point, "before", sides=[(e_pre, e_env), (c_pre, c_env)], prefix=prefix,
                            within=branches.side)
        with callbacks.timed("eager"), branches.side(0):
            eager = call(eager_fn, e_in, case, callbacks.program_exception, e_env)
        # a broken case is broken whatever compiled does; do not run it (it might hang or allocate again)
        eager_must_not_raise(eager, raises_of(case, point), prefix)
        if target.backend not in WITHOUT_DYNAMO:
            mark_dynamic(c_in)
        before = counter.count
        with branches.side(1):
            if point.fresh:  # this call and the later ones call the program compiled afresh
                compiled, unkept = anew(keep_cache=point.fresh in ("keep_cache", "new_backend"),
                                        new_backend=point.fresh == "new_backend", function=point.function)
                pending += unkept
            comp = _compiled_call(case, callbacks, compiled, counter, inputs=c_in, env=c_env,
                                  first=i == 0 and not warm_prefix)
        per_call.append(counter.count - before)
        pending += _miscounted(target, point, per_call[-1])
        if training:
            with callbacks.timed("eager"), branches.side(0):
                _each([eager], lambda side: backward(side, case, callbacks.program_exception, e_env))
            with callbacks.timed("compiled_calls"), branches.side(1):
                _each([comp], lambda side: backward(side, case, callbacks.program_exception, c_env))
        declared = after_raises_of(point)
        if declared is None:
            pending += _actions(target, callbacks, point, "after", sides=[(eager, e_env), (comp, c_env)],
                                prefix=prefix, within=branches.side)
        else:  # compared as the call left it, before the action (Note [A raise after the call])
            _each([eager, comp], snapshot)
            pending += _after_as_declared(target, callbacks, point, declared, sides=[(eager, e_env), (comp, c_env)],
                                          prefix=prefix, raised=raised, label=f"{warm_prefix}call {i + 1} after",
                                          within=branches.side)
        writes = case["expect"]["write_through"] and declared is None
        with callbacks.timed("oracles"):
            if declared is None:
                _each([eager, comp], snapshot)
            if writes:
                _each([eager, comp], write_through)
            several = len(points) > 1
            found += [m.located(call=i + 1 if several else None, call_label=point.label if several else "",
                                warm=bool(warm_prefix))
                      for m in [*pending, *compare_call(eager, comp, case, prefix, raises_of(case, point),
                                                            writes=writes)]]
            if writes:
                _each([eager, comp], undo_write_through)
        e_env.out, c_env.out = eager.result, comp.result
        if declared_raise(comp, raises_of(case, point)):
            raised.append(f"{warm_prefix}call {i + 1}: {exception_summary(comp.exc)}")
        branches.end()
    return found


def _miscounted(target: Target, point: CallPoint, count: int) -> list[Mismatch]:
    """The call's own graph count where it states one (`compiles:` on the call) and the backend counts graphs."""
    if point.compiles is None or not counts_graphs(target.backend) or count == point.compiles:
        return []
    return [C.GRAPHS_COMPILED.mismatch("call", str(point.compiles), str(count),
                                       source=f"{point.where or 'first_call'}.compiles")]


def _inputs(case: CaseData, target: Target, callbacks: LoopCallbacks, point: CallPoint, *, envs: tuple[Env, Env],
            within: Within) -> tuple[BuiltInputs, BuiltInputs]:
    """Both sides' inputs for the call, each built on its side's part of the call."""
    built = []
    with callbacks.timed("build_inputs"):
        for k, env in enumerate(envs):
            with within(k):
                built.append(build_inputs(case, target.device, target.mode, point, env))
    return built[0], built[1]


def _each(sides: list[Side], step: Callable[[Side], None]) -> None:
    """`step` on every side whose call returned (a side that raised has nothing to snapshot)."""
    for side in sides:
        if side.exc is None:
            step(side)


def _compiled_call(case: CaseData, callbacks: LoopCallbacks, compiled: Callable[..., Any], counter: CountingBackend,
                   *, inputs: BuiltInputs, env: Env, first: bool) -> Side:
    before = counter.count
    callbacks.calling(counter, inputs)
    start = time.perf_counter()
    try:
        comp = call(compiled, inputs, case, callbacks.program_exception, env)
    finally:
        callbacks.calling(counter, None)
    # a call during which the backend compiled counts as compile time
    callbacks.spent("compile" if counter.count > before or first else "compiled_calls", time.perf_counter() - start)
    return comp
