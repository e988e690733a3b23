#!/usr/bin/env python3
"""A custom autograd.Function that doubles its saved input in place during backward, applied to a non-leaf that requires grad, leaves that input and the gradients as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input b: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/backward_mutates_saved_input_requires_grad.yaml."""
import contextlib
import sys

import torch

class DoubleSavedInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        x.mul_(2)
        return grad.clone()

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
    return a * DoubleSavedInBackward.apply(b)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = non_leaf(torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_())
    b = non_leaf(torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_())
    v0, s0 = b._version, b.untyped_storage()
    out = fn(a, b)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7919)))
    return b._version - v0

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input b: _version moved differs from eager')
sys.exit(0 if same else 3)
