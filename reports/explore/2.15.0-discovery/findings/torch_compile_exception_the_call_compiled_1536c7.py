#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | AssertionError: Node mul_N was invalid, but is output): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_1536c7.yaml."""
import contextlib
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

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

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def backward_outputs(outputs, seed):
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])

def place(values, stride, offset, numel, device):
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out

def f(a, b):
    a.add_(b, alpha=0.5)
    a.mul_(2)


def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(2)
    a = TwoTensor(torch.randn((3, 4), generator=g, dtype=torch.float32), torch.randn((3, 4), generator=g, dtype=torch.float32))
    b_leaf = torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_()
    b = non_leaf(b_leaf)
    out = fn(a, b)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7921)
    # call 2: a: two_tensor
    g = torch.Generator().manual_seed(2)
    a = TwoTensor(place(torch.randn((3, 4), generator=g, dtype=torch.float32), (1, 3), 0, 12, 'cpu'), place(torch.randn((3, 4), generator=g, dtype=torch.float32), (1, 3), 0, 12, 'cpu'))
    b_leaf = torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_()
    b = non_leaf(b_leaf)
    try:
        out = fn(a, b)
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return raised


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: call: exception differs from eager')
sys.exit(0 if same else 3)
