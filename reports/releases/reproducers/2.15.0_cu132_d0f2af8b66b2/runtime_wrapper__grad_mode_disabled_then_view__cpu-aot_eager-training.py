#!/usr/bin/env python3
"""After set_grad_enabled(False) inside the region, an output viewing an input still aliases it and grad mode stays off after the call.
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/grad_mode_disabled_then_view.yaml."""
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

def f(x):
    y = x.cos()
    torch.set_grad_enabled(False)
    return y, x[1:], x.sum()


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_()
    with torch.set_grad_enabled(True):
        out = fn(x)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    t = flatten_outputs(out)[1]
    try:
        return t.is_leaf
    except RuntimeError as exc:
        return f'raises {type(exc).__name__}: ' + str(exc).split('.')[0]


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[1]: is_leaf differs from eager')
sys.exit(0 if same else 3)
