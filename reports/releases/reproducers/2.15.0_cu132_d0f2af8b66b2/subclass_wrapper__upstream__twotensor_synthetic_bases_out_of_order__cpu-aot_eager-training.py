#!/usr/bin/env python3
"""Four flat views of two TwoTensor bases interleaved, with a data mutation on the 2nd and unsqueeze_ on the 4th, end with eager's inner values and geometry.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_synthetic_bases_out_of_order.yaml."""
import contextlib
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def flatten_outputs(out):
    if isinstance(out, tuple | list):
        return [x for item in out for x in flatten_outputs(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flatten_outputs(out[k])]
    return [out]

def is_subclass(t):
    return type(t) is not torch.Tensor and hasattr(type(t), '__tensor_flatten__')

def tangent(out, gen):
    if is_subclass(out):
        names, ctx = type(out).__tensor_flatten__(out)
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())
    return plain_tangent(out, gen)

def plain_tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def backward_outputs(outputs, seed):
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])

def f(a, b, c, d):
    b.add_(1)
    d.unsqueeze_(0)
    return [a + c + d, b.view(-1)]


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base1 = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32)).requires_grad_()
    base2 = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32)).requires_grad_()
    m1 = base1.add(1)
    m2 = base2.add(1)
    a = m1.view(-1)
    b = m2.view(-1)
    c = m1.view(-1)
    d = m2.view(-1)
    try:
        out = fn(a, b, c, d)
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
