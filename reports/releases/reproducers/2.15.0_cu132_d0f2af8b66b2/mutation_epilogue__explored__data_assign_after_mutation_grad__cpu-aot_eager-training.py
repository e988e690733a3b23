#!/usr/bin/env python3
"""A non-leaf input mutated in place, then given new data with `.data =` and returned, keeps the in-place op in its history, so the gradient matches eager's (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at input a: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/data_assign_after_mutation_grad.yaml."""
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

def f(a):
    a.mul_(2)
    a.data = a * 2
    return a

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = non_leaf(torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_())
    v0, s0 = a._version, a.untyped_storage()
    out = fn(a)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7919)))
    return a._version - v0

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: _version moved differs from eager')
sys.exit(0 if same else 3)
