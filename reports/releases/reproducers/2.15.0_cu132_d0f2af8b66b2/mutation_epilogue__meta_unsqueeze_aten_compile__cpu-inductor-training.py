#!/usr/bin/env python3
"""A metadata-only mutation by torch.ops.aten.unsqueeze_.default under torch.compile leaves the input with eager's size, stride and offset.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/meta_unsqueeze_aten_compile.yaml."""
import sys

import torch

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def f(x):
    torch.ops.aten.unsqueeze_.default(x, 0)
    return x * 2

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = non_leaf(torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_())
    try:
        out = fn(x)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
