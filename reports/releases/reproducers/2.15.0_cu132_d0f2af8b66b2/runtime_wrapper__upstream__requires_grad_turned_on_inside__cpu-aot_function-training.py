#!/usr/bin/env python3
"""An input leaf that has requires_grad turned on inside the region ends requiring grad, and both outputs and gradients match eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input a: requires_grad (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/requires_grad_turned_on_inside.yaml."""
import sys

import torch

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def f(a, b):
    a.requires_grad_(True)
    return [a.mul(3), b.mul(4)]

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((3, 3), generator=g, dtype=torch.float32)
    b = non_leaf(torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_())
    out = fn(a, b)
    return a.requires_grad

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: requires_grad differs from eager')
sys.exit(0 if same else 3)
