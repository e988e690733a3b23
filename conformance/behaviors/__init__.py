"""The five behaviours under test, declared once each.

A declaration holds what is the behaviour's own: its id, title, upstream change, contract, and the generated
artifacts the build logs for it. Each of its parts says which behaviour it serves where the part is declared: a
probe module its `BEHAVIOR` (conformance/probe), an oracle check its `behaviors` (conformance/core/checks.py, by
id: the core imports nothing of the harness), a seeded fault its `behavior` (conformance/selftest/faults.py), a
bench table its `behavior` (conformance/bench/suites.py), a case file its `behavior` and folder (cases/<id>/).
parts.py beside this module gathers each behaviour with its parts as objects (`torch-conformance behaviors` prints
them), and names the reference implementation, which cannot name the harness. The case schema's choices, the probe's
artifact map, the report's order and the docs come from BEHAVIORS.

No torch here: the schema, the loader and the report read this module on machines without one (parts.py imports
torch).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Artifact:
    """Generated code a build logs: its structured-trace artifact name, and the name of the
    function it defines (how the same code is recognised when it arrives under another name)."""

    name: str
    function: str


@dataclass(frozen=True)
class Behavior:
    id: str
    title: str
    upstream: str
    contract: str
    artifacts: tuple[Artifact, ...]


MUTATION_EPILOGUE = Behavior(
    id="mutation_epilogue",
    title="mutation epilogue",
    upstream="https://github.com/pytorch/pytorch/pull/179600",
    contract="After a compiled call every mutated input ends exactly as in eager: its values (copy_), its "
    "size/stride/offset (as_strided_), its storage identity (set_); a leaf that requires grad, mutated under "
    "no_grad, keeps working autograd (detach().copy_); version counters move as in eager.",
    artifacts=(Artifact("mutation_epilogue", "_apply_mutations"),),
)

RUNTIME_WRAPPER = Behavior(
    id="runtime_wrapper",
    title="runtime-wrapper orchestration",
    upstream="https://github.com/pytorch/pytorch/pull/181271",
    contract="The call wrapper captures the inputs, turns grad mode off for an inference call and restores it "
    "after, keeps a set_grad_enabled made inside the region, returns outputs that alias inputs or "
    "intermediates as real views (shared storage, _base, writes seen through both), marks dynamic dims, "
    "returns the right number and structure of outputs, and handles detached inputs.",
    artifacts=(Artifact("runtime_wrapper_orchestration", "_runtime_wrapper"),
               Artifact("output_alias_wrapper", "_alias_fn")),
)

SUBCLASS_WRAPPER = Behavior(
    id="subclass_wrapper",
    title="tensor-subclass wrapper",
    upstream="https://github.com/pytorch/pytorch/pull/176741",
    contract="Tensor subclasses (TwoTensor, nested TwoTensor(TwoTensor, TwoTensor)) go in and come out with the "
    "right type, inner tensors, sizes and strides, also with dynamic shapes; subclass parameters frozen by "
    "inductor freezing still give eager's results.",
    artifacts=(Artifact("subclass_wrapper", "inner_fn"),),
)

BACKWARD_UNWRAP = Behavior(
    id="backward_unwrap",
    title="backward identity unwrap",
    upstream="https://github.com/pytorch/pytorch/pull/178927",
    contract="Backward through a compiled function with subclass (and mixed plain and subclass) inputs gives "
    "eager's gradients, of the right subclass type.",
    artifacts=(Artifact("backward_subclass_unwrap", "unwrap_fn"),),
)

SCALAR_RECOMPILE = Behavior(
    id="scalar_recompile",
    title="scalar-tensorify recompile fix",
    upstream="https://github.com/pytorch/pytorch/pull/179395",
    contract="With torch._dynamo.config.specialize_float = False, Python floats used in method-form in-place ops "
    "(mul_, div_, add_, sub_) and composite expressions (0.5 * lr, b ** 0.5) compile once for a whole sweep "
    "of values, and every value gives eager's result, under every backend, with caches warm.",
    artifacts=(),
)

BEHAVIORS: tuple[Behavior, ...] = (MUTATION_EPILOGUE, RUNTIME_WRAPPER, SUBCLASS_WRAPPER, BACKWARD_UNWRAP,
                                   SCALAR_RECOMPILE)
IDS: tuple[str, ...] = tuple(b.id for b in BEHAVIORS)


# Wrappers builds generate and name that no behaviour probes: never taken for a probed one
# because they define a function of the same name (a dedupe wrapper's `inner_fn`).
UNPROBED_ARTIFACTS: tuple[str, ...] = ("dedup_wrapper", "synthetic_base_wrapper", "debug_assert_wrapper",
                                       "compiled_fn_wrapper", "backward_prologue", "backward_epilogue",
                                       "compiled_function_forward", "compiled_function_backward")


def artifact(name: str) -> Artifact:
    """The declared artifact of that name (what the probe and the capture look for)."""
    return next(a for b in BEHAVIORS for a in b.artifacts if a.name == name)
