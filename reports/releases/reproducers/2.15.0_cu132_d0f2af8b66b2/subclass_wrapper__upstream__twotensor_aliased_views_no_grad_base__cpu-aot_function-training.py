#!/usr/bin/env python3
"""Two flat views of a TwoTensor whose base needs no grad, the first doubled in place, beside an independent TwoTensor, end as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_aliased_views_no_grad_base.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(a, b, c):
    a.mul_(2)
    return [b + 1, c + 1]

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32))
    mid = base.add(1)
    a = mid.view(-1)
    b = mid.view(-1)
    cbase = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32)).requires_grad_()
    c = cbase.add(1)
    try:
        out = fn(a, b, c)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
