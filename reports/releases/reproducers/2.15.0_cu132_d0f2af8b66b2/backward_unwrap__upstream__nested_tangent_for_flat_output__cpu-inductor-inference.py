#!/usr/bin/env python3
"""A flat TwoTensor output that the caller adds to a nested TwoTensor before backward (so its tangent is nested) gives eager's gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: calls[0].after: exception (exit 3; 0 where they agree, 4 without the device).
From cases/backward_unwrap/upstream/nested_tangent_for_flat_output.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(x):
    return x.sin().cos()

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    nested = TwoTensor(TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32)), TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32)))
    gx = torch.zeros((4,), dtype=torch.float32)
    out = fn(x)
    # call 2: before: x = x.detach().requires_grad_(True), after: gx = torch.autograd.grad((out + nested). ...
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    nested = TwoTensor(TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32)), TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32)))
    gx = torch.zeros((4,), dtype=torch.float32)
    # the caller, before the call
    x = x.detach().requires_grad_(True)
    out = fn(x)
    try:
        gx = torch.autograd.grad((out + nested).sum(), x)[0]
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
