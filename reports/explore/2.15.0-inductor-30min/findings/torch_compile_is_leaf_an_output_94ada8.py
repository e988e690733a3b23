#!/usr/bin/env python3
"""Explorer finding (torch.compile | is_leaf | an output | compiled False, eager True): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_is_leaf_an_output_94ada8.yaml."""
import sys

import torch


def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def f(b):
    with torch.no_grad():
        v1 = b.view(-1)
    return v1


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    b_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    b = non_leaf(b_leaf)
    with torch.set_grad_enabled(True):
        out = fn(b)
    return out.is_leaf


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: is_leaf differs from eager')
sys.exit(0 if same else 3)
