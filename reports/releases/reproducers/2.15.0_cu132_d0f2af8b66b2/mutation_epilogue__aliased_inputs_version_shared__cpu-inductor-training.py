#!/usr/bin/env python3
"""A view saved for backward and then mutated through a sibling view of the same base makes backward raise as in eager (views share one version counter), with eager's values before it.
On torch 2.15.0+cu132 the compiled call differs from eager at backward: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/aliased_inputs_version_shared.yaml."""
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

def f(a, b):
    a.add_(1)
    b.mul_(a)
    return a + b

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = non_leaf(torch.randn((8,), generator=g, dtype=torch.float32).requires_grad_())
    a = base[:4]
    b = base[4:]
    out = fn(a, b)
    try:
        if out.requires_grad:
            out.backward(tangent(out, torch.Generator().manual_seed(7919)))
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: backward: exception differs from eager')
sys.exit(0 if same else 3)
