#!/usr/bin/env python3
"""A TwoTensor output and a plain output that the caller adds together before backward (so the plain output's tangent is a TwoTensor) give eager's gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: calls[0].after: exception (exit 3; 0 where they agree, 4 without the device).
From cases/backward_unwrap/upstream/summed_outputs_subclass_tangent.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(a, b):
    return (a * 2) / (b + 3), b + b

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    a = TwoTensor(torch.randn((3, 3), generator=g, dtype=torch.float32), torch.randn((3, 3), generator=g, dtype=torch.float32))
    b = torch.randn((3, 3), generator=g, dtype=torch.float32)
    ga = torch.zeros((3, 3), dtype=torch.float32)
    gb = torch.zeros((3, 3), dtype=torch.float32)
    out = fn(a, b)
    # call 2: before: a = a.detach().requires_grad_(True) ..., after: ga, gb = torch.autograd.grad((out[0] + o ...
    g = torch.Generator().manual_seed(0)
    a = TwoTensor(torch.randn((3, 3), generator=g, dtype=torch.float32), torch.randn((3, 3), generator=g, dtype=torch.float32))
    b = torch.randn((3, 3), generator=g, dtype=torch.float32)
    ga = torch.zeros((3, 3), dtype=torch.float32)
    gb = torch.zeros((3, 3), dtype=torch.float32)
    # the caller, before the call
    a = a.detach().requires_grad_(True)
    b = b.detach().requires_grad_(True)
    out = fn(a, b)
    try:
        ga, gb = torch.autograd.grad((out[0] + out[1]).sum(), [a, b])
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: calls[0].after: exception differs from eager')
sys.exit(0 if same else 3)
