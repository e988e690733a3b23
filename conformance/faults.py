"""Contract-level faults: wrappers that make a compiled callable break one contract on purpose.

They prove the oracles can fail (tests, `torch-conformance selftest`). A fault is applied by
passing it in `RunOptions.fault` for one run only; nothing here patches torch or any global,
so a normal run in the same process is untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from conformance.snapshot import flatten_outputs, is_subclass, storage_key

Compiled = Callable[..., Any]


@dataclass(frozen=True)
class Fault:
    name: str
    behavior: str
    contract: str
    wrap: Callable[[Compiled], Compiled]


def _float_tensors(args: tuple[Any, ...]) -> list[torch.Tensor]:
    return [a for a in args if isinstance(a, torch.Tensor) and a.dtype.is_floating_point]


def _map_outputs(out: Any, fn: Callable[[torch.Tensor, int], torch.Tensor]) -> Any:
    counter = iter(range(10**9))

    def go(value: Any) -> Any:
        if isinstance(value, tuple | list):
            return type(value)(go(v) for v in value)
        if isinstance(value, torch.Tensor):
            return fn(value, next(counter))
        return value

    return go(out)


def perturb_output(scale: float = 1e-2) -> Callable[[Compiled], Compiled]:
    def wrap(compiled: Compiled) -> Compiled:
        @functools.wraps(compiled)
        def call(*args: Any) -> Any:
            out = compiled(*args)

            def bump(t: torch.Tensor, k: int) -> torch.Tensor:
                if k == 0 and t.dtype.is_floating_point:
                    return t + scale * (t.detach().abs() + 1)
                return t

            return _map_outputs(out, bump)

        return call

    return wrap


def skip_input_mutation(compiled: Compiled) -> Compiled:
    """Run on copies of the tensor inputs: a mutation lands on the copy, not the caller's input."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        copies = [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a
                  for a in args]
        return compiled(*copies)

    return call


def copy_aliased_outputs(compiled: Compiled) -> Compiled:
    """Return a copy where an output shares storage with an input (the alias is lost)."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        keys = {storage_key(a) for a in args if isinstance(a, torch.Tensor)} - {None}
        out = compiled(*args)

        def unalias(t: torch.Tensor, _k: int) -> torch.Tensor:
            if storage_key(t) in keys or any(t is a for a in args):
                return t.clone()
            return t

        return _map_outputs(out, unalias)

    return call


def leave_grad_mode_flipped(compiled: Compiled) -> Compiled:
    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        out = compiled(*args)
        torch.set_grad_enabled(not torch.is_grad_enabled())
        return out

    return call


def undo_metadata_mutation(compiled: Compiled) -> Compiled:
    """Put every input's size/stride/offset back after the call (a metadata mutation is lost)."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        geometry = [(a, a.size(), a.stride(), a.storage_offset()) for a in args
                    if isinstance(a, torch.Tensor) and not is_subclass(a)]
        out = compiled(*args)
        with torch.no_grad():
            for a, size, stride, offset in geometry:
                if (a.size(), a.stride(), a.storage_offset()) != (size, stride, offset):
                    a.as_strided_(size, stride, offset)
        return out

    return call


def copy_instead_of_set(compiled: Compiled) -> Compiled:
    """Where the call swapped an input's storage (set_), copy the values into the old one instead."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        before = [(a, a.untyped_storage()) for a in args if isinstance(a, torch.Tensor) and not is_subclass(a)]
        out = compiled(*args)
        with torch.no_grad():
            for a, storage in before:
                if a.untyped_storage().data_ptr() != storage.data_ptr():
                    values = a.detach().clone()
                    needed = (a.storage_offset() + a.numel()) * a.element_size()
                    if storage.nbytes() >= needed:
                        a.set_(storage, a.storage_offset(), a.size(), a.stride())
                        a.copy_(values)
        return out

    return call


def keep_version_counter(compiled: Compiled) -> Compiled:
    """Reset inputs' version counters after the call (autograd would miss the mutation)."""
    setter = getattr(torch._C._autograd, "_unsafe_set_version_counter", None)

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        versions = [t._version for t in tensors]
        out = compiled(*args)
        if setter is not None:
            for t, v in zip(tensors, versions, strict=True):
                setter((t,), (v,))
        return out

    return call


def perturb_gradient(compiled: Compiled) -> Compiled:
    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        out = compiled(*args)
        for t in flatten_outputs(out):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                t.register_hook(lambda g: g * 1.05)  # type: ignore[no-untyped-call]  # torch leaves it untyped
        return out

    return call


def reuse_first_scalars(compiled: Compiled) -> Compiled:
    """Every call sees the Python scalars of the first call (a sweep that ignores new values)."""
    first: list[Any] = []

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        if not first:
            first.extend(args)
        fixed = [f if isinstance(a, float | int) and isinstance(f, float | int) else a
                 for a, f in zip(args, first, strict=False)]
        return compiled(*fixed)

    return call


def recompile_every_call(compiled: Compiled) -> Compiled:
    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        import torch._dynamo

        torch._dynamo.reset()
        return compiled(*args)

    return call


FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        Fault("output_perturbed", "runtime_wrapper", "outputs equal eager within tolerance", perturb_output()),
        Fault("output_just_beyond_tolerance", "runtime_wrapper", "outputs equal eager within tolerance",
              perturb_output(1e-4)),
        Fault("input_mutation_dropped", "mutation_epilogue", "mutated inputs end as in eager (copy_)",
              skip_input_mutation),
        Fault("alias_returned_as_copy", "runtime_wrapper", "outputs aliasing inputs are real views",
              copy_aliased_outputs),
        Fault("grad_mode_left_changed", "runtime_wrapper", "grad mode restored after the call",
              leave_grad_mode_flipped),
        Fault("metadata_not_restored", "mutation_epilogue", "size/stride/offset end as in eager (as_strided_)",
              undo_metadata_mutation),
        Fault("storage_not_swapped", "mutation_epilogue", "storage identity ends as in eager (set_)",
              copy_instead_of_set),
        Fault("version_not_bumped", "mutation_epilogue", "version counters move as in eager",
              keep_version_counter),
        Fault("gradient_perturbed", "backward_unwrap", "gradients equal eager", perturb_gradient),
        Fault("sweep_reuses_first_value", "scalar_recompile", "every swept value gives eager's result",
              reuse_first_scalars),
        Fault("recompile_every_value", "scalar_recompile", "one compile for the whole sweep",
              recompile_every_call),
    )
}
