#!/usr/bin/env python3
"""A custom op whose registered backward zeroes one of its plain inputs, beside a forward in-place scale of another input, leaves every input (after forward and after backward) and the gradients as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input x1: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/custom_op_backward_zeroes_input.yaml."""
import contextlib
import sys

import torch


def _define():
    if hasattr(torch.ops, "tcaotd") and hasattr(torch.ops.tcaotd, "clone_zero_bw"):
        return

    @torch.library.custom_op("tcaotd::clone_zero_bw", mutates_args=())
    def clone_zero_bw(x: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @clone_zero_bw.register_fake
    def _(x, x1):
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.x1 = inputs[1]

    def backward(ctx, grad):
        with torch.no_grad():
            ctx.x1.zero_()
        return grad * 2, None

    clone_zero_bw.register_autograd(backward, setup_context=setup_context)

_define()


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def backward_outputs(outputs, seed):
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])

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
        backward_outputs(flatten_outputs(out), 7919)
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
