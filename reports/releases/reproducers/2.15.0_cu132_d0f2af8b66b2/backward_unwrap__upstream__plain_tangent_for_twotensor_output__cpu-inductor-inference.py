#!/usr/bin/env python3
"""Backward of a cloned TwoTensor with a TwoTensor tangent and then, on a second call, with a plain tangent gives eager's gradients (or eager's error) each time.
On torch 2.15.0+cu132 the compiled call differs from eager at call 3: calls[1].after: exception (exit 3; 0 where they agree, 4 without the device).
From cases/backward_unwrap/upstream/plain_tangent_for_twotensor_output.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(x):
    return x.clone()

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    gx = torch.zeros((4,), dtype=torch.float32)
    out = fn(x)
    # call 2: before: x = x.detach().requires_grad_(True), after: gx = torch.autograd.grad(out, x, grad_ou ...
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    gx = torch.zeros((4,), dtype=torch.float32)
    # the caller, before the call
    x = x.detach().requires_grad_(True)
    out = fn(x)
    # the caller, after the call
    gx = torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out))[0]
    # call 3: before: x = x.detach().requires_grad_(True), after: gx = torch.autograd.grad(out, x, grad_ou ...
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    gx = torch.zeros((4,), dtype=torch.float32)
    # the caller, before the call
    x = x.detach().requires_grad_(True)
    out = fn(x)
    try:
        gx = torch.autograd.grad(out, x, grad_outputs=torch.ones(4, device=x.device))[0]
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='inductor', fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 3: calls[1].after: exception differs from eager')
sys.exit(0 if same else 3)
