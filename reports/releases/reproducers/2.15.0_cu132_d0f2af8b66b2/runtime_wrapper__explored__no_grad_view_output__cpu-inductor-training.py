#!/usr/bin/env python3
"""A view of an input requiring grad, taken under no_grad and returned, is a leaf that does not require grad and takes no gradient, as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/no_grad_view_output.yaml."""
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
    with torch.no_grad():
        v = a.unsqueeze(0)
    return a, v


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    with torch.set_grad_enabled(True):
        out = fn(a)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    t = flatten_outputs(out)[1]
    try:
        return t.is_leaf
    except RuntimeError as exc:
        return f'raises {type(exc).__name__}: ' + str(exc).split('.')[0]


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[1]: is_leaf differs from eager')
sys.exit(0 if same else 3)
