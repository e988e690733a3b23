#!/usr/bin/env python3
"""A custom autograd.Function that transposes its saved input in place during backward leaves that input's geometry and the gradients as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/backward_metadata_mutation_saved_input.yaml."""
import contextlib
import sys

import torch


class TransposeSavedInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b)
        return a.clone(), b.clone()

    @staticmethod
    def backward(ctx, grad_a, grad_b):
        (b,) = ctx.saved_tensors
        b.transpose_(1, 0)
        return grad_a.clone(), grad_b.clone()


def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def flatten_outputs(out):
    if isinstance(out, tuple | list):
        return [x for item in out for x in flatten_outputs(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flatten_outputs(out[k])]
    return [out]

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def backward_outputs(outputs, seed):
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])

def f(a, b):
    a2, b2 = TransposeSavedInBackward.apply(a, b)
    return a2 * b2


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a_leaf = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    b = torch.randn((3, 3), generator=g, dtype=torch.float32)
    try:
        out = fn(a, b)
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: {exc}'.splitlines()[0]
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    return raised


from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=True, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
