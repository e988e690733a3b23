#!/usr/bin/env python3
"""A custom autograd.Function that increments a plain input during backward by an amount computed from (but detached from) the incoming gradient leaves that input, after forward and after backward, and the gradients as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input buf: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/backward_mutation_detached_from_tangent.yaml."""
import contextlib
import sys

import torch

class BumpBufferInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, buf):
        ctx.buf = buf
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        with torch.no_grad():
            ctx.buf.add_(grad.detach().sum())
        return grad * 2, None

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(x, buf):
    return BumpBufferInBackward.apply(x, buf) * 3

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    buf = torch.randn((4,), generator=g, dtype=torch.float32)
    v0, s0 = buf._version, buf.untyped_storage()
    out = fn(x, buf)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7919)))
    return buf._version - v0

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input buf: _version moved differs from eager')
sys.exit(0 if same else 3)
