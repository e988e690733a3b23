#!/usr/bin/env python3
"""A NumPy float 1.23 (float16, then float32, then float64) compared against 1.0 in a Python branch takes eager's branch compiled with fullgraph on the eager backend while shapes are assumed dynamic.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/scalar_recompile/upstream/numpy_float_in_branch.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.assume_static_by_default = False

def f(x, s):
    if s > 1.0:
        return x + 1
    return x - 1

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = (torch.rand((4,), generator=g, dtype=torch.float32))
    s = torch.tensor(1.23, dtype=torch.float16).numpy()[()]
    try:
        out = fn(x, s)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='aot_eager', fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: call: exception differs from eager')
sys.exit(0 if same else 3)
