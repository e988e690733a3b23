#!/usr/bin/env python3
"""A user's subclass of TwoTensor that adds nothing (class MyTwo(TwoTensor) with TwoTensor's own __tensor_unflatten__) compiles and gives eager's output.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/client/user_twotensor_subclass_inherited_unflatten.yaml."""
import sys

import torch

from torch.testing._internal.two_tensor import TwoTensor

class MyTwo(TwoTensor):
    pass

def f(x):
    return x.sin() * 2

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = MyTwo(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    try:
        out = fn(x)
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
