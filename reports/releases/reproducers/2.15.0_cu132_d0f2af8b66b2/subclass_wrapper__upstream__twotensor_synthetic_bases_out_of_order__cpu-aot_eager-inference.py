#!/usr/bin/env python3
"""Four flat views of two TwoTensor bases interleaved, with a data mutation on the 2nd and unsqueeze_ on the 4th, end with eager's inner values and geometry.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_synthetic_bases_out_of_order.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(a, b, c, d):
    b.add_(1)
    d.unsqueeze_(0)
    return [a + c + d, b.view(-1)]

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base1 = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32))
    base2 = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32))
    m1 = base1.add(1)
    m2 = base2.add(1)
    a = m1.view(-1)
    b = m2.view(-1)
    c = m1.view(-1)
    d = m2.view(-1)
    try:
        out = fn(a, b, c, d)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
