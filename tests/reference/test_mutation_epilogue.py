"""interpreted ≡ codegen for the mutation epilogue, on random metadata and real tensors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from reference_impl import mutation_epilogue as me

KINDS = ("data", "metadata", "data+metadata", "storage")


@dataclass(frozen=True)
class InputCase:
    shape: tuple[int, ...]
    dtype: torch.dtype
    transposed: bool
    offset: int
    leaf: bool
    requires_grad: bool
    kind: str
    in_graph: bool
    meta_is_leaf: bool


input_cases = st.builds(
    InputCase,
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    transposed=st.booleans(),
    offset=st.integers(0, 3),
    leaf=st.booleans(),
    requires_grad=st.booleans(),
    kind=st.sampled_from(KINDS),
    in_graph=st.booleans(),
    meta_is_leaf=st.booleans(),
)
scenarios = st.tuples(
    st.lists(input_cases, min_size=1, max_size=4), st.booleans(), st.integers(0, 2**31 - 1)
)


def build(
    cases: list[InputCase], trace_joint: bool, seed: int
) -> tuple[me.MutationEpilogueMeta, dict[int, torch.Tensor], list[Any]]:
    """Deterministic inputs + updated values for one scenario (called once per form)."""
    g = torch.Generator().manual_seed(seed)
    origs: dict[int, torch.Tensor] = {}
    metas = []
    for i, c in enumerate(cases):
        numel = 1
        for s in c.shape:
            numel *= s
        storage = torch.randn(numel + c.offset + 2, generator=g, dtype=c.dtype)
        shape = tuple(reversed(c.shape)) if c.transposed and len(c.shape) > 1 else c.shape
        t = storage[c.offset : c.offset + numel].view(shape)
        if c.transposed and len(c.shape) > 1:
            t = t.transpose(0, 1)
        if c.leaf:
            t = t.detach().requires_grad_(c.requires_grad)
        else:
            t = (t.detach().requires_grad_(True) * 1) if c.requires_grad else t.detach()
        origs[i] = t
        metas.append(
            me.InputMutation(
                index=i,
                mutates_data="data" in c.kind,
                mutates_metadata="metadata" in c.kind,
                mutates_storage=c.kind == "storage",
                is_leaf=c.meta_is_leaf,
                requires_grad=c.requires_grad,
                in_graph=c.in_graph,
            )
        )
    meta = me.MutationEpilogueMeta(tuple(metas), trace_joint=trace_joint)
    updated: list[Any] = []
    for m in meta.runtime_mutations:
        orig = origs[m.index]
        room = orig.untyped_storage().nbytes() // orig.element_size()
        k = int(torch.randint(1, room + 1, (1,), generator=g))
        off = int(torch.randint(0, room - k + 1, (1,), generator=g))
        if m.mutates_storage:
            value: Any = torch.randn(k + 1, generator=g, dtype=orig.dtype)
        elif m.mutates_data and not m.mutates_metadata:
            value = torch.randn(orig.shape, generator=g, dtype=orig.dtype)
        elif m.mutates_metadata and not m.mutates_data:
            value = orig.detach().as_strided((k,), (1,), off)
        else:
            value = torch.randn(k, generator=g, dtype=orig.dtype).as_strided((k,), (1,), 0)
            value = torch.empty(room, dtype=orig.dtype).as_strided((k,), (1,), off).copy_(value)
        if trace_joint and (m.mutates_storage or (m.mutates_metadata and not m.mutates_data)):
            value = me.OutputAlias(value)
        updated.append(value)
    return meta, origs, updated


def state(t: torch.Tensor, updated: list[Any]) -> tuple[Any, ...]:
    upd_ptrs = tuple(
        t.untyped_storage().data_ptr() == me.unwrap_alias(u).untyped_storage().data_ptr()
        if isinstance(u, me.OutputAlias)
        else t.untyped_storage().data_ptr() == u.untyped_storage().data_ptr()
        for u in updated
    )
    return (
        tuple(t.shape),
        t.stride(),
        t.storage_offset(),
        t.detach().clone().tolist(),
        t.requires_grad,
        t.is_leaf,
        type(t.grad_fn).__name__,
        t._version,
        upd_ptrs,
    )


def outcome(
    apply: Callable[[Any, Any], None], origs: dict[int, torch.Tensor], updated: list[Any]
) -> tuple[Any, ...]:
    try:
        apply(origs, updated)
        error = None
    except Exception as exc:  # the error itself is the observed outcome
        error = (type(exc).__name__, str(exc))
    return error, [state(origs[i], updated) for i in sorted(origs)]


def check(
    scenario: tuple[list[InputCase], bool, int],
    compile_fn: Callable[[me.MutationEpilogueMeta], Callable[[Any, Any], None]],
) -> None:
    cases, joint, seed = scenario
    meta, o1, u1 = build(cases, joint, seed)
    _, o2, u2 = build(cases, joint, seed)
    interpreted = outcome(lambda o, u: me.apply_mutations_interpreted(meta, o, u), o1, u1)
    generated = outcome(compile_fn(meta), o2, u2)
    assert generated == interpreted


@given(scenarios)
def test_interpreted_equals_codegen(scenario: tuple[list[InputCase], bool, int]) -> None:
    check(scenario, me.compile_mutation_epilogue)


def _without_requires_grad_branch(meta: me.MutationEpilogueMeta) -> Callable[[Any, Any], None]:
    source, globals_ = me.codegen_mutation_epilogue(meta)
    lines = []
    for line in source.splitlines():
        if ".requires_grad: " in line:
            continue  # drop the leaf branch ...
        lines.append(line.replace("    else: ", "    "))  # ... and keep the plain copy_
    namespace = dict(globals_)
    exec("\n".join(lines), namespace)
    return namespace["_apply_mutations"]  # type: ignore[no-any-return]


def test_property_fails_when_a_codegen_branch_is_dropped() -> None:
    broken = given(scenarios)(lambda scenario: check(scenario, _without_requires_grad_branch))
    with pytest.raises(AssertionError):
        broken()


def test_leaf_requiring_grad_needs_the_branch() -> None:
    leaf = InputCase((3,), torch.float32, False, 0, True, True, "data", False, True)
    check(([leaf], True, 0), me.compile_mutation_epilogue)
    with pytest.raises(AssertionError):
        check(([leaf], True, 0), _without_requires_grad_branch)


def test_codegen_is_straight_line_one_group_per_input() -> None:
    meta = me.MutationEpilogueMeta(
        (
            me.InputMutation(0, mutates_data=True, is_leaf=False),
            me.InputMutation(1, mutates_metadata=True),
            me.InputMutation(2, mutates_storage=True),
            me.InputMutation(3, mutates_data=True, mutates_metadata=True, is_leaf=True),
            me.InputMutation(4, mutates_data=True, in_graph=True),
        ),
        trace_joint=True,
    )
    source, _ = me.codegen_mutation_epilogue(meta)
    assert "for " not in source
    form = me.structural_form(source)
    assert form.slots == (0, 1, 2, 3)
    assert [len(ops) for _, ops in form.groups] == [1, 1, 1, 3]
    assert (
        "[with torch.no_grad()] orig_inputs[2].set_(unwrap_alias(updated_inputs[2]))"
        in (form.groups[2][1])
    )
