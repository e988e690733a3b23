#!/usr/bin/env python3
"""A custom op whose registered backward zeroes one of its plain inputs, beside a forward in-place scale of another input, leaves every input (after forward and after backward) and the gradients as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input x1: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/custom_op_backward_zeroes_input.yaml."""
import contextlib
import sys

import torch

if not hasattr(torch.ops.tcaotd, "clone_zero_bw"):  # this block runs for every item: the op is registered once
    @torch.library.custom_op("tcaotd::clone_zero_bw", mutates_args=())
    def clone_zero_bw(x: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        return x.clone()
    clone_zero_bw.register_fake(lambda x, x1: torch.empty_like(x))

    def backward(ctx, grad):
        with torch.no_grad():
            ctx.x1.zero_()
        return grad * 2, None
    clone_zero_bw.register_autograd(backward, setup_context=lambda ctx, inputs, output: setattr(ctx, "x1", inputs[1]))

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(x, x1, x2):
    x2.mul_(5)
    return torch.ops.tcaotd.clone_zero_bw(x, x1) + x2

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32).requires_grad_()
    x1 = torch.randn((3,), generator=g, dtype=torch.float32)
    x2 = torch.randn((3,), generator=g, dtype=torch.float32)
    v0, s0 = x1._version, x1.untyped_storage()
    out = fn(x, x1, x2)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7919)))
    return x1._version - v0

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input x1: _version moved differs from eager')
sys.exit(0 if same else 3)
