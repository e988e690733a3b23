"""How a variant's program is compiled, by name; no torch here (the schema and CLI read it).

Any other name is a torch.compile backend registered on the build (`torch._dynamo.list_backends`).
"""

from __future__ import annotations

AOT_FUNCTION = "aot_function"  # functorch.compile.aot_function with nop compilers
KIIM_LABEL = "aot_function-kiim"  # the same with keep_inference_input_mutations=True
# the program as a module (its module arguments bound as submodules), nop compilers: Note [Module entry points]
AOT_MODULE_SIMPLIFIED = "aot_module_simplified"
AOT_MODULE = "aot_module"
MAKE_FX = "make_fx"  # traced with fake tensors, the traced graph called
AOT_EXPORT_MODULE = "aot_export_module"  # exported once, the graph run with its signature's mutations applied
AOT_EXPORT_JOINT_SIMPLE = "aot_export_joint_simple"  # exported once (trace_joint=False), the graph called
# the entries that take keep_inference_input_mutations: a variant per value, labelled <entry>-kiim for True
KIIM_ENTRIES = (AOT_FUNCTION, AOT_MODULE_SIMPLIFIED, AOT_MODULE)
COMPILER_ENTRIES = (AOT_FUNCTION, AOT_MODULE_SIMPLIFIED, AOT_MODULE)  # take a case's own forward compiler
FUNCTION_ENTRIES = (AOT_FUNCTION, KIIM_LABEL, AOT_EXPORT_JOINT_SIMPLE)  # compile a function of tensors, never a module
# entry points that compile without dynamo (so without guards or a dynamo graph to count), by label
WITHOUT_DYNAMO = (AOT_FUNCTION, KIIM_LABEL, AOT_MODULE_SIMPLIFIED, f"{AOT_MODULE_SIMPLIFIED}-kiim", AOT_MODULE,
                  f"{AOT_MODULE}-kiim", MAKE_FX, AOT_EXPORT_MODULE, AOT_EXPORT_JOINT_SIMPLE)
DYNAMO_EAGER = "eager"  # dynamo alone, no AOTAutograd (so no tensorify pass either)
NONE = "none"  # no compilation at all: both sides run the program eagerly (a control for the harness itself)
DEFAULT_BACKENDS = ("aot_eager", "inductor")


def counts_graphs(backend: str) -> bool:
    """Whether the backend goes through dynamo, whose graphs a compile count counts (aot_function,
    the module entries, make_fx and `none` compile no dynamo graph: a count says nothing about them)."""
    return backend not in (*WITHOUT_DYNAMO, NONE)


def entry_of(label: str) -> str:
    """The entry point a record's backend label was called through: torch.compile, or one of the own ones."""
    return label.removesuffix("-kiim") if label in WITHOUT_DYNAMO else "torch.compile"


def in_user_words(label: str) -> str:
    """A record's backend label as a user wrote the call (`kiim` is our abbreviation)."""
    kiim = label in WITHOUT_DYNAMO and label.endswith("-kiim")
    return f"{label.removesuffix('-kiim')}, keep_inference_input_mutations=True" if kiim else label
