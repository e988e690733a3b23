"""An assertion on what the build generated while it compiled a case: upstream's own source and graph checks.

Upstream's codegen tests capture a generated function's source and assert substrings in it (or their
absence) and how many were emitted; its AOTAutograd tests compare a traced graph's code with an inline
text. A case states the same assertion here, and the runner checks it on what the cold pass captured
(conformance/probe/generated.py). Whether it holds never changes the item's status: it is what the
parity table's "as upstream asserts" column counts (conformance/data/parity.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from conformance.schema.common import Backend, Mode, Strict, check_regex

# The traced graphs a build logs as structured-trace records (their payload is the graph's readable
# form), and the graphs the make_fx and aot_export_module entries made (their gm.code;
# conformance/core/entries.py); every other name is a generated function's artifact
# (conformance/probe/capture.py).
GRAPH_ARTIFACTS = ("aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "aot_joint_graph",
                   "dynamo_output_graph", "make_fx_graph", "aot_export_graph", "aot_export_readable")
# Text a build logs as a structured-trace record that is neither a graph nor generated source: dynamo's guard
# tree, each guard's code part with it (check_overlapping(...) for AOTAutograd's StorageOverlap guard), what
# upstream's assertions on installed guards read. Kept apart with the graphs; no `graph:` form.
TEXT_ARTIFACTS = ("dynamo_cpp_guards_str", "shape_env_guards", "recompile_reasons", "aot_forward_graph_fw_metadata",
                  "aot_forward_graph_fw_subclass_metadata", "aot_export_graph_str", "aot_export_signature",
                  "aotautograd_guards", "dynamo_shape_env_guards")
# Of those, the ones a build publishes as a named structured-trace artifact (metadata {"artifact": {"name": ...}}):
# dynamo's guard failures behind each recompile (what upstream's guard_fail_fn reads), and AOTAutograd's metadata of
# each compile (ViewAndMutationMeta, its bw_donated_idxs among it: what upstream reads off the INFO log), and its
# SubclassMeta where a subclass is among the inputs or outputs (the desugared static_input_idxs among it).
NAMED_TEXT_ARTIFACTS = ("recompile_reasons", "aot_forward_graph_fw_metadata", "aot_forward_graph_fw_subclass_metadata")
# What upstream's torch.compile backends keep of a compile's contexts and read once the call ends: the
# TracingContext's AOTAutograd guards (a line each, its sources by name: StorageOverlap(overlapping_sources=[a, b],
# non_overlapping_sources=[c])) and the CompileContext's ShapeEnv guards (a line each), logged by the harness's
# counting backend (conformance/run/compiles.py), the text empty where there are none.
CONTEXT_GUARD_ARTIFACTS = ("aotautograd_guards", "dynamo_shape_env_guards")
# Each node of a graph a compiler the harness wraps is handed, one line each, "<op> <name>: <its meta keys>":
# the graph of an entry without dynamo (aot_function's, aot_module's, aot_module_simplified's forward compiler;
# make_fx's trace), what upstream's fw_compiler asserts on node.meta; and each graph dynamo hands the backend,
# whose call nodes are what upstream's CompileCounter counts as op_count.
NODE_META_ARTIFACTS = ("fw_compiler_node_meta", "dynamo_graph_node_meta")
TRACED_ARTIFACTS = GRAPH_ARTIFACTS + TEXT_ARTIFACTS + NODE_META_ARTIFACTS
# an exported graph's subgraphs (cond branches, map bodies) by their module path: aot_export_graph.true_graph_0
SUBGRAPH_OF = "aot_export_graph."


def is_graph(artifact: str) -> bool:
    """Whether `artifact` names a traced graph (a `graph:` assertion's subject)."""
    return artifact in GRAPH_ARTIFACTS or artifact.startswith(SUBGRAPH_OF)

_Snippet = Annotated[str, Field(min_length=1, max_length=2000)]
Instance = Literal["every", "first", "last", "any", "all"]


class GeneratedAssertion(Strict):
    """What upstream asserts on one generated artifact of the case's first (cold) pass."""

    artifact: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.\-]*$", max_length=100)] = Field(
        description="The artifact's name as the build publishes it: a generated function "
        "(runtime_wrapper_orchestration, mutation_epilogue, output_alias_wrapper, ...), a traced graph "
        f"({', '.join(GRAPH_ARTIFACTS)}; an exported graph's subgraph as {SUBGRAPH_OF}<module path>, e.g. "
        f"{SUBGRAPH_OF}true_graph_0), guards ({', '.join(TEXT_ARTIFACTS)}) or the nodes' meta keys of each graph "
        f"an entry's forward compiler is handed ({', '.join(NODE_META_ARTIFACTS)}: a line per node, "
        "'<op> <name>: <keys>').")
    emitted: bool = Field(True, description="Whether the pass emitted it at all (false: it must not be).")
    count: Annotated[StrictInt, Field(ge=1, le=1000)] | None = Field(
        None, description="How many instances the pass emitted, exactly (upstream's len(captured) == N).")
    contains: tuple[_Snippet, ...] = Field((), description="Substrings the source holds (upstream's assertIn).")
    lacks: tuple[_Snippet, ...] = Field((), description="Substrings it does not hold (upstream's assertNotIn).")
    matches: tuple[_Snippet, ...] = Field((), description="Regular expressions searched in it (multi-line).")
    line_counts: dict[_Snippet, Annotated[StrictInt, Field(ge=0, le=100_000)]] = Field(
        default_factory=dict, description="How many of its lines match each regular expression, exactly: "
        "upstream's op_count == N on dynamo_graph_node_meta is {'^call_(function|method|module) ': N}.")
    fewer_lines_than: Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="It has fewer lines than this (upstream's assertLess(len(guards), N)).")
    no_match: tuple[_Snippet, ...] = Field(
        (), description="Regular expressions found nowhere in it (multi-line): upstream's assertNotRegex, or an "
        "assertion on every line (a line that breaks it must not match).")
    graph: Annotated[str, Field(min_length=1, max_length=20_000)] | None = Field(
        None, description="A traced graph's expected code (upstream's inline graph), compared normalised: "
        "`x = None` deletions, line breaks inside a statement and comments on lines of their own do not count; "
        "type annotations (a tensor's strides and device aside) and comments after values count where this "
        "text carries them (upstream's print_readable), not where it has none (upstream's gm.code).")
    instance: Instance = Field(
        "every", description="Which emitted instances must satisfy contains/lacks/matches/graph: every one, the "
        "first, the last, or any one (where the pass compiled several times and upstream reads one); or all "
        "together, their texts as one (upstream's sum over graphs: CompileCounter's op_count).")
    backends: tuple[Backend, ...] | None = Field(
        None, min_length=1, description="The variants' backends it is checked on (default every one): a graph "
        "upstream reads from aot_function is not the one inductor's decompositions make.")
    devices: tuple[Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_]*$", max_length=50)], ...] | None = Field(
        None, min_length=1, description="The device types it is checked on (default every one): a graph that "
        "names device(type='cpu') is upstream's CPU run.")
    modes: tuple[Mode, ...] | None = Field(
        None, min_length=1, description="The modes it is checked on (default both): an inference graph is "
        "emitted by the inference mode only.")
    note: Annotated[str, Field(min_length=1, max_length=400)] | None = Field(
        None, description="How this departs from upstream's assertion, if at all.")

    @field_validator("matches", "no_match", "line_counts")
    @classmethod
    def _regexes(cls, value: Sequence[str] | dict[str, int]) -> Sequence[str] | dict[str, int]:
        for pattern in value:
            check_regex(pattern)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GeneratedAssertion:
        said = [k for k in ("count", "contains", "lacks", "matches", "no_match", "line_counts", "fewer_lines_than",
                            "graph")
                if getattr(self, k)]
        if not self.emitted and said:
            raise ValueError(f"an artifact that must not be emitted has no {', '.join(said)}")
        if self.graph is not None and self.instance == "all":
            raise ValueError("graph: compares one graph; instance: all reads every instance's text as one")
        if self.graph is not None and not is_graph(self.artifact):
            raise ValueError(f"graph: is compared with a traced graph ({', '.join(GRAPH_ARTIFACTS)}), "
                             f"not {self.artifact!r}")
        return self

    def applies(self, backend: str, mode: str, device: str = "cpu") -> bool:
        """Whether it is checked on a variant with this backend (label), mode and device."""
        return ((self.backends is None or backend in self.backends) and (self.modes is None or mode in self.modes)
                and (self.devices is None or device.split(":", maxsplit=1)[0] in self.devices))
