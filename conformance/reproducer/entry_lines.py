"""How a short reproducer compiles through upstream's module entry points and make_fx: the same steps as the
harness's (conformance/core/entries.py, Note [Module entry points]), written out for a standalone script
(`KIIM` stands for the variant's keep_inference_input_mutations)."""

from __future__ import annotations

from conformance.core.entry import AOT_MODULE, AOT_MODULE_SIMPLIFIED, MAKE_FX

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
        "                               keep_inference_input_mutations=KIIM)",
        "    return made['f'](*(a for a in args if not isinstance(a, torch.nn.Module)))"],
    MAKE_FX: [
        "from torch.fx.experimental.proxy_tensor import make_fx", "", "made = {}", "",
        "def compiled_f(*args):  # traced once with fake tensors; the traced graph is called",
        "    if not made:",
        "        made['gm'] = make_fx(f, tracing_mode='fake')(*args)",
        "    return made['gm'](*args)"],
}
