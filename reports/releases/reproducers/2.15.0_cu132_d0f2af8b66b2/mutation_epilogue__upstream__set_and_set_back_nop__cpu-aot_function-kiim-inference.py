#!/usr/bin/env python3
"""An input set_ onto an arange and then set_ back onto an alias of itself is left as it was (same storage, values and version moves as eager), and the output matches.
On torch 2.15.0+cu132 the compiled call differs from eager at input x: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/set_and_set_back_nop.yaml."""
import sys

import torch

def f(x):
    src = torch.arange(9, dtype=x.dtype, device=x.device)
    keep = torch.ops.aten.alias.default(x)
    with torch.no_grad():
        x.set_(src)
        x.set_(keep)
    return x + src.view(3, 3)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 3), generator=g, dtype=torch.float32)
    v0, s0 = x._version, x.untyped_storage()
    with torch.set_grad_enabled(True):
        out = fn(x)
    return x._version - v0

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=True, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input x: _version moved differs from eager')
sys.exit(0 if same else 3)
