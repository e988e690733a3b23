#!/usr/bin/env python3
"""A TwoTensor leaf that requires grad, transposed in place through the ATen overload under no_grad, ends transposed without error, as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/explored/no_grad_transpose_aten_twotensor_leaf.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(b):
    with torch.no_grad():
        torch.ops.aten.t_.default(b)

def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    b = TwoTensor(torch.randn((3, 4), generator=g, dtype=torch.float32), torch.randn((3, 4), generator=g, dtype=torch.float32)).requires_grad_()
    try:
        with torch.set_grad_enabled(True):
            out = fn(b)
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
