#!/usr/bin/env python3
"""A non-leaf input requiring grad, transposed in place under no_grad and returned, fails its backward as eager does (the tangent no longer fits the graph's shape) instead of computing a gradient (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at backward: exception (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/no_grad_transpose_in_place_backward.yaml."""
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

def f(a):
    with torch.no_grad():
        torch.ops.aten.t_.default(a)
    return a

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = non_leaf(torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_())
    with torch.set_grad_enabled(True):
        out = fn(a)
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
