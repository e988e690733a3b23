"""How a short reproducer sets the case's config and compiles through upstream's entry points: the same steps as the
harness's (conformance/core/entries.py, Note [Module entry points]), written out for a standalone script
(`KIIM` stands for the variant's keep_inference_input_mutations, `DYNAMIC`, `PRE_DISPATCH` and `TRACING` for the
case's dynamic, pre_dispatch and tracing_mode)."""

from __future__ import annotations

import re
from typing import Any

from conformance.core.compile import aot_function_options, split_config_key
from conformance.core.entry import (
    AOT_EXPORT_JOINT_SIMPLE,
    AOT_EXPORT_MODULE,
    AOT_MODULE,
    AOT_MODULE_SIMPLIFIED,
    MAKE_FX,
    WITHOUT_DYNAMO,
)
from conformance.core.spec import CompileData

_PROGRAM_MODULE = [
    "class Program(torch.nn.Module):  # the program as a module: its module arguments are its submodules",
    "    def __init__(self, args, wrap):",
    "        super().__init__()",
    "        self.slots = [isinstance(a, torch.nn.Module) for a in args]",
    "        self.bound = torch.nn.ModuleList([a for a in args if isinstance(a, torch.nn.Module)])",
    "        self.wrap, self.single = wrap, False",
    "",
    "    def forward(self, *tensors):",
    "        values, modules = iter(tensors), iter(self.bound)",
    "        out = f(*(next(modules) if m else next(values) for m in self.slots))",
    "        if self.wrap and not isinstance(out, tuple):  # its graph must return a tuple",
    "            self.single = True",
    "            return (out,)",
    "        return out",
    "",
    "",
    "made = {}",
    "",
]
MODULE_ENTRY_LINES = {
    AOT_MODULE_SIMPLIFIED: [
        "from functorch.compile import nop", "from torch._functorch.aot_autograd import aot_module_simplified", "",
        *_PROGRAM_MODULE,
        "def compiled_f(*args):  # traced once, from the first call's inputs, no guards",
        "    if not made:",
        "        made['program'] = Program(args, wrap=True)",
        "        tensors = [a for a in args if not isinstance(a, torch.nn.Module)]",
        "        if TRACING in ('fake', 'symbolic'):  # traced from fake copies (symbolic: sizes under a ShapeEnv)",
        "            from torch._subclasses.fake_tensor import FakeTensorMode",
        "            from torch.fx.experimental.symbolic_shapes import ShapeEnv",
        "            mode = FakeTensorMode(shape_env=ShapeEnv() if TRACING == 'symbolic' else None)",
        "            tensors = [mode.from_tensor(t) for t in tensors]",
        "        made['f'] = aot_module_simplified(made['program'], tensors, fw_compiler=nop, bw_compiler=nop,",
        "                                          keep_inference_input_mutations=KIIM)",
        "    out = made['f'](*(a for a in args if not isinstance(a, torch.nn.Module)))",
        "    return out[0] if made['program'].single else out"],
    AOT_MODULE: [
        "from functorch.compile import aot_module, nop", "",
        *_PROGRAM_MODULE,
        "def compiled_f(*args):",
        "    if not made:",
        "        made['f'] = aot_module(Program(args, wrap=False), fw_compiler=nop, bw_compiler=nop,",
        "                               keep_inference_input_mutations=KIIM, dynamic=DYNAMIC)",
        "    return made['f'](*(a for a in args if not isinstance(a, torch.nn.Module)))"],
    MAKE_FX: [
        "from torch.fx.experimental.proxy_tensor import make_fx", "",
        *_PROGRAM_MODULE,
        "def compiled_f(*args):  # traced once (a module argument with its real weights); the traced graph is called",
        "    tensors = [a for a in args if not isinstance(a, torch.nn.Module)]",
        "    if not made:",
        "        program = Program(args, wrap=False)",
        "        made['gm'] = make_fx(program if program.bound else f, tracing_mode=TRACING or 'fake',",
        "                             _allow_non_fake_inputs=bool(program.bound))(*tensors)",
        "    return made['gm'](*tensors)"],
    AOT_EXPORT_JOINT_SIMPLE: [
        "from torch._functorch.aot_autograd import aot_export_joint_simple", "", "made = {}", "",
        "def compiled_f(*args):  # exported once (trace_joint=False); the exported graph is called",
        "    if not made:",
        "        made['gm'] = aot_export_joint_simple(f, list(args), trace_joint=False)",
        "    return made['gm'](*args)"],
    AOT_EXPORT_MODULE: [
        "from torch._functorch.aot_autograd import aot_export_module",
        "from torch.utils._pytree import tree_unflatten", "",
        *_PROGRAM_MODULE,
        "def compiled_f(*args):  # exported once, from the first call's inputs; the graph run as its caller must",
        "    tensors = [a for a in args if not isinstance(a, torch.nn.Module)]",
        "    if not made:",
        "        made['program'] = Program(args, wrap=True)",
        "        made['gm'], made['sig'] = aot_export_module(made['program'], tensors, trace_joint=False,",
        "                                                    pre_dispatch=PRE_DISPATCH)",
        "    program, gm, sig = made['program'], made['gm'], made['sig']",
        "    lifted = [*map(program.get_parameter, sig.parameters), *map(program.get_buffer, sig.buffers)]",
        "    outs = gm(*lifted, *tensors)",
        "    user_inputs = dict(zip(sig.user_inputs, tensors))",
        "    targets = {**{k: program.get_buffer(v) for k, v in sig.buffers_to_mutate.items()},",
        "               **{k: program.get_parameter(v) for k, v in getattr(sig, 'parameters_to_mutate', {}).items()},",
        "               **{k: user_inputs[v] for k, v in sig.user_inputs_to_mutate.items()}}",
        "    (output,) = gm.graph.find_nodes(op='output')",
        "    for node, value in zip(output.args[0][:len(targets)], outs[:len(targets)]):  # the mutations it names",
        "        targets[node.name].copy_(value)",
        "    out = tree_unflatten(list(outs[len(targets):]), sig.out_spec)",
        "    return out[0] if program.single else out"],
}


# compile.module: the entry compiles the module argument at AT itself, as upstream compiles its module
_GIVEN_MODULE = (
    ("made['program'] = Program(args, wrap=True)", "made['program'] = args[AT]  # upstream's module, compiled itself"),
    ("made['program'].single", "False"), ("program.single", "False"),
    ("program = Program(args, wrap=False)", "program = args[AT]  # upstream's module, traced itself"),
    ("program if program.bound else f", "program"), ("bool(program.bound)", "True"),
    ("aot_module(Program(args, wrap=False),", "aot_module(args[AT],  # upstream's module, compiled itself\n"
                                               "                              "),
    ("[a for a in args if not isinstance(a, torch.nn.Module)]", "[*args[:AT], *args[AT + 1:]]"),
    ("(a for a in args if not isinstance(a, torch.nn.Module))", "(*args[:AT], *args[AT + 1:])"),
)


def given_module_lines(lines: list[str], at: int) -> list[str]:
    """A module entry's lines (MODULE_ENTRY_LINES) compiling the module argument at `at` itself, as the harness does
    for `compile.module` (conformance/core/entries.py, _GivenModule)."""
    text = "\n".join(line for line in lines if line not in _PROGRAM_MODULE or line in ("made = {}", ""))
    for old, new in _GIVEN_MODULE:
        text = text.replace(old, new)
    if "Program(" in text or "torch.nn.Module)" in text:
        raise AssertionError(f"a program-module line left in the given-module form:\n{text}")
    return text.replace("AT + 1", str(at + 1)).replace("AT", str(at)).split("\n")


def torch_compile_module_lines(call: str, at: int) -> list[str]:
    """`call` (torch.compile(f, ...)) as upstream's torch.compile(mod, ...) of the module argument at `at`, called
    with the other arguments; the last line makes it anew (the warm rerun's and a fresh call's compile)."""
    return ["def compile_module():  # upstream compiles the module itself, called with the other arguments",
            "    made = {}", "",
            "    def call(*args):",
            "        if not made:",
            f"            made['f'] = {call.replace('torch.compile(f,', f'torch.compile(args[{at}],', 1)}",
            f"        return made['f'](*args[:{at}], *args[{at + 1}:])", "",
            "    return call", "", "",
            "compiled_f = compile_module()"]


def aot_function_lines(options: CompileData, kiim: bool) -> list[str]:
    """aot_function with the case's options, as the harness calls it (conformance/core/compile.py)."""
    named = aot_function_options(options)
    chosen = "".join(f", {k}={v}" for k, v in named.items())
    modules = dict.fromkeys(v.rpartition(".")[0] for v in named.values() if isinstance(v, str))
    return [*(f"import {m}" for m in modules), "from functorch.compile import aot_function, nop", "",
            f"compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations={kiim}, "
            f"dynamic={bool(options['dynamic'])}{chosen})"]


def config_lines(config: dict[str, Any]) -> list[str]:
    """The case's config overrides, set as the harness patches them."""
    imports = dict.fromkeys(f"import {split_config_key(key)[0]}" for key in config)
    return [*imports, *(f"{key} = {value!r}" for key, value in config.items())]


def anew_lines(compile_lines: list[str], backend: str) -> list[str]:
    """`compiled_anew(reset)`: the program compiled afresh for a call that asks for it (a `fresh` call), as the
    harness does it (conformance/core/loop.py compile_anew): torch.compile after torch._dynamo.reset() (none for
    `fresh: keep_cache`, reset=False: the same code compiled anew, dynamo's cache kept), aot_function anew, a module
    entry traced again on its next call; `compile_lines` are the script's first compile."""
    if backend in MODULE_ENTRY_LINES:
        body = ["made.clear()  # traced again on the next call", "return compiled_f"]
    else:
        made = compile_lines[-1].split(" = ", 1)[1]
        given = re.search(r"backend=([^,)]+)", made)
        another = [] if given is None else [  # dynamo tells backends apart by identity
            f"chosen = {given[1]}",
            "if new_backend:  # another backend object, as upstream's new CompileCounter per torch.compile",
            "    inner = torch._dynamo.lookup_backend(chosen) if isinstance(chosen, str) else chosen",
            "    chosen = lambda gm, example_inputs: inner(gm, example_inputs)  # noqa: E731"]
        body = [*([] if backend in WITHOUT_DYNAMO else ["if reset:  # no cached frame reused",
                                                          "    torch._dynamo.reset()"]),
                *another, "return " + (made if given is None else made.replace(given[0], "backend=chosen", 1))]
    return ["def compiled_anew(reset=True, new_backend=False):  # a fresh compile, as upstream's",
            *(f"    {line}" for line in body), ""]
