#!/usr/bin/env python3
"""A view of a leaf that requires grad, mutated through detach(), is updated without error and keeps eager's values, as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/detach_mutation_view_of_leaf.yaml."""
import contextlib
import sys

import torch


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

def f(a):
    a.detach().mul_(3)


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.randn((6,), generator=g, dtype=torch.float32).requires_grad_()
    a = base[:4]
    try:
        out = fn(a)
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: {exc}'.splitlines()[0]
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    return raised


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
