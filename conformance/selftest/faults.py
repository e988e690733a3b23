"""Seeded faults: deliberately broken builds that prove every oracle can fail.

Contract faults wrap the compiled callable and break one contract (they work on any build).
Internals faults rewrite one function the build generates, before the build logs and executes
it (conformance/selftest/codegen.py), so the probe must see `diverges` and, where the change is
observable, a contract check must fail. Each fault names the behaviour whose contract it breaks,
and that behaviour's declaration lists it (conformance/behaviors).

A fault reaches a run only as an extension (`Fault.extension()`, see conformance/run/extensions.py), made for that
run: a wrapper touches no global, and an internals rewrite is undone when the variant ends
(also on error), so a normal run in the same process is untouched.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch

from conformance.behaviors import (
    BACKWARD_UNWRAP,
    MUTATION_EPILOGUE,
    RUNTIME_WRAPPER,
    SCALAR_RECOMPILE,
    SUBCLASS_WRAPPER,
    Artifact,
    Behavior,
)
from conformance.core.state import flatten_outputs, is_subclass, storage_key
from conformance.run.extensions import Compiled
from conformance.selftest import codegen


@dataclass(frozen=True)
class Fault:
    name: str
    behavior: Behavior
    contract: str
    level: Literal["contract", "internals"]
    wrap: Callable[[Compiled], Compiled] | None = None
    artifact: Artifact | None = None  # internals: the generated function it rewrites
    transform: codegen.Transform | None = None

    def extension(self) -> FaultExtension:
        return FaultExtension(self)


def contract_fault(name: str, behavior: Behavior, contract: str, wrap: Callable[[Compiled], Compiled]) -> Fault:
    return Fault(name, behavior, contract, "contract", wrap=wrap)


def internals_fault(name: str, behavior: Behavior, contract: str, transform: codegen.Transform) -> Fault:
    """A rewrite of the function the behaviour's build generates (its one declared artifact)."""
    (artifact,) = behavior.artifacts
    return Fault(name, behavior, contract, "internals", artifact=artifact, transform=transform)


class FaultExtension:
    """One run's application of a fault (a RunExtension); `hits` lists the generated functions it rewrote."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        self.hits: list[str] = []

    def compiled(self, compiled: Compiled) -> Compiled:
        return self.fault.wrap(compiled) if self.fault.wrap is not None else compiled

    def around_variant(self) -> contextlib.AbstractContextManager[None]:
        if self.fault.transform is None or self.fault.artifact is None:
            return contextlib.nullcontext()
        return codegen.rewriting(self.fault.artifact.name, self.fault.transform, self.hits)


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
                    # the values arrive, the storage identity does not: a copy into own memory
                    values = a.detach().clone()
                    own = storage if storage.nbytes() >= a.untyped_storage().nbytes() else (
                        torch.empty(a.untyped_storage().nbytes(), dtype=torch.uint8, device=a.device).untyped_storage()
                    )
                    a.set_(own, a.storage_offset(), a.size(), a.stride())
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


def outputs_as_list(compiled: Compiled) -> Compiled:
    """Return a tuple of outputs as a list (values and aliasing intact, the caller's unpacking not)."""

    @functools.wraps(compiled)
    def call(*args: Any) -> Any:
        out = compiled(*args)
        return list(out) if type(out) is tuple else out

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
        import torch._dynamo  # lazy: start-up

        torch._dynamo.reset()
        return compiled(*args)

    return call


CONTRACT_FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        contract_fault("output_perturbed", RUNTIME_WRAPPER, "outputs equal eager within tolerance", perturb_output()),
        contract_fault("output_just_beyond_tolerance", RUNTIME_WRAPPER, "outputs equal eager within tolerance",
              perturb_output(1e-4)),
        contract_fault("input_mutation_dropped", MUTATION_EPILOGUE, "mutated inputs end as in eager (copy_)",
              skip_input_mutation),
        contract_fault("outputs_restructured", RUNTIME_WRAPPER, "outputs keep eager's container structure",
              outputs_as_list),
        contract_fault("alias_returned_as_copy", RUNTIME_WRAPPER, "outputs aliasing inputs are real views",
              copy_aliased_outputs),
        contract_fault("grad_mode_left_changed", RUNTIME_WRAPPER, "grad mode restored after the call",
              leave_grad_mode_flipped),
        contract_fault("metadata_not_restored", MUTATION_EPILOGUE, "size/stride/offset end as in eager (as_strided_)",
              undo_metadata_mutation),
        contract_fault("storage_not_swapped", MUTATION_EPILOGUE, "storage identity ends as in eager (set_)",
              copy_instead_of_set),
        contract_fault("version_not_bumped", MUTATION_EPILOGUE, "version counters move as in eager",
              keep_version_counter),
        contract_fault("gradient_perturbed", BACKWARD_UNWRAP, "gradients equal eager", perturb_gradient),
        contract_fault("sweep_reuses_first_value", SCALAR_RECOMPILE, "every swept value gives eager's result",
              reuse_first_scalars),
        contract_fault("recompile_every_value", SCALAR_RECOMPILE, "one compile for the whole sweep",
              recompile_every_call),
    )
}




INTERNAL_FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        internals_fault("epilogue_statement_dropped", MUTATION_EPILOGUE,
                   "one statement group per mutated input", codegen.drop_last_statement),
        internals_fault("epilogue_set_as_copy", MUTATION_EPILOGUE,
                   "a storage swap is applied with set_", codegen.set_to_copy),
        internals_fault("epilogue_as_strided_dropped", MUTATION_EPILOGUE,
                   "a metadata mutation is applied with as_strided_", codegen.drop_as_strided),
        internals_fault("epilogue_slot_shifted", MUTATION_EPILOGUE,
                   "each mutation lands on its own input", codegen.shift_slot),
        internals_fault("epilogue_requires_grad_branch_dropped", MUTATION_EPILOGUE,
                   "a leaf that requires grad is written through detach()",
                   codegen.drop_requires_grad_branch),
        internals_fault("unwrap_drops_last_arg", BACKWARD_UNWRAP,
                   "the backward unwrap is the identity", codegen.unwrap_drops_last),
        internals_fault("subclass_type_check_dropped", SUBCLASS_WRAPPER,
                   "non-frozen subclass inputs are type-checked", codegen.drop_type_checks),
    )
}

FAULTS: dict[str, Fault] = {**CONTRACT_FAULTS, **INTERNAL_FAULTS}
