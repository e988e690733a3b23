"""One call of one side (eager or compiled), what it leaves behind, and the comparison of the
two sides: everything a contract speaks of, in `Mismatch` terms.

Note [Every item accounted for] (conformance/pytest_plugin/guard.py): a program may raise SystemExit or a
KeyboardInterrupt of its own; `call` records them like any exception, and re-raises only what
`stopping` says stops the run (a real Ctrl-C, a timeout).
"""

from __future__ import annotations

import contextlib
import linecache
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.utils._pytree

from conformance.core.build import BuiltInputs, CallPoint, Env, source_line, tensors_of
from conformance.core.checks import About, C
from conformance.core.compare import (
    compare_ambient,
    compare_change,
    compare_plain,
    compare_relations,
    compare_state,
    input_change,
    matches_exception,
)
from conformance.core.mismatch import WRITE_THROUGH, CaseBroken, Mismatch, Tolerance, exception_summary
from conformance.core.spec import CallRaisesData, CaseData, RaisesData, VersionMode
from conformance.core.state import (
    Ambient,
    Relation,
    TensorState,
    ambient,
    flatten_outputs,
    output_structure,
    relations,
    restore,
    storage_key,
    storage_sharing,
    tensor_state,
)

TANGENT_SEED_OFFSET = 7919  # the tangents' generator: seeded apart from the inputs' own

# Note [Scratch storage of outputs]
# The whole storage behind a tensor is compared so that writes outside its geometry show. For an
# input that storage is ours (built zeroed, then filled), and for an output that shares storage
# with an input or another output it is what the caller sees through them. The storage of a
# fresh output is the kernel's business: eager's mse_loss leaves its 0-dim result in a
# 16-element buffer whose other elements were never written, inductor in a 1-element one. So
# an output's storage size and contents are compared only where it shares storage (eager's
# relations); its own elements are always compared.


def program_raised(exc: BaseException) -> bool:
    """The default `stopping` test's inverse: Exception, SystemExit and KeyboardInterrupt are the
    program's own (the harness installs a finer one that knows about real Ctrl-C)."""
    return isinstance(exc, Exception | SystemExit | KeyboardInterrupt)


@dataclass
class Side:
    """What one side (eager or compiled) of one call left behind."""

    inputs: BuiltInputs
    before: dict[str, tuple[tuple[str, int] | None, int | None]]
    exc: BaseException | None = None
    where: str = ""  # " at <case file>:<line>" for an exception the program raised
    result: Any = None  # the return value as the program gave it (`out` in the caller's actions)
    outputs: list[Any] = field(default_factory=list)
    structure: str = ""
    out_states: list[TensorState | None] = field(default_factory=list)
    after: dict[str, TensorState] = field(default_factory=dict)
    sharing: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ambient: Ambient | None = None
    relations: list[Relation | None] = field(default_factory=list)
    grads: dict[str, TensorState | None] = field(default_factory=dict)
    backward_exc: BaseException | None = None
    backward_ran: bool = False  # the harness's backward (training); else grads are read after the call
    write_errors: list[str | None] = field(default_factory=list)
    after_write: dict[str, TensorState] = field(default_factory=dict)
    # the inputs' storages from before the call, kept alive while the side is: a storage freed by a
    # set_ could otherwise be reallocated at the same address and the swap would go unseen
    held: list[Any] = field(default_factory=list)
    objects: dict[str, torch.Tensor] = field(default_factory=dict)  # the input tensors the call was given
    rebound: set[str] = field(default_factory=set)  # inputs a caller action replaced by another tensor


def _held(t: torch.Tensor) -> Any:
    try:
        return t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None


def _light(t: torch.Tensor) -> tuple[tuple[str, int] | None, int | None]:
    try:
        version: int | None = t._version
    except (RuntimeError, AttributeError):
        version = None
    return storage_key(t), version


def release_frames(exc: BaseException) -> BaseException:
    """`exc` without its traceback, nor the tracebacks of the exceptions it chains, each frame in
    them cleared: no frame stays alive through it (a program that allocated without bound holds the
    memory in its locals), and what the frames held dies now, in the caller's modes. A compile that
    failed leaves C++ guards in its frames whose destructors set the dispatch keys back to what they
    saw; destroyed by a later garbage collection, they set them in whatever runs then, and every
    later compile in the process fails (2.13.0, 2.15.0)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if e.__traceback__ is not None:
            traceback.clear_frames(e.__traceback__)  # a frame still running (ours) is left as it is
        e.__traceback__ = None
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]
        todo += list(getattr(e, "exceptions", ()))
    return exc


def _program_line(exc: BaseException) -> str:
    """Where in the case's program an exception was raised (its deepest frame there), or ''."""
    found = ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        name = frame.f_code.co_filename
        if name.startswith("<program of "):
            found = f" at {name[len('<program of '):-1]}:{lineno}"
    return found


@contextlib.contextmanager
def case_modes(grad_enabled: bool, inference: bool) -> Iterator[None]:
    """The case's grad mode, and inference mode inside it where the case asks for it. Never
    `inference_mode(False)`: its guard sets grad mode to `not enabled`, so it would switch grad back on."""
    with torch.set_grad_enabled(grad_enabled):
        if not inference:
            yield
            return
        with torch.inference_mode():
            yield


@contextlib.contextmanager
def around_call(case: CaseData, env: Env | None, inputs: BuiltInputs) -> Iterator[None]:
    """The case's `around:` context, made afresh for this call of this side (inside the case's modes);
    nothing where the case has none. An expression that does not evaluate to a context manager, or
    one whose __enter__ raises, is the case's error."""
    source = case.get("around")
    if source is None:
        yield
        return
    scope: dict[str, Any] = {"torch": torch, **(env.classes if env else {}), **inputs.named}
    try:
        manager = eval(compile(source, "<around>", "eval"), scope)  # the case's own expression, like its program
        entered = contextlib.ExitStack()
        entered.enter_context(manager)
    except Exception as exc:
        raise CaseBroken(f"around: {source!r} raised {exception_summary(exc)} as it was entered") from None

    def exited(*exc_info: Any) -> bool:
        try:
            return bool(entered.__exit__(*exc_info))
        except Exception as exc:
            if exc is exc_info[1]:  # the body's own exception, passed on: not the manager's
                raise
            raise CaseBroken(f"around: {source!r} raised {exception_summary(exc)} as it was exited") from None

    try:
        yield
    except BaseException as body:  # as a `with` block: the manager sees the body's exception, may swallow it
        if not exited(type(body), body, body.__traceback__):
            raise
        return
    exited(None, None, None)


def call(fn: Callable[..., Any], inputs: BuiltInputs, case: CaseData,
         is_program_exception: Callable[[BaseException], bool] = program_raised, env: Env | None = None) -> Side:
    tensors = tensors_of(inputs.named)
    side = Side(inputs=inputs, before={n: _light(t) for n, t in tensors.items()},
                held=[_held(t) for t in tensors.values()], objects=dict(tensors))
    result = None
    with case_modes(case["grad_enabled"], case["inference_mode"]), around_call(case, env, inputs):
        try:
            result = fn(*inputs.args)
        except BaseException as exc:
            if not is_program_exception(exc) or isinstance(exc, CaseBroken):  # an entry refusing the case
                raise
            side.where = _program_line(exc)
            side.exc = release_frames(exc)  # inside the modes: their own guard puts the keys back as it closes
        side.ambient = ambient()
    if side.exc is None:
        side.result = result
        side.outputs = flatten_outputs(result)
        side.structure = output_structure(result)
        side.relations = relations(tensors_of(inputs.named), side.outputs)
    return side


def act(inputs: BuiltInputs, source: str, filename: str, *, env: Env, out: Any, compiled: bool = False,
        is_program_exception: Callable[[BaseException], bool] = program_raised) -> str | None:
    """Run a caller action (a `before:`/`after:` block) on one side's inputs; rebinding an input's
    name replaces that input (a persisted one for the rest of the pass). The exception it raised,
    summarised, or None."""
    exc = run_action(inputs, source, filename, env=env, out=out, compiled=compiled,
                     is_program_exception=is_program_exception)
    return None if exc is None else exception_summary(exc) + source_line(exc, filename)


def run_action(inputs: BuiltInputs, source: str, filename: str, *, env: Env, out: Any, compiled: bool = False,
               is_program_exception: Callable[[BaseException], bool] = program_raised) -> BaseException | None:
    """`act`, giving the exception itself: where a statement raises, the rest of the block does not run and
    no input is rebound. `compiled` tells the block which side it acts on (an assertion upstream makes on the
    compiled side only)."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope: dict[str, Any] = {"torch": torch, **env.classes, **inputs.named, "out": out, "compiled": compiled}
    try:
        exec(compile(source, filename, "exec"), scope)
    except BaseException as exc:
        if not is_program_exception(exc):
            raise
        return exc
    for name, value in inputs.named.items():
        if scope.get(name) is not value:
            inputs.named[name] = scope.get(name)
            if name in env.persisted:
                env.persisted[name] = (scope.get(name), *env.persisted[name][1:])
    return None


def snapshot(side: Side) -> None:
    if not side.backward_ran:  # no harness backward: the gradients a caller's backward left, if any
        side.grads = read_grads(side)
    side.out_states = [tensor_state(o) if isinstance(o, torch.Tensor) else None for o in side.outputs]
    tensors = tensors_of(side.inputs.named)
    side.after = {n: tensor_state(t) for n, t in tensors.items()}
    side.sharing = storage_sharing(tensors)
    side.rebound = {n for n, t in tensors.items() if n in side.objects and side.objects[n] is not t}


def tangent(out: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A seeded gradient shaped like `out`; for a subclass, the same subclass built from inner
    tangents, so the backward sees what a user's backward of that output would."""
    if hasattr(type(out), "__tensor_flatten__"):  # what is_subclass asks: torch.Tensor itself has none
        names, ctx = type(out).__tensor_flatten__(out)  # type: ignore[attr-defined]  # subclass protocol
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())  # type: ignore[attr-defined, no-any-return]  # subclass protocol
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)


def backward_outputs(outputs: list[Any], seed: int) -> None:
    """Backward through every differentiable output at once, with tangents seeded by `seed`."""
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad
            and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])


def sum_backward(out: Any, once: bool) -> None:
    """Upstream's backward: `o.sum().backward(retain_graph=True)` for each tensor output `o` that requires grad,
    in pytree's flattened order (verify_aot_autograd's outs_and_grads); with `once`, one `.backward()` of their
    sums added (`out.sum().backward()` for one output). Each output's backward gets an expanded stride-0 tangent."""
    outs = [o for o in torch.utils._pytree.tree_leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad]
    with torch.enable_grad():
        if not once:
            for o in outs:
                o.sum().backward(retain_graph=True)  # type: ignore[no-untyped-call]  # torch leaves it untyped
        elif outs:
            total = outs[0].sum()
            for o in outs[1:]:
                total = total + o.sum()
            total.backward()  # type: ignore[no-untyped-call]  # as above


def backward(side: Side, case: CaseData, is_program_exception: Callable[[BaseException], bool] = program_raised,
             env: Env | None = None) -> None:
    """The backward of one side's outputs inside the case's `around:` context, as a caller's backward inside its
    `with` block: seeded tangents (backward_outputs), or upstream's sums (sum_backward) where the case's
    `backward` says; what it raised kept."""
    mode = case.get("backward", "seeded")
    try:
        with around_call(case, env, side.inputs):
            if mode == "seeded":
                backward_outputs(side.outputs, case["seed"] + TANGENT_SEED_OFFSET)
            else:
                sum_backward(side.result, once=mode == "sum_once")
    except BaseException as exc:
        if not is_program_exception(exc):
            raise
        side.backward_exc = exc.with_traceback(None)
    side.backward_ran = True
    side.grads = read_grads(side)


def read_grads(side: Side) -> dict[str, TensorState | None]:
    return {name: (tensor_state(leaf.grad, with_storage=False) if leaf.grad is not None else None)
            for name, leaf in side.inputs.grad_leaves.items()}


def write_through_outputs(outputs: list[Any]) -> list[str | None]:
    """Write through every output in place (so that aliasing shows): what each write raised."""
    errors: list[str | None] = []
    with torch.no_grad():
        for o in outputs:
            if not isinstance(o, torch.Tensor):
                errors.append(None)
                continue
            try:
                if o.dtype == torch.bool:
                    o.logical_not_()
                else:
                    o.add_(1)
                errors.append(None)
            except Exception as exc:
                errors.append(type(exc).__name__)
    return errors


def write_through(side: Side) -> None:
    """Write through every output, so aliasing shows as changed inputs/outputs."""
    side.write_errors = write_through_outputs(side.outputs)
    states = {n: tensor_state(t) for n, t in tensors_of(side.inputs.named).items()}
    for k, o in enumerate(side.outputs):
        if isinstance(o, torch.Tensor):
            states[f"out[{k}]"] = tensor_state(o)
    side.after_write = states


def undo_write_through(side: Side) -> None:
    """Put back what the write-through changed (from the snapshot), so that persisted inputs and
    the `out` of the caller's next action hold what the program and the caller left: the
    write-through is the harness's probe, not part of the program."""
    for name, t in tensors_of(side.inputs.named).items():
        restore(t, side.after.get(name))
    for o, state in zip(side.outputs, side.out_states, strict=False):
        if isinstance(o, torch.Tensor):
            restore(o, state)


def mark_dynamic(inputs: BuiltInputs) -> None:
    import torch._dynamo  # lazy: start-up

    for name, dims in inputs.dynamic_dims.items():
        torch._dynamo.mark_dynamic(inputs.named[name], list(dims))


def raises_of(case: CaseData, point: CallPoint) -> RaisesData | None:
    """What a call must raise: its own `raises`, else the case's expect.raises; nothing where its own is its
    after action's (`at: after`: the call itself must run)."""
    if point.raises is not None:
        return None if after_raises_of(point) is not None else point.raises
    return case["expect"]["raises"]


def after_raises_of(point: CallPoint) -> CallRaisesData | None:
    """What the call's after action must raise (its `raises` with `at: after`), else None."""
    return point.raises if point.raises is not None and point.raises.get("at") == "after" else None


def declared_raise(comp: Side, raises: RaisesData | None) -> bool:
    """Whether the compiled side raised what the call declares it raises (upstream's assertRaises)."""
    return (comp.exc is not None and raises is not None and "compiled" in raises["sides"]
            and matches_exception(comp.exc, raises["type"], raises["match"]))


def eager_must_not_raise(eager: Side, raises: RaisesData | None, prefix: str) -> None:
    """An eager exception the case does not declare breaks the case whatever compiled does."""
    if eager.exc is not None and (raises is None or "eager" not in raises["sides"]):
        raise CaseBroken(f"{prefix}eager raised {exception_summary(eager.exc)}{eager.where}; fix the program, or "
                         "declare expect.raises for a negative case")


def _compare_exceptions(eager: Side, comp: Side, raises: RaisesData | None, prefix: str) -> list[Mismatch]:
    out: list[Mismatch] = []
    for name, side in (("eager", eager), ("compiled", comp)):
        if raises is not None and name in raises["sides"]:
            if matches_exception(side.exc, raises["type"], raises["match"]):
                continue
            want = raises["type"] + (f" matching {raises['match']!r}" if raises["match"] else "")
            got = exception_summary(side.exc)
            if name == "eager":
                raise CaseBroken(f"{prefix}expect.raises: eager gives {got}, but the case expects {want}")
            out.append(C.EXCEPTION.mismatch("call", want, got, source="expect.raises"))
        elif name == "compiled" and (m := C.EXCEPTION.judged("call", side.exc, None,
                                                                     show=exception_summary)) is not None:
            out.append(m)  # against no exception: eager raising where no raise is declared broke the case
    return out


def _compare_outputs(eager: Side, comp: Side, case: CaseData, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (m := C.STRUCTURE.judged("outputs", comp.structure, eager.structure, show=str)) is not None:
        out.append(m)
    if (m := C.NUMBER_OF_OUTPUTS.judged("outputs", len(comp.outputs), len(eager.outputs),
                                                show=str)) is not None:
        return [*out, m]
    for k, (a, e) in enumerate(zip(comp.outputs, eager.outputs, strict=True)):
        sa, se = comp.out_states[k], eager.out_states[k]
        if sa is not None and se is not None:
            # Note [Scratch storage of outputs]: the rest of a fresh output's storage is scratch
            rel = eager.relations[k] if k < len(eager.relations) else None
            shared = rel is not None and bool(rel.shares_storage_with)
            out += compare_state(f"out[{k}]", sa, se, tol, strides=case["expect"]["strides"], storage=shared,
                                 of=About("output", f"out[{k}]"))
        elif (sa is None) != (se is None):
            out.append(C.TYPE.mismatch(f"out[{k}]", type(e).__name__, type(a).__name__,
                                               of=About("output", f"out[{k}]")))  # a tensor on one side only
        else:
            out += compare_plain(f"out[{k}]", a, e, tol, of=About("output", f"out[{k}]"))
    out += compare_relations(comp.relations, eager.relations)
    return out


def _as_state(light: tuple[tuple[str, int] | None, int | None]) -> TensorState:
    return TensorState(type="", dtype="", device="", shape=(), stride=None, storage_offset=None,
                       requires_grad=False, is_leaf=True, version=light[1], storage=light[0],
                       values=None, storage_values=None)


def version_mode(case: CaseData, name: str) -> VersionMode:
    """How `expect.version` compares the tensor `name`: one mode for all, or the mode of the
    longest key naming it or a tensor above it (`bn` covers `bn.running_mean`); else moved."""
    version = case["expect"]["version"]
    if isinstance(version, str):
        return version
    keys = [k for k in version if name == k or name.startswith((k + ".", k + "["))]
    return version[max(keys, key=len)] if keys else "moved"


def _compare_inputs(eager: Side, comp: Side, case: CaseData, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    for name in [*eager.after, *(n for n in comp.after if n not in eager.after)]:
        se, sa = eager.after.get(name), comp.after.get(name)
        if se is None or sa is None:  # e.g. optimizer state that one side's step created
            out.append(C.EXISTS.mismatch(f"input {name}", str(se is not None), str(sa is not None),
                                                 of=About("input", name)))
            continue
        out += compare_state(f"input {name}", sa, se, tol, of=About("input", name))
        # an input a caller action replaced is another tensor: what the call did to the old one is not
        # in it (its version counter starts wherever the new tensor's does)
        if name in eager.before and name in comp.before and not (name in eager.rebound and name in comp.rebound):
            ce = input_change(_as_state(eager.before[name]), se)
            ca = input_change(_as_state(comp.before[name]), sa)
            out += compare_change(f"input {name}", ca, ce, version_mode(case, name), of=About("input", name))
        shared = C.SHARES_STORAGE_WITH.judged(f"input {name}", list(comp.sharing.get(name, ())),
                                                       list(eager.sharing.get(name, ())), show=str,
                                                       of=About("input", name))
        out += [shared] if shared is not None else []
    return out


def _compare_grads(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (m := C.EXCEPTION.judged("backward", comp.backward_exc, eager.backward_exc,
                                        show=exception_summary)) is not None:
        out.append(m)
    for name, ge in eager.grads.items():
        ga = comp.grads.get(name)
        if (m := C.GRAD.judged(f"grad of {name}", ga is not None, ge is not None,
                                        show=lambda has: "a tensor" if has else "None",
                                        of=About("grad", name))) is not None:
            out.append(m)
        elif ga is not None and ge is not None:
            out += compare_state(f"grad of {name}", ga, ge, tol, strides=False, grad_fields=False, storage=False,
                                 of=About("grad", name))
    return out


def _compare_write_through(eager: Side, comp: Side, tol: Tolerance) -> list[Mismatch]:
    out: list[Mismatch] = []
    if (m := C.WRITE_THROUGH.judged("outputs", comp.write_errors, eager.write_errors,
                                                             show=str)) is not None:
        out.append(m)
    outputs = {f"out[{k}]" for k in range(len(eager.outputs))}
    for name, se in eager.after_write.items():
        sa = comp.after_write.get(name)
        if sa is not None:
            role = "output" if name in outputs else "input"
            out += [m.seen(WRITE_THROUGH) for m in compare_state(name, sa, se, tol, strides=False, grad_fields=False,
                                                                  storage=False, of=About(role, name))]
    return out


def compare_call(eager: Side, comp: Side, case: CaseData, prefix: str, raises: RaisesData | None, *,
                 writes: bool = True) -> list[Mismatch]:
    """Everything one call left behind, compiled against eager (the caller places it in its call); `raises`
    is what this call must raise (raises_of); `writes`, whether the write-through pass ran for it."""
    found = _compare_exceptions(eager, comp, raises, prefix)
    if eager.exc is None and comp.exc is None:
        expect = case["expect"]
        tol = Tolerance(expect["rtol"], expect["atol"])
        found += _compare_outputs(eager, comp, case, tol)
        found += _compare_inputs(eager, comp, case, tol)
        assert comp.ambient is not None
        assert eager.ambient is not None
        found += compare_ambient(comp.ambient, eager.ambient)
        found += _compare_grads(eager, comp, tol)
        if expect["write_through"] and writes:
            found += _compare_write_through(eager, comp, tol)
    return found
