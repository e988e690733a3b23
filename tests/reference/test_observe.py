"""The metadata oracle on known programs, its region view, and the checks that catch a wrong
classification (each shown to report a deliberately wrong metadata)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
import torch
from torch.testing._internal.two_tensor import TwoTensor

from conformance.probe import ScalarSweep, probe
from conformance.probe.capture import CaptureResult
from reference_impl import subclass_wrapper as sw
from reference_impl.meta import (
    mutation_meta,
    predict_in_graph,
    runtime_wrapper_meta,
    scalar_meta,
    subclass_wrapper_meta,
    verify_mutation_meta,
    verify_output_meta,
)
from reference_impl.mutation_epilogue import MutationEpilogueMeta
from reference_impl.observe import observe
from reference_impl.region import region, synthetic_bases
from reference_impl.runtime_wrapper import (
    AliasKind,
    OutputSpec,
    RuntimeWrapperMeta,
    ViewSpec,
    codegen_alias_fn,
)
from reference_impl.scalar_recompile import FloatUseKind, predict_compile_count


def nonleaf(*shape: int) -> torch.Tensor:
    return (torch.arange(float(torch.Size(shape).numel())).reshape(shape) + 1).requires_grad_() * 1


def leaf(*shape: int) -> torch.Tensor:
    return (torch.arange(float(torch.Size(shape).numel())).reshape(shape) + 1).requires_grad_()


# -- mutations ---------------------------------------------------------------------------------


def data_mutation(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    return x.cos()


def transpose(x: torch.Tensor) -> torch.Tensor:
    x.transpose_(0, 1)
    return x * 2


def storage_swap(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.set_(y)
    return x + 1


def no_grad_leaf(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        x.mul_(2)
    return x * 3


def detach_leaf(x: torch.Tensor) -> torch.Tensor:
    x.detach().mul_(2)
    return x * 3


MUTATIONS: list[tuple[str, Callable[..., Any], Callable[[], list[Any]], tuple[bool, bool, bool]]] = [
    ("data mutation", data_mutation, lambda: [nonleaf(4)], (True, False, False)),
    ("transpose_", transpose, lambda: [torch.ones(2, 3)], (False, True, False)),
    ("set_", storage_swap, lambda: [torch.ones(4), torch.zeros(2, 3)], (False, False, True)),
    ("no_grad leaf mutation", no_grad_leaf, lambda: [leaf(4)], (True, False, False)),
]


@pytest.mark.parametrize(("label", "program", "make", "kind"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_mutation_is_classified_and_replays_to_eager(
    label: str, program: Callable[..., Any], make: Callable[[], list[Any]], kind: tuple[bool, bool, bool]
) -> None:
    obs = observe(program, make())
    (inp,) = obs.mutated_inputs
    assert (inp.mutates_data, inp.mutates_metadata, inp.mutates_storage) == kind, label
    # Everything applied by the epilogue (the set_ branch too, which 2.13.0 keeps in the
    # graph): the reference epilogue must rebuild eager from the functional after-states.
    meta = mutation_meta(obs, runtime_indices=[0])
    assert [m.index for m in meta.runtime_mutations] == [0]
    assert verify_mutation_meta(program, make, meta) == []


WRONG = [
    # (label, program, make, how the metadata is made wrong)
    ("data called metadata", data_mutation, lambda: [nonleaf(4)], {"mutates_data": False, "mutates_metadata": True}),
    (
        "transpose_ called data",
        transpose,
        lambda: [torch.ones(2, 3)],
        {"mutates_data": True, "mutates_metadata": False},
    ),
    (
        "set_ called metadata",
        storage_swap,
        lambda: [torch.ones(4), torch.zeros(2, 3)],
        {"mutates_storage": False, "mutates_metadata": True},
    ),
    ("no_grad leaf called non-leaf", no_grad_leaf, lambda: [leaf(4)], {"is_leaf": False}),
    ("the wrong input", data_mutation, lambda: [nonleaf(4), nonleaf(4)], {"index": 1}),
]


@pytest.mark.parametrize(("label", "program", "make", "wrong"), WRONG, ids=[w[0] for w in WRONG])
def test_a_wrong_mutation_classification_is_caught(
    label: str, program: Callable[..., Any], make: Callable[[], list[Any]], wrong: dict[str, Any]
) -> None:
    def call(*args: Any) -> Any:
        return program(*args[: program.__code__.co_argcount])

    meta = mutation_meta(observe(call, make()), runtime_indices=[0])
    bad = MutationEpilogueMeta(tuple(replace(m, **wrong) for m in meta.inputs), meta.trace_joint)
    assert verify_mutation_meta(call, make, meta) == []
    assert verify_mutation_meta(call, make, bad), label


def test_no_grad_leaf_mutation_is_hidden_and_may_stay_in_the_graph() -> None:
    (inp,) = observe(no_grad_leaf, [leaf(4)]).mutated_inputs
    assert inp.hidden_from_autograd and inp.under_no_grad and inp.before.is_leaf
    assert predict_in_graph(inp, keep_input_mutations=True)
    assert not predict_in_graph(inp, keep_input_mutations=False)


def test_a_detach_write_with_grad_on_is_applied_by_the_epilogue() -> None:
    """Autograd never sees it (hidden), but grad mode was on: not a no_grad mutation."""
    (inp,) = observe(detach_leaf, [leaf(4)]).mutated_inputs
    assert inp.hidden_from_autograd and not inp.under_no_grad
    assert not predict_in_graph(inp, keep_input_mutations=True)


def test_a_write_of_a_value_that_requires_grad_is_applied_by_the_epilogue() -> None:
    """From ``twotensor_mutated_then_transposed_call``: upstream reads ``requires_grad`` of the
    functional input after tracing, and ``a.add_(b)`` with ``b`` requiring grad makes ``a``
    require grad; a placement read before the call keeps the write in the graph."""

    def add_then_mul(a: torch.Tensor, b: torch.Tensor) -> None:
        a.add_(b, alpha=0.5)
        a.mul_(2)

    plain = torch.rand(3, 4, requires_grad=True).clone()
    for x in (torch.rand(3, 4), TwoTensor(torch.rand(3, 4), torch.rand(3, 4))):
        (inp,) = observe(add_then_mul, [x, plain.detach().requires_grad_().clone()]).mutated_inputs
        assert not inp.before.requires_grad and inp.after.requires_grad
        assert not predict_in_graph(inp, keep_input_mutations=True)
    (inp,) = observe(add_then_mul, [torch.rand(3, 4), torch.rand(3, 4)]).mutated_inputs
    assert predict_in_graph(inp, keep_input_mutations=True)


# -- outputs -----------------------------------------------------------------------------------


def output_view(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.view(-1), x * 2


def views_of_intermediate(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    y = x * 2
    return y, y.view(-1), y.t()


def lone_view_of_intermediate(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).view(-1)


def output_is_input(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return y, x.sin(), x


OUTPUTS: list[tuple[str, Callable[..., Any], Callable[[], list[Any]], list[tuple[AliasKind, int | None]]]] = [
    ("output view", output_view, lambda: [leaf(2, 3)], [(AliasKind.ALIAS_OF_INPUT, 0), (AliasKind.PLAIN, None)]),
    (
        "views of an intermediate that is an output",
        views_of_intermediate,
        lambda: [leaf(3, 4)],
        [(AliasKind.PLAIN, None), (AliasKind.ALIAS_OF_INTERMEDIATE, 0), (AliasKind.ALIAS_OF_INTERMEDIATE, 0)],
    ),
    # no grad: nothing for autograd to protect, the views are returned as they are
    (
        "views of an intermediate, no grad",
        views_of_intermediate,
        lambda: [torch.ones(3, 4)],
        [(AliasKind.PLAIN, None)] * 3,
    ),
    ("a lone view of an intermediate", lone_view_of_intermediate, lambda: [leaf(2, 3)], [(AliasKind.PLAIN, None)]),
    (
        "inputs returned",
        output_is_input,
        lambda: [leaf(5), torch.ones(5)],
        [(AliasKind.IS_INPUT, 1), (AliasKind.PLAIN, None), (AliasKind.IS_INPUT, 0)],
    ),
]


@pytest.mark.parametrize(("label", "program", "make", "expected"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_relation_is_classified_and_replays_to_eager(
    label: str, program: Callable[..., Any], make: Callable[[], list[Any]], expected: list[tuple[AliasKind, int]]
) -> None:
    obs = observe(program, make())
    assert [(o.kind, o.base_index) for o in obs.outputs] == expected, label
    assert verify_output_meta(program, make, runtime_wrapper_meta(obs)) == []


def with_output(meta: RuntimeWrapperMeta, index: int, spec: OutputSpec) -> RuntimeWrapperMeta:
    outputs = list(meta.outputs)
    outputs[index] = spec
    return replace(meta, outputs=tuple(outputs))


def test_a_wrong_output_classification_is_caught() -> None:
    make = lambda: [leaf(3, 4)]  # noqa: E731  # one-line factory
    meta = runtime_wrapper_meta(observe(views_of_intermediate, make()))
    plain = replace(meta.outputs[1], kind=AliasKind.PLAIN, base_index=None, view=None)
    wrong_base = replace(meta.outputs[2], base_index=1)
    of_input = replace(meta.outputs[1], kind=AliasKind.ALIAS_OF_INPUT, base_index=0)
    assert verify_output_meta(views_of_intermediate, make, meta) == []
    for bad in (
        with_output(meta, 1, plain),
        with_output(meta, 2, wrong_base),
        with_output(meta, 1, of_input),
        replace(meta, outputs=meta.outputs[:2]),
    ):
        assert verify_output_meta(views_of_intermediate, make, bad), bad.outputs
    view_meta = runtime_wrapper_meta(observe(output_view, [leaf(2, 3)]))
    as_plain = with_output(view_meta, 0, replace(view_meta.outputs[0], kind=AliasKind.PLAIN, base_index=None))
    assert verify_output_meta(output_view, lambda: [leaf(2, 3)], as_plain)


def test_a_wrapper_subclass_view_of_an_input_is_an_alias() -> None:
    """No storage of its own: ``x.t()`` of a TwoTensor relates to ``x`` through ``_base``."""

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.sin() * 2, x.t()

    def make() -> list[Any]:  # identical copies: eager and replay are compared by value
        return [TwoTensor(leaf(3, 4).detach(), -leaf(3, 4).detach()).requires_grad_()]

    obs = observe(f, make())
    assert [(o.kind, o.base_index) for o in obs.outputs] == [(AliasKind.PLAIN, None), (AliasKind.ALIAS_OF_INPUT, 0)]
    assert verify_output_meta(f, make, runtime_wrapper_meta(obs)) == []


# -- grad mode and the kind of graph -------------------------------------------------------------


def test_grad_disabled_inside_gives_an_inference_graph() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        y = x.sin()
        torch.set_grad_enabled(False)
        return y + 1

    grad = torch.is_grad_enabled()
    try:
        obs = observe(f, [leaf(4)])
    finally:
        torch.set_grad_enabled(grad)
    assert obs.grad_enabled_before and not obs.grad_enabled_after
    assert not obs.trace_joint
    assert runtime_wrapper_meta(obs).grad_enabled_after is False
    assert observe(lambda x: x.sin(), [leaf(4)]).trace_joint
    # a grad-requiring input mutated where autograd sees it needs a training graph
    assert observe(data_mutation, [nonleaf(4)]).trace_joint
    # nothing requires grad under no_grad: inference, although the input requires grad
    with torch.no_grad():
        assert not observe(lambda x: x.sin(), [leaf(4)]).trace_joint


# -- region terms ----------------------------------------------------------------------------------


def graph_order(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    a.mul_(2)
    c.add_(b)
    return a + c


def test_region_reindexes_inputs_and_outputs() -> None:
    obs = observe(graph_order, [nonleaf(4), leaf(4), nonleaf(4)])
    # dynamo: [s0, a, c, b]
    reg = region(obs, [None, 0, 2, 1], [0])
    assert [i.index if i else None for i in reg.inputs] == [None, 1, 2, 3]
    assert [m.index for m in mutation_meta(reg).inputs] == [1, 2]
    assert [m.index for m in mutation_meta(obs).inputs] == [0, 2]
    # an input returned by the frame is not a region output: no alias left to replay
    ret = observe(output_is_input, [leaf(5), torch.ones(5)])
    only_sin = region(ret, [0], [1])
    assert [(o.kind, o.base_index) for o in only_sin.outputs] == [(AliasKind.PLAIN, None)]
    assert runtime_wrapper_meta(only_sin).captured_inputs == ()
    with pytest.raises(IndexError):
        region(obs, [3])
    with pytest.raises(KeyError):
        region(obs, ["m.w"])


def test_region_lifts_attributes_and_keeps_their_subclass() -> None:
    w = TwoTensor(torch.randn(4, 4), torch.randn(4, 4))

    def f(x: torch.Tensor) -> torch.Tensor:
        return x @ w + 1

    obs = observe(f, [torch.randn(4, 4)], attributes={"m.w": w})
    reg = region(obs, ["m.w", 0])
    assert isinstance(reg.input_subclasses[0], sw.SubclassMeta)
    assert isinstance(reg.input_subclasses[1], sw.PlainMeta)
    frozen = subclass_wrapper_meta(reg, frozen_inputs=frozenset({0}))
    assert frozen is not None and frozen.frozen_inputs == frozenset({0})


# -- subclasses --------------------------------------------------------------------------------


def test_nested_twotensor_meta_unwraps_to_plain_leaves_and_rebuilds() -> None:
    def nested() -> torch.Tensor:
        inner = [TwoTensor(torch.randn(4, 2), torch.randn(4, 2)) for _ in range(2)]
        return TwoTensor(*inner)

    x = nested()
    obs = observe(lambda t: t.cos() + 1, [x])
    meta = subclass_wrapper_meta(obs)
    assert meta is not None
    (m,) = meta.inputs
    assert isinstance(m, sw.SubclassMeta) and m.cls is TwoTensor and m.arg_count == 4
    assert all(isinstance(inner, sw.SubclassMeta) and inner.cls is TwoTensor for _, inner in m.attrs)

    def graph_sees(meta_in: sw.SubclassWrapperMeta) -> list[Any]:
        seen: list[Any] = []
        sw.run_subclass_wrapper_interpreted(meta_in, lambda args: seen.extend(args) or list(args), [nested()])
        return seen

    assert all(type(a) is torch.Tensor for a in graph_sees(replace(meta, outputs=meta.inputs)))
    # a tree that stops one level early hands subclasses to the graph: caught
    flat = replace(m, attrs=(("a", sw.PlainMeta()), ("b", sw.PlainMeta())))
    assert any(type(a) is not torch.Tensor for a in graph_sees(replace(meta, inputs=(flat,), outputs=(flat,))))


def test_symbolic_positions_are_the_compilers_and_become_graph_arguments() -> None:
    x = TwoTensor(torch.randn(4, 3), torch.randn(4, 3))
    meta = sw.subclass_meta_of(x)
    dyn = sw.mark_symbolic(meta, {"": ((0, 1), (0,))})
    assert isinstance(dyn, sw.SubclassMeta)
    assert (dyn.outer_size, dyn.outer_stride) == ((None, None), (None, 1))
    assert dyn.arg_count == 2 + 3
    wrapper = sw.SubclassWrapperMeta((dyn,), ())
    seen: list[Any] = []
    sw.run_subclass_wrapper_interpreted(wrapper, lambda args: seen.extend(args) or [], [x])
    assert seen[2:] == [4, 3, 3]


# -- scalars -----------------------------------------------------------------------------------


def half_lr(x: torch.Tensor, lr: float) -> torch.Tensor:
    x.mul_(0.5 * lr)
    return x


def test_half_lr_is_a_composite_use_and_a_wrong_classification_is_caught() -> None:
    meta = scalar_meta(half_lr, [torch.ones(3), 0.1])
    assert meta.float_params == ("lr",)
    assert {u.kind for u in meta.uses} == {FloatUseKind.METHOD_INPLACE, FloatUseKind.COMPOSITE}
    assert predict_compile_count(meta, 5, has_fix=True, dynamic=True) == 1
    assert predict_compile_count(meta, 5, has_fix=True) == 2  # static first, then dynamic
    assert predict_compile_count(meta, 5, has_fix=False) == 5
    # A build without the fix recompiles per value: the right metadata calls that "absent",
    # a metadata that mistakes the use for a plain one cannot explain the count.
    plain = replace(meta, uses=tuple(replace(u, kind=FloatUseKind.PLAIN) for u in meta.uses))
    obs = observe(half_lr, [torch.ones(3), 0.1])

    def verdict(uses: Any) -> str:
        return probe(CaptureResult(), obs, scalar=ScalarSweep(uses, 5, 5))["scalar_recompile"].status

    assert verdict(meta) == "absent"
    assert verdict(plain) == "diverges"


# -- what a compiler's region makes of the program ----------------------------------------------


def test_overlapping_inputs_one_mutated_become_their_base() -> None:
    def f(x: torch.Tensor, xt: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        xt[0].add_(1)
        return x.sum() + xt.sum()

    x = torch.ones(3, 4)
    obs = observe(f, [x, x.t()])
    merged, order = synthetic_bases(region(obs, [0, 1]))
    assert order == (None,)  # one input: the base, which is x itself
    assert merged.raw_args[0] is x
    assert [i.index for i in merged.mutated_inputs] == [0]
    assert runtime_wrapper_meta(merged).version_bumps == (0,)
    # the program's view: two mutated inputs, two bumps
    assert runtime_wrapper_meta(obs).version_bumps == (0, 1)


def test_a_hidden_base_and_input_order_after_merging() -> None:
    base = torch.arange(10.0)

    def f(n: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a.mul_(2)
        return b * n

    obs = observe(f, [torch.ones(6), base[0:6], base[3:9]], attributes={"base": base})
    # region [s0, n, a, b] where slot 0 is a symbolic size: bases first, then non-tensors
    merged, order = synthetic_bases(region(obs, [None, 0, 1, 2]))
    assert order == (None, 0, 1)
    assert merged.raw_args[0] is base
    assert [i.index for i in merged.mutated_inputs] == [0]


def test_a_member_whose_geometry_changed_is_an_extra_output_viewing_the_base() -> None:
    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a.mul_(2)
        b.transpose_(1, 0)
        return a + 1

    base = torch.randn(2, 3)
    obs = observe(f, [base.view(2, 3), base.view(2, 3)], attributes={"base": base})
    merged, order = synthetic_bases(region(obs, [0, 1]))
    assert order == (None,)
    # the program's output, then b as a view of the base with its new geometry
    assert [(o.kind, o.base_index) for o in merged.outputs] == [
        (AliasKind.PLAIN, None), (AliasKind.ALIAS_OF_INPUT, 0)]
    assert merged.outputs[1].view == ViewSpec((3, 2), (1, 3), 0)
    meta = runtime_wrapper_meta(merged, keep_input_mutations=False)
    assert (meta.expected_outputs, meta.has_aliases) == (3, True)  # the base's update, the output, b


def test_disjoint_views_or_no_mutation_keep_the_region() -> None:
    base = torch.arange(10.0)

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a.mul_(2)
        return b * 1

    disjoint = observe(f, [base[0:5], base[5:10]])
    assert synthetic_bases(region(disjoint, [0, 1]))[1] == (0, 1)
    read_only = observe(lambda a, b: a + b, [base[0:6], base[3:9]])
    assert synthetic_bases(region(read_only, [0, 1]))[1] == (0, 1)


def test_multi_output_view_pieces_and_nested_returns() -> None:
    def f(x: torch.Tensor) -> tuple[Any, ...]:
        return x.unbind(0), [x.split(2, dim=1)[0]], {"c": x.view(-1)}

    pieces = observe(f, [leaf(4, 6)])
    assert len(pieces.outputs) == 4 + 1 + 1
    # differentiable unbind/split pieces are plain; the view(-1) makes the storage's other
    # outputs count, so here every output is regenerated from the input
    assert {o.kind for o in pieces.outputs} == {AliasKind.ALIAS_OF_INPUT}
    only_pieces = observe(lambda x: x.unbind(0), [leaf(4, 6)])
    assert {o.kind for o in only_pieces.outputs} == {AliasKind.PLAIN}
    with torch.no_grad():  # no grad_fn: ordinary aliases of the input
        no_grad = observe(lambda x: x.unbind(0), [leaf(4, 6)])
    assert {o.kind for o in no_grad.outputs} == {AliasKind.ALIAS_OF_INPUT}


def test_an_output_aliases_the_input_it_derives_from_when_inputs_share_a_storage() -> None:
    """Two unmutated inputs viewing one base are separate storages to a compiler that does not
    merge them: each output regenerates off the input it was computed from. Sharing alone
    names the first input for both; the separated rerun tells them apart."""
    base = torch.randn(2, 2, requires_grad=True).mul(2)
    a, b = base.view(-1), base[0]

    def f(a: torch.Tensor, b: torch.Tensor) -> list[torch.Tensor]:
        return [a.view(a.shape), b.view(b.shape)]

    obs = observe(f, [a, b])
    assert [(o.kind, o.base_index) for o in obs.outputs] == [
        (AliasKind.ALIAS_OF_INPUT, 0),
        (AliasKind.ALIAS_OF_INPUT, 1),
    ]
    # in region terms (the inputs swapped) each output still names its own input
    swapped = region(obs, (1, 0), (0, 1))
    assert [o.base_index for o in swapped.outputs] == [1, 0]
    # without the rerun both would name input 0
    blind = replace(obs, output_origins=None)
    assert [o.base_index for o in region(blind, (0, 1), (0, 1)).outputs] == [0, 0]


def test_mutated_aliased_inputs_are_merged_whatever_their_origins() -> None:
    """A region that writes overlapping inputs gets one synthetic base for them, so which one an
    output derives from no longer matters; a region that does not write them (the write lay
    in another region of the call) keeps them apart, and the origins tell them apart."""
    base = torch.randn(4)
    a, b = base[:2], base[1:3]

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a.add_(1)
        return b.view(-1)

    obs = observe(f, [a, b])
    assert obs.output_origins == (frozenset({1}),)
    merged, order = synthetic_bases(obs)
    assert order == (None,) and merged.outputs[0].base_index == 0
    unwritten = replace(obs, inputs=tuple(
        i if i is None else replace(i, mutates_data=False) for i in obs.inputs))
    assert [o.base_index for o in region(unwritten, (0, 1)).outputs] == [1]


def test_a_program_that_needs_its_arguments_aliasing_is_observed_without_origins() -> None:
    """The separated rerun is a second opinion only: a program that fails on separated copies
    (it checks that its arguments share a storage) is observed as before, origins unknown."""
    base = torch.randn(4)
    a, b = base[:2], base[2:]

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
            raise RuntimeError("needs aliased arguments")
        return b.view(-1)

    obs = observe(f, [a, b])
    assert obs.output_origins is None
    assert [(o.kind, o.base_index) for o in obs.outputs] == [(AliasKind.ALIAS_OF_INPUT, 0)]


def _set_then_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.set_(y)
    x.mul_(2)
    return x + y


def _through_a_view(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    y[:2].mul_(2)
    return x + y


def _write_first_row(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a.add_(1)
    return a + b


def _rows_detached_from_one_base() -> list[torch.Tensor]:
    base = torch.randn(4, 4)
    return [base[0].detach(), base[1].detach()]


def _same_values_through_a_view(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    b[1:].mul_(1)
    return a + b


def _swap_storage(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        x.set_(y * 2)
    return x + y


def _swap_storage_then_write(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        x.set_(y * 2)
        x.add_(1)
    return x + y


def _batch_norm_stats(x: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.batch_norm(x, mean, torch.ones(3), training=True)


@pytest.mark.parametrize(
    ("program", "make", "bumped"),
    [
        # y's values change through x, which set_ put on y's storage: eager's counter of y stays
        (_set_then_mul, lambda: [torch.randn(6), torch.randn(6)], (0,)),
        # a view shares its base's counter
        (_through_a_view, lambda: [torch.randn(6), torch.randn(6)], (1,)),
        # the kernel writes the running mean without an in-place op or a bump: the graph's
        # copy-back bumps it (a known difference cases accept), so the wrapper bumps too
        (_batch_norm_stats, lambda: [torch.randn(4, 3), torch.zeros(3)], (1,)),
        # detach() shares the counter: writing row 0 moves row 1's counter but writes none of
        # it, and one bump of the shared counter is eager's
        (_write_first_row, _rows_detached_from_one_base, (0,)),
        # a write of the same values over b is still a write of b
        (_same_values_through_a_view, _rows_detached_from_one_base, (1,)),
        # a storage swap alone is no data mutation to functionalization: no bump
        (_swap_storage, lambda: [torch.randn(6), torch.randn(6)], ()),
        (_swap_storage_then_write, lambda: [torch.randn(6), torch.randn(6)], (0,)),
    ],
    ids=[
        "set_then_mul",
        "through_a_view",
        "batch_norm_stats",
        "counter_shared_through_detach",
        "same_values_written",
        "storage_swapped",
        "storage_swapped_then_written",
    ],
)
def test_version_bumps_follow_eagers_counters_not_the_storages_values(
    program: Callable[..., Any], make: Callable[[], list[torch.Tensor]], bumped: tuple[int, ...]
) -> None:
    meta = runtime_wrapper_meta(observe(program, make()))
    assert meta.version_bumps == bumped


class _PassThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * 0.5


@pytest.mark.parametrize(
    ("program", "kinds"),
    [
        # regenerating it as a view of x would lose the Function's backward
        (_PassThrough.apply, [AliasKind.PLAIN]),
        # a view of an unbind piece is a multi-output view too; a plain view of x is an alias
        (lambda x: (x.unbind(0)[2].unsqueeze(1), x.sin(), x.unbind(0)[0].unsqueeze(0)),
         [AliasKind.PLAIN, AliasKind.PLAIN, AliasKind.PLAIN]),
        (lambda x: (x.view(-1), x.sin()), [AliasKind.ALIAS_OF_INPUT, AliasKind.PLAIN]),
    ],
    ids=["custom_function", "views_of_unbind_pieces", "plain_view"],
)
def test_outputs_autograd_cannot_regenerate_from_their_base_are_not_aliases(
    program: Callable[..., Any], kinds: list[AliasKind]
) -> None:
    obs = observe(program, [leaf(4, 3)])
    assert [o.kind for o in obs.outputs] == kinds


class _Opaque(torch.Tensor):
    """A wrapper subclass without the flatten protocol: its storage refuses data_ptr()."""

    @staticmethod
    def __new__(cls, elem: torch.Tensor) -> _Opaque:
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)  # type: ignore[attr-defined,no-any-return]  # public hook, untyped

    def __init__(self, elem: torch.Tensor) -> None:
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        unwrap = [a.elem if isinstance(a, _Opaque) else a for a in args]
        out = func(*unwrap, **(kwargs or {}))
        return _Opaque(out) if isinstance(out, torch.Tensor) else out  # detach() stays opaque


def test_an_output_wrapper_without_the_flatten_protocol_is_observed_as_a_fresh_tensor() -> None:
    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.sin() * 2
        return _Opaque(y), y

    obs = observe(f, [torch.randn(4)])
    assert [o.kind for o in obs.outputs] == [AliasKind.PLAIN, AliasKind.PLAIN]


def test_an_alias_whose_base_is_an_aliased_output_unwraps_that_base_in_training() -> None:
    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = (x + 1).transpose(0, 1)
        return y.detach(), y

    meta = runtime_wrapper_meta(observe(f, [leaf(3, 3)]))
    assert meta.trace_joint
    # y.detach() is regenerated from y, itself an alias of the intermediate x + 1
    assert [(o.kind, o.base_index) for o in meta.outputs] == [
        (AliasKind.ALIAS_OF_INTERMEDIATE, 1), (AliasKind.ALIAS_OF_INTERMEDIATE, 2)]
    source, _ = codegen_alias_fn(meta)
    assert "gen_alias_from_base(_unwrap_tensoralias(fw_outs[1])" in source
    assert "gen_alias_from_base(fw_outs[2]" in source


def test_an_output_returned_twice_is_a_base_by_its_last_position() -> None:
    def f(x: torch.Tensor) -> list[torch.Tensor]:
        y = x * 3
        return [y, y.view(-1), y]

    obs = observe(f, [leaf(3, 3)])
    assert [(o.kind, o.base_index) for o in obs.outputs] == [
        (AliasKind.PLAIN, None), (AliasKind.ALIAS_OF_INTERMEDIATE, 2), (AliasKind.PLAIN, None)]


def test_a_program_output_viewing_an_input_the_program_does_not_see_is_its_alias() -> None:
    # the region after a graph break receives the loss (unseen by the program) and returns it
    # detached: the program's observation cannot relate them, the trace's alias can
    obs = observe(lambda x: (x * 2).sum().detach(), [torch.randn(3)])
    seen = region(obs, [None], [0])
    assert seen.outputs[0].kind is AliasKind.PLAIN
    aliased = region(obs, [None], [0], unseen_outputs={0: (0, ((), (), 0))})
    assert (aliased.outputs[0].kind, aliased.outputs[0].base_index) == (AliasKind.ALIAS_OF_INPUT, 0)
    itself = region(obs, [None], [0], unseen_outputs={0: (0, None)})
    assert itself.outputs[0].kind is AliasKind.IS_INPUT
    # an input the program sees is related by the observation, not overridden
    plain = observe(lambda x: x.sum().detach(), [torch.randn(3)])
    assert region(plain, [0], [0], unseen_outputs={0: (0, ((), (), 0))}).outputs[0].kind is AliasKind.PLAIN
