#!/usr/bin/env python3
"""A plain non-leaf transposed and a TwoTensor non-leaf unsqueezed in place, then both scaled in place, end with eager's geometry and values, and their sum and gradients match eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_metadata_then_data_mutation.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(a, b):
    a.t_()
    b.unsqueeze_(0)
    a.mul_(2)
    b.mul_(3)
    return a + b

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    abase = torch.arange(9, dtype=torch.float64).reshape((3, 3)).to(torch.float32).requires_grad_()
    a = abase + 1
    bbase = TwoTensor(torch.arange(9, dtype=torch.float64).reshape((3, 3)).to(torch.float32), torch.arange(9, dtype=torch.float64).reshape((3, 3)).to(torch.float32)).requires_grad_()
    b = bbase + 1
    try:
        out = fn(a, b)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
