#!/usr/bin/env python3
"""An input leaf that has requires_grad turned on inside the region ends requiring grad, and both outputs and gradients match eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input a: requires_grad (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/requires_grad_turned_on_inside.yaml."""
import contextlib
import sys

import torch


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
    a.requires_grad_(True)
    return [a.mul(3), b.mul(4)]


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((3, 3), generator=g, dtype=torch.float32)
    b_leaf = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    b = non_leaf(b_leaf)
    out = fn(a, b)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    try:
        return a.requires_grad
    except RuntimeError as exc:
        return f'raises {type(exc).__name__}: ' + str(exc).split('.')[0]


from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: requires_grad differs from eager')
sys.exit(0 if same else 3)
