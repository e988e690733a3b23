#!/usr/bin/env python3
"""With dynamic=True, a 2-d slice of a TwoTensor (rows and columns both cut) passed as the input of a doubling function gives eager's values, geometry and inner tensors.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_2d_slice_dynamic.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(v):
    return v * 2

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = TwoTensor(torch.randn((4, 15), generator=g, dtype=torch.float32), torch.randn((4, 15), generator=g, dtype=torch.float32))
    v = base[2:3, 5:9]
    try:
        out = fn(v)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='inductor', dynamic=True, fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
