#!/usr/bin/env python3
"""Two overlapping views of one hidden base, one mutated and the other read after the write, see eager's values (the read must observe the mutation).
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: storage_offset (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/aliased_inputs_overlapping.yaml."""
import sys

import torch

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def f(a, b):
    a.mul_(2)
    return b * 1

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = non_leaf(torch.randn((10,), generator=g, dtype=torch.float32).requires_grad_())
    a = base[0:6]
    b = base[3:9]
    out = fn(a, b)
    return out.storage_offset()

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: storage_offset differs from eager')
sys.exit(0 if same else 3)
