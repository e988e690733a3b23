#!/usr/bin/env python3
"""Two views of one row of a TwoTensor non-leaf base, one doubled in place and the other transposed in place, end with eager's inner values and geometry, and the product matches.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_aliased_views_data_and_metadata_mutation.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

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
    try:
        out = fn(a, b)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=True, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
