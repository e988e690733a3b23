"""interpreted ≡ codegen for the runtime wrapper, subclass wrapper, backward unwrap, scalars."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing._internal.two_tensor import TwoTensor

from reference_impl import backward_unwrap as bu
from reference_impl import mutation_epilogue as me
from reference_impl import runtime_wrapper as rw
from reference_impl import runtime_wrapper_form as rwf
from reference_impl import scalar_recompile as sc
from reference_impl import subclass_wrapper as sw


def _err(fn: Any) -> tuple[Any, Any]:
    try:
        return fn(), None
    except Exception as exc:  # the error itself is the observed outcome
        return None, (type(exc).__name__, str(exc))


# -- runtime wrapper -----------------------------------------------------------------------


@st.composite
def runtime_scenarios(draw: st.DrawFn) -> tuple[rw.RuntimeWrapperMeta, int, bool, int]:
    n = draw(st.integers(1, 5))
    idx = st.integers(0, n - 1)
    runtime = tuple(sorted(set(draw(st.lists(idx, max_size=n)))))
    in_graph = tuple(sorted(set(draw(st.lists(idx, max_size=n))) - set(runtime)))
    outputs = []
    bases = 0
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(list(rw.AliasKind)))
        if kind is rw.AliasKind.PLAIN:
            outputs.append(
                rw.OutputSpec(dynamic_dims=draw(st.sampled_from([None, frozenset({0})])))
            )
        elif kind is rw.AliasKind.ALIAS_OF_INTERMEDIATE:
            outputs.append(rw.OutputSpec(kind, -1, draw(st.booleans())))
            bases += 1
        else:
            outputs.append(rw.OutputSpec(kind, draw(idx), draw(st.booleans())))
    # Intermediate bases follow the user outputs in the graph's output list.
    k = 0
    for i, o in enumerate(outputs):
        if o.kind is rw.AliasKind.ALIAS_OF_INTERMEDIATE:
            outputs[i] = rw.OutputSpec(o.kind, len(outputs) + k, o.requires_grad)
            k += 1
    meta = rw.RuntimeWrapperMeta(
        num_inputs=n,
        mutated_runtime=runtime,
        mutated_in_graph=in_graph,
        detach=tuple(sorted(set(draw(st.lists(idx, max_size=2))))),
        outputs=tuple(outputs),
        num_intermediate_bases=bases,
        trace_joint=draw(st.booleans()),
        disable_autocast=draw(st.booleans()),
        grad_enabled_after=draw(st.sampled_from([None, True, False])),
        keep_input_mutations=draw(st.booleans()),
    )
    return meta, draw(st.integers(-1, 1)), draw(st.booleans()), draw(st.integers(0, 2**31 - 1))


def _run_wrapper(
    meta: rw.RuntimeWrapperMeta, arity_delta: int, grad: bool, seed: int, generated: bool
) -> Any:
    g = torch.Generator().manual_seed(seed)
    args: list[Any] = [
        torch.randn(4, generator=g, requires_grad=bool(i % 2)) for i in range(meta.num_inputs)
    ]
    originals = list(args)
    seen: dict[str, Any] = {}

    def compiled_fn(call_args: list[Any]) -> tuple[Any, ...]:
        seen["grad"] = torch.is_grad_enabled()
        seen["autocast"] = torch.is_autocast_enabled("cpu")
        seen["same_list"] = call_args is args
        seen["detached"] = [a.requires_grad for a in call_args]
        outs: list[Any] = [torch.randn(4, generator=g) for _ in meta.mutated_runtime]
        for o in meta.outputs:
            value = torch.randn(4, generator=g)
            if o.kind is not rw.AliasKind.PLAIN and meta.trace_joint:
                value = me.OutputAlias(value[1:])
            elif o.kind is not rw.AliasKind.PLAIN:
                value = value[1:]
            outs.append(value)
        outs.extend(torch.randn(4, generator=g) for _ in range(meta.num_intermediate_bases))
        return tuple(outs[: max(len(outs) + arity_delta, 0)])

    epilogue = me.MutationEpilogueMeta(
        tuple(me.InputMutation(i, mutates_data=True, is_leaf=True) for i in meta.mutated_runtime)
    )
    wrapper = None
    if generated:
        apply = me.compile_mutation_epilogue(epilogue)
        replay = rw.compile_alias_fn(meta)
        wrapper = rw.compile_runtime_wrapper(meta, apply_mutations=apply, replay_aliases=replay)

    def call() -> list[Any]:
        if wrapper is not None:
            return wrapper(compiled_fn, contextlib.nullcontext, lambda: None, args)
        return rw.run_runtime_wrapper_interpreted(
            meta,
            compiled_fn,
            args,
            apply_mutations=lambda o, u: me.apply_mutations_interpreted(epilogue, o, u),
            replay_aliases=lambda o, f: rw.replay_aliases_interpreted(meta, o, f),
        )

    with torch.set_grad_enabled(grad):
        outs, err = _err(call)
        grad_after = torch.is_grad_enabled()
    described = None
    if outs is not None:
        described = [
            (
                o.detach().tolist(),
                o.requires_grad,
                [i for i, a in enumerate(originals) if o is a],
                [
                    i
                    for i, a in enumerate(originals)
                    if o.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
                ],
                getattr(o, rw.DYNAMIC_DIMS_ATTR, None),
            )
            for o in outs
        ]
    inputs = [(a.detach().tolist(), a._version) for a in originals]
    return described, err, grad_after, inputs, seen


@given(runtime_scenarios())
def test_runtime_wrapper_interpreted_equals_codegen(
    scenario: tuple[rw.RuntimeWrapperMeta, int, bool, int],
) -> None:
    before = torch.is_grad_enabled()
    try:
        assert _run_wrapper(*scenario, generated=True) == _run_wrapper(*scenario, generated=False)
    finally:
        torch.set_grad_enabled(before)


def test_runtime_wrapper_form_reads_every_decision() -> None:
    meta = rw.RuntimeWrapperMeta(
        num_inputs=3,
        mutated_runtime=(0, 2),
        mutated_in_graph=(1,),
        detach=(1,),
        outputs=(
            rw.OutputSpec(rw.AliasKind.IS_INPUT, 1),
            rw.OutputSpec(dynamic_dims=frozenset({0})),
        ),
        trace_joint=True,
        disable_autocast=True,
        grad_enabled_after=False,
    )
    source, _ = rw.codegen_runtime_wrapper(meta, apply_mutations=print, replay_aliases=list)
    form = rwf.structural_form(source)
    assert form.captured_inputs == ((0, 0), (2, 2), (1, 1))
    assert (form.version_bumps, form.detach, form.mutation_split, form.expected_outputs) == (
        (1,),
        (1,),
        2,
        4,
    )
    assert form.mode == "grad enabled (training)" and form.disable_autocast
    assert (form.replays_aliases, form.dynamic_dims, form.grad_enabled_after) == (True, (1,), False)
    assert form.extra == ()


# -- subclass wrapper ----------------------------------------------------------------------

trees = st.recursive(st.just("plain"), lambda kids: st.tuples(kids, kids), max_leaves=4)


def _make(tree: Any, g: torch.Generator) -> torch.Tensor:
    if tree == "plain":
        return torch.randn(2, 3, generator=g)
    return TwoTensor(_make(tree[0], g), _make(tree[1], g))


@st.composite
def subclass_scenarios(draw: st.DrawFn) -> tuple[Any, ...]:
    ins = draw(st.lists(trees, min_size=1, max_size=3))
    outs = draw(st.lists(trees, min_size=1, max_size=3))
    frozen = frozenset(
        i
        for i in draw(st.lists(st.integers(0, 2), max_size=2))
        if i < len(ins) and ins[i] != "plain"
    )
    return (
        ins,
        outs,
        frozen,
        draw(st.sampled_from([None, 0, 2])),
        draw(st.integers(0, 99)),
        draw(st.sampled_from([None, 0, 1, 2])),
    )


def _run_subclass(
    ins: list[Any],
    outs: list[Any],
    frozen: frozenset[int],
    saved: int | None,
    seed: int,
    wrong_type_at: int | None,
    generated: bool,
) -> Any:
    g = torch.Generator().manual_seed(seed)
    args = [_make(t, g) for t in ins]
    meta = sw.SubclassWrapperMeta(
        tuple(sw.subclass_meta_of(a) for a in args),
        tuple(sw.subclass_meta_of(_make(t, g)) for t in outs),
        frozen,
        saved,
    )
    if wrong_type_at is not None and wrong_type_at < len(args):
        args[wrong_type_at] = torch.randn(2, 3, generator=g)
    flat_outs = sum(m.arg_count if isinstance(m, sw.SubclassMeta) else 1 for m in meta.outputs)
    seen: list[Any] = []

    def compiled_fn(flat: list[Any]) -> list[torch.Tensor]:
        seen.extend(None if f is None else f.tolist() for f in flat)
        return [torch.full((2, 3), float(i)) for i in range(flat_outs + (saved or 0))]

    run = (
        sw.compile_subclass_wrapper(meta, compiled_fn)
        if generated
        else lambda a: sw.run_subclass_wrapper_interpreted(meta, compiled_fn, a)
    )
    result, err = _err(lambda: run(args))
    described = (
        None
        if result is None
        else [
            (
                type(r).__name__,
                bu.unwrap_interpreted([r])[0].tolist(),
                len(bu.unwrap_interpreted([r])),
            )
            for r in result
        ]
    )
    return described, err, seen, len(args)


@given(subclass_scenarios())
def test_subclass_wrapper_interpreted_equals_codegen(scenario: tuple[Any, ...]) -> None:
    assert _run_subclass(*scenario, generated=True) == _run_subclass(*scenario, generated=False)


@given(
    returns_symints=st.lists(st.booleans(), min_size=9, max_size=9),
    saved=st.sampled_from([None, 0, 2]),
)
def test_per_tensor_layout_passes_every_tensors_symints_and_skips_optional_outputs(
    returns_symints: list[bool], saved: int | None
) -> None:
    """2.15's layout: each inner tensor is followed by its own symbolic sizes/strides, then the
    subclass's; a graph may return any of those as an integer or not, and both forms rebuild
    the same outputs either way (the plain output after them lands where it should)."""
    x = TwoTensor(torch.randn(4, 3), torch.randn(4, 3) + 10)
    dims = (0, 1), (0,)
    sym = {"": dims, "a": dims, "b": dims}
    m = sw.mark_symbolic(sw.subclass_meta_of(x), sym)
    assert isinstance(m, sw.SubclassMeta)
    assert m.slots("per-tensor") == [True, False, False, False, True, False, False, False, False, False, False]
    meta = sw.SubclassWrapperMeta((m, sw.PlainMeta()), (m, sw.PlainMeta()), frozenset(), saved, "per-tensor")
    plain = torch.full((1,), -1.0)
    activations = [torch.full((1,), 100.0 + k) for k in range(saved or 0)]
    seen: list[Any] = []

    def compiled_fn(flat: list[Any]) -> list[Any]:
        seen[:] = flat
        outs: list[Any] = []
        slot = 0
        for tensor in (x.a, x.b):
            outs.append(tensor * 2)
            for v in (4, 3, 3):
                if returns_symints[slot]:
                    outs.append(v)
                slot += 1
        outs += [v for v, keep in zip((4, 3, 3), returns_symints[6:], strict=True) if keep]
        return [*outs, plain, *activations]

    for run in (sw.compile_subclass_wrapper(meta, compiled_fn),
                lambda a: sw.run_subclass_wrapper_interpreted(meta, compiled_fn, a)):
        out = run([x, torch.zeros(2)])
        assert [type(v) for v in seen] == [torch.Tensor, int, int, int, torch.Tensor, int, int, int, int, int, int,
                                           torch.Tensor]
        assert seen[1:4] == [4, 3, 3] and seen[8:11] == [4, 3, 3]
        assert type(out[0]) is TwoTensor and torch.equal(out[0].a, x.a * 2) and torch.equal(out[0].b, x.b * 2)
        assert out[1] is plain
        assert list(out[2:]) == activations


def _inner_fn(unwrapped: str) -> str:
    return ("def inner_fn(args):\n    unwrapped_args = []\n" + unwrapped
            + "    args.clear()\n    unwrapped_outs = compiled_fn(unwrapped_args)\n    return (unwrapped_outs[0],)\n")


def test_a_trailing_input_named_by_the_build_is_the_pass_through_and_nothing_else_is() -> None:
    head = "    unwrapped_args.append(args[0].a)\n"
    passed = sw.structural_form(_inner_fn(head + "    unwrapped_args.extend(args[1:])\n"))
    named = head + "    unwrapped_args.append(args[1])\n    unwrapped_args.extend(args[2:])\n"
    assert sw.structural_form(_inner_fn(named)) == passed
    # the same slot twice, a skipped slot, two slots swapped: other programs, other forms
    for wrong in (
        head + "    unwrapped_args.append(args[2])\n    unwrapped_args.extend(args[2:])\n",
        head + "    unwrapped_args.append(args[2])\n    unwrapped_args.extend(args[3:])\n",
        head + "    unwrapped_args.append(args[2])\n    unwrapped_args.append(args[1])\n"
        "    unwrapped_args.extend(args[3:])\n",
    ):
        assert sw.structural_form(_inner_fn(wrong)) != passed, wrong


def test_subclass_type_check_is_enforced_by_both_forms() -> None:
    scenario = (["plain", ("plain", "plain")], ["plain"], frozenset(), None, 0, 1)
    generated = _run_subclass(*scenario, generated=True)
    assert generated[1] is not None and generated[1][0] == "AssertionError"
    assert generated == _run_subclass(*scenario, generated=False)


# -- backward unwrap -----------------------------------------------------------------------


@given(st.lists(st.one_of(st.just("int"), trees), max_size=50), st.integers(0, 99))
def test_backward_unwrap_interpreted_equals_codegen(items: list[Any], seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    args = [7 if t == "int" else _make(t, g) for t in items]
    meta = bu.BackwardUnwrapMeta(
        tuple(
            bu.SavedKind.SYMINT
            if t == "int"
            else sw.subclass_meta_of(a)
            if t != "plain"
            else bu.SavedKind.TENSOR
            for t, a in zip(items, args, strict=True)
        )
    )
    expected = bu.unwrap_interpreted(args)
    got = bu.compile_backward_unwrap(meta)(args)
    assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected, strict=True))
    source, _ = bu.codegen_backward_unwrap(meta)
    assert bu.structural_form(source).is_identity == meta.all_plain


# -- scalar tensorification ----------------------------------------------------------------


def p_method(x: torch.Tensor, lr: float) -> torch.Tensor:
    x.mul_(lr)
    return x


def p_half(x: torch.Tensor, lr: float) -> torch.Tensor:
    x.mul_(0.5 * lr)
    return x * lr


def p_divpow(x: torch.Tensor, lr: float) -> torch.Tensor:
    x.div_((1.0 + lr) ** 0.5)
    return x.add_(lr).sub_(lr * 2.0)


PROGRAMS = [p_method, p_half, p_divpow]


# lr >= 0: see test_negative_base_fractional_power_is_outside_the_contract.
@given(
    st.sampled_from(PROGRAMS),
    st.floats(0, 10, allow_nan=False),
    st.sampled_from([torch.float32, torch.float64]),
    st.integers(0, 99),
)
def test_tensorified_equals_plain(program: Any, lr: float, dtype: torch.dtype, seed: int) -> None:
    x = torch.randn(5, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    a, b = x.clone(), x.clone()
    out_plain = sc.run_interpreted(program, a, lr)
    out_tensor = sc.compile_tensorified(program, ["lr"])(b, lr)
    assert torch.equal(out_plain, out_tensor) and torch.equal(a, b)
    assert out_tensor.dtype == dtype


@pytest.mark.parametrize(
    ("program", "kinds"),
    [
        (p_method, ["method_inplace"]),
        (p_half, ["method_inplace", "composite", "plain"]),
        (
            p_divpow,
            ["method_inplace", "composite", "method_inplace", "composite", "method_inplace"],
        ),
    ],
)
def test_float_uses_and_structural_form(program: Any, kinds: list[str]) -> None:
    meta = sc.analyze_float_uses(program, ["lr"])
    assert [u.kind.value for u in meta.uses] == kinds
    tensorified = sc.codegen_tensorified(program, ["lr"])
    assert sc.structural_form(tensorified, ["lr"]) == sc.structural_form(
        sc._source_of(program), ["lr"]
    )


def test_negative_base_fractional_power_is_outside_the_contract() -> None:
    """Python gives a complex scalar for ``(-1.0) ** 0.5``; a 0-dim float64 tensor gives NaN.

    Eager then raises (complex into a float tensor) where the tensorified program computes
    NaN: tensorification is only equivalent where the scalar expression stays real.
    """
    with pytest.raises(RuntimeError, match="ComplexFloat"):
        p_divpow(torch.ones(2), -2.0)
    assert sc.compile_tensorified(p_divpow, ["lr"])(torch.ones(2), -2.0).isnan().all()


def test_comparisons_with_a_float_are_plain_uses() -> None:
    meta = sc.analyze_float_uses("def f(x, lr):\n    return x > lr, torch.where(x < lr, x, -x)\n", ["lr"])
    assert [(u.kind.value, u.op) for u in meta.uses] == [("plain", "compare"), ("plain", "compare")]
    assert sc.predict_compile_count(meta, 5, has_fix=True) == 2  # static first, then dynamic


@pytest.mark.parametrize("target", ["group['lr']", "opt.lr"])
def test_a_float_stored_into_an_object_escapes(target: str) -> None:
    meta = sc.analyze_float_uses(f"def f(opt, group, x, lr):\n    {target} = lr * 0.5\n    return x\n", ["lr"])
    assert [(u.kind.value, u.op) for u in meta.uses] == [("escapes", f"{target} ="), ("composite", "*")]
    plain = sc.analyze_float_uses("def f(x, lr):\n    y = lr\n    return x * y\n", ["lr"])
    assert sc.FloatUseKind.ESCAPES not in plain.kinds  # a local name is no escape


BRANCH = "def f(x, lr):\n    if lr > 0.3:\n        return x * lr\n    return x / lr\n"


@pytest.mark.parametrize(
    ("values", "dynamic", "expected"),
    [
        ([0.1, 0.01, 0.5, 1.5, 3.0], None, 3),  # static 0.1; dynamic for lr <= 0.3; dynamic for lr > 0.3
        ([0.1, 0.01, 0.02, 0.03, 0.04], None, 2),  # one branch only
        ([0.5, 0.1, 0.7, 0.2, 0.9], True, 2),  # dynamic from the start: one graph per branch
        (None, None, 5),  # no values: counted as specialised
    ],
)
def test_a_branch_on_the_float_compiles_once_per_outcome(
    values: list[float] | None, dynamic: bool | None, expected: int
) -> None:
    meta = sc.analyze_float_uses(BRANCH, ["lr"])
    bindings = None if values is None else [{"lr": v} for v in values]
    assert sc.predict_compile_count(meta, 5, has_fix=True, dynamic=dynamic, values=bindings) == expected


def test_a_branch_on_tensor_data_is_counted_as_specialised() -> None:
    meta = sc.analyze_float_uses("def f(x, lr):\n    if x.sum() > lr:\n        return x\n    return -x\n", ["lr"])
    values = [{"lr": v} for v in (0.1, 0.2, 0.3, 0.4, 0.5)]
    assert sc.predict_compile_count(meta, 5, has_fix=True, values=values) == 5


@pytest.mark.parametrize(
    ("source", "n", "dynamic", "expected"),
    [
        # the second value makes the float dynamic; tensorify cannot carry floor, so the attempt
        # specialises: one graph per value (the aborted dynamic attempt is no graph)
        ("import math\ndef f(a, t):\n    return math.floor(a ** 2) * t\n", 3, None, 3),
        ("def f(t, m):\n    if m.is_integer():\n        return t * 2\n    return t\n", 2, True, 2),
        ("def f(t, m):\n    return t * int(m)\n", 1, None, 1),  # one value never goes dynamic
        ("def f(t, m):\n    return t * int(m)\n", 2, False, 2),  # dynamic=False: specialised
    ],
    ids=["floor_automatic_dynamic", "is_integer_dynamic", "one_value", "static"],
)
def test_a_float_made_an_int_specialises_one_graph_per_value(
    source: str, n: int, dynamic: bool | None, expected: int
) -> None:
    meta = sc.analyze_float_uses(source, ["a" if "(a," in source else "m"])
    assert sc.FloatUseKind.SPECIALISING in meta.kinds
    assert sc.predict_compile_count(meta, n, has_fix=True, dynamic=dynamic) == expected
