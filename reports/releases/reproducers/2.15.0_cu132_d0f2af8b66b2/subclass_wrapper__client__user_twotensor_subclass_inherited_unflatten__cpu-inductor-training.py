#!/usr/bin/env python3
"""A user's subclass of TwoTensor that adds nothing (class MyTwo(TwoTensor) with TwoTensor's own __tensor_unflatten__) compiles and gives eager's output.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/client/user_twotensor_subclass_inherited_unflatten.yaml."""
import contextlib
import sys

import torch


from torch.testing._internal.two_tensor import TwoTensor

class MyTwo(TwoTensor):
    pass


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

def f(x):
    return x.sin() * 2


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = MyTwo(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32)).requires_grad_()
    try:
        out = fn(x)
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
