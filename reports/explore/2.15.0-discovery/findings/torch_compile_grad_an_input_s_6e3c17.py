#!/usr/bin/env python3
"""Explorer finding (torch.compile | .grad | an input's gradient | compiled has a tensor, eager None): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at grad of b.leaf: .grad (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_grad_an_input_s_6e3c17.yaml."""
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

def f(a, b):
    v0 = a[1:]
    b.mul_(2)
    a.mul_(2)
    return v0


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    b_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    b = non_leaf(b_leaf)
    out = fn(a, b)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7921)))
    return b_leaf.grad is not None


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: grad of b.leaf: .grad differs from eager')
sys.exit(0 if same else 3)
