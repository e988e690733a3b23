#!/usr/bin/env python3
"""An input set_ onto an arange and then set_ back onto an alias of itself is left as it was (same storage, values and version moves as eager), and the output matches.
On torch 2.15.0+cu132 the compiled call differs from eager at input x: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/set_and_set_back_nop.yaml."""
import contextlib
import sys

import torch

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(x):
    src = torch.arange(9, dtype=x.dtype, device=x.device)
    keep = torch.ops.aten.alias.default(x)
    with torch.no_grad():
        x.set_(src)
        x.set_(keep)
    return x + src.view(3, 3)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = non_leaf(torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_())
    v0, s0 = x._version, x.untyped_storage()
    with torch.set_grad_enabled(True):
        out = fn(x)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7919)))
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
