"""The five behaviours under test, declared once each.

Everything about a behaviour is one hop from its declaration here: the upstream change, the
contract, the reference implementation (`reference_impl/<reference>.py`), the cases
(`cases/<id>/`), the oracle checks that speak to it (produced by `conformance/core/call.py`),
the internals probe (`conformance/probe/<id>.py`) and the generated artifacts it reads, the
self-check's faults (`conformance/selftest/faults.py`) and the bench tables
(`conformance/bench/suites.py`). The case schema's choices, the probe's artifact map, the
report's order and the docs all come from BEHAVIORS; tests/test_behaviors.py checks
that every name here exists where it points.

No torch here: the schema, the loader and the report read this module on machines without one.
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
    reference: str
    artifacts: tuple[Artifact, ...]
    checks: tuple[str, ...]
    faults: tuple[str, ...]
    bench: tuple[str, ...]

    def home(self, what: str) -> str:
        """Where its `cases` folder or its `probe` module is: both are named after the id."""
        return {"cases": f"cases/{self.id}", "probe": f"conformance.probe.{self.id}"}[what]


MUTATION_EPILOGUE = Behavior(
    id="mutation_epilogue",
    title="mutation epilogue",
    upstream="https://github.com/pytorch/pytorch/pull/179600",
    contract="After a compiled call every mutated input ends exactly as in eager: its values (copy_), its "
    "size/stride/offset (as_strided_), its storage identity (set_); a leaf that requires grad, mutated under "
    "no_grad, keeps working autograd (detach().copy_); version counters move as in eager.",
    reference="mutation_epilogue",
    artifacts=(Artifact("mutation_epilogue", "_apply_mutations"),),
    checks=("values", "storage contents", "shape", "stride", "storage_offset", "storage swapped (set_)",
            "shares storage with", "_version moved", "_version delta", "requires_grad", "is_leaf"),
    faults=("input_mutation_dropped", "metadata_not_restored", "storage_not_swapped", "version_not_bumped",
            "epilogue_statement_dropped", "epilogue_set_as_copy", "epilogue_as_strided_dropped",
            "epilogue_slot_shifted", "epilogue_requires_grad_branch_dropped"),
    bench=("mutation_epilogue",),
)

RUNTIME_WRAPPER = Behavior(
    id="runtime_wrapper",
    title="runtime-wrapper orchestration",
    upstream="https://github.com/pytorch/pytorch/pull/181271",
    contract="The call wrapper captures the inputs, turns grad mode off for an inference call and restores it "
    "after, keeps a set_grad_enabled made inside the region, returns outputs that alias inputs or "
    "intermediates as real views (shared storage, _base, writes seen through both), marks dynamic dims, "
    "returns the right number and structure of outputs, and handles detached inputs.",
    reference="runtime_wrapper",
    artifacts=(Artifact("runtime_wrapper_orchestration", "_runtime_wrapper"),
               Artifact("output_alias_wrapper", "_alias_fn")),
    checks=("structure", "number of outputs", "is the input object", "view of (_base)", "shares storage with",
            "grad mode", "inference mode", "autocast", "in-place write through outputs", "exception"),
    faults=("outputs_restructured", "alias_returned_as_copy", "grad_mode_left_changed", "output_perturbed",
            "output_just_beyond_tolerance"),
    bench=("runtime_wrapper",),
)

SUBCLASS_WRAPPER = Behavior(
    id="subclass_wrapper",
    title="tensor-subclass wrapper",
    upstream="https://github.com/pytorch/pytorch/pull/176741",
    contract="Tensor subclasses (TwoTensor, nested TwoTensor(TwoTensor, TwoTensor)) go in and come out with the "
    "right type, inner tensors, sizes and strides, also with dynamic shapes; subclass parameters frozen by "
    "inductor freezing still give eager's results.",
    reference="subclass_wrapper",
    artifacts=(Artifact("subclass_wrapper", "inner_fn"),),
    checks=("type", "inner tensors", "values", "shape", "stride"),
    faults=("subclass_type_check_dropped",),
    bench=("subclass_wrapper",),
)

BACKWARD_UNWRAP = Behavior(
    id="backward_unwrap",
    title="backward identity unwrap",
    upstream="https://github.com/pytorch/pytorch/pull/178927",
    contract="Backward through a compiled function with subclass (and mixed plain and subclass) inputs gives "
    "eager's gradients, of the right subclass type.",
    reference="backward_unwrap",
    artifacts=(Artifact("backward_subclass_unwrap", "unwrap_fn"),),
    checks=(".grad", "values", "type", "exception"),
    faults=("gradient_perturbed", "unwrap_drops_last_arg"),
    bench=("backward_unwrap",),
)

SCALAR_RECOMPILE = Behavior(
    id="scalar_recompile",
    title="scalar-tensorify recompile fix",
    upstream="https://github.com/pytorch/pytorch/pull/179395",
    contract="With torch._dynamo.config.specialize_float = False, Python floats used in method-form in-place ops "
    "(mul_, div_, add_, sub_) and composite expressions (0.5 * lr, b ** 0.5) compile once for a whole sweep "
    "of values, and every value gives eager's result, under every backend, with caches warm.",
    reference="scalar_tensorify",
    artifacts=(),
    checks=("graphs compiled", "values"),
    faults=("sweep_reuses_first_value", "recompile_every_value"),
    bench=(),
)

BEHAVIORS: tuple[Behavior, ...] = (MUTATION_EPILOGUE, RUNTIME_WRAPPER, SUBCLASS_WRAPPER, BACKWARD_UNWRAP,
                                   SCALAR_RECOMPILE)
IDS: tuple[str, ...] = tuple(b.id for b in BEHAVIORS)
BENCH_TABLES: tuple[str, ...] = tuple(t for b in BEHAVIORS for t in b.bench)


# Wrappers builds generate and name that no behaviour probes: never taken for a probed one
# because they define a function of the same name (a dedupe wrapper's `inner_fn`).
UNPROBED_ARTIFACTS: tuple[str, ...] = ("dedup_wrapper", "synthetic_base_wrapper", "debug_assert_wrapper",
                                       "compiled_fn_wrapper", "backward_prologue", "backward_epilogue",
                                       "compiled_function_forward", "compiled_function_backward")


def artifact(name: str) -> Artifact:
    """The declared artifact of that name (what the probe and the capture look for)."""
    return next(a for b in BEHAVIORS for a in b.artifacts if a.name == name)
