#!/usr/bin/env python3
"""Backward of a cloned TwoTensor and of a cloned plain tensor with WrapperSubclass tangents (coerced to the traced tangent types) gives eager's gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: input gx: type (exit 3; 0 where they agree, 4 without the device).
From cases/backward_unwrap/upstream/wrapper_subclass_tangents.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

from torch.testing._internal.subclasses import WrapperSubclass

def f(x, y):
    return x.clone(), y.clone()

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    y = torch.randn((4,), generator=g, dtype=torch.float32)
    gx = torch.zeros((4,), dtype=torch.float32)
    gy = torch.zeros((4,), dtype=torch.float32)
    out = fn(x, y)
    # call 2: before: x = x.detach().requires_grad_(True) ..., after: tx = WrapperSubclass(torch.ones_like(out ...
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    y = torch.randn((4,), generator=g, dtype=torch.float32)
    gx = torch.zeros((4,), dtype=torch.float32)
    gy = torch.zeros((4,), dtype=torch.float32)
    # the caller, before the call
    x = x.detach().requires_grad_(True)
    y = y.detach().requires_grad_(True)
    out = fn(x, y)
    # the caller, after the call
    tx = WrapperSubclass(torch.ones_like(out[0]))
    ty = WrapperSubclass(torch.ones(4, device=y.device))
    gx, gy = torch.autograd.grad([out[0], out[1]], [x, y], grad_outputs=[tx, ty])
    return f'{type(gx).__module__}.{type(gx).__qualname__}'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: input gx: type differs from eager')
sys.exit(0 if same else 3)
