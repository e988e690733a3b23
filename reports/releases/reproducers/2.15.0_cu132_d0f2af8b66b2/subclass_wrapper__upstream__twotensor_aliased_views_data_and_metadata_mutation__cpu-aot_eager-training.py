#!/usr/bin/env python3
"""Two views of one row of a TwoTensor non-leaf base, one doubled in place and the other transposed in place, end with eager's inner values and geometry, and the product matches.
On torch 2.15.0+cu132 the compiled call differs from eager at backward: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_aliased_views_data_and_metadata_mutation.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def tangent(out, gen):
    if hasattr(type(out), '__tensor_flatten__'):
        names, ctx = type(out).__tensor_flatten__(out)
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(a, b):
    a.mul_(2)
    b.t_()
    return a.mul(b)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32)).requires_grad_()
    mid = base.add(1)
    a = mid[0]
    b = mid[0]
    out = fn(a, b)
    try:
        if out.requires_grad:
            out.backward(tangent(out, torch.Generator().manual_seed(7919)))
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: backward: exception differs from eager')
sys.exit(0 if same else 3)
