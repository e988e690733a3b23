#!/usr/bin/env python3
"""An input set_ onto another under no_grad and then multiplied in place with grad enabled ends with eager's values, storage sharing and gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/set_then_grad_mutation.yaml."""
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
    with torch.no_grad():
        a.set_(b)
    a.mul_(2)
    return a + b


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a_leaf = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    b_leaf = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    b = non_leaf(b_leaf)
    try:
        with torch.set_grad_enabled(True):
            out = fn(a, b)
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: {exc}'.splitlines()[0]
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    return raised


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
