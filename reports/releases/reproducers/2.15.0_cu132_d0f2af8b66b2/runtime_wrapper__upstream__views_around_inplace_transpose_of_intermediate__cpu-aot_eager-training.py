#!/usr/bin/env python3
"""An unsqueeze view taken before an intermediate is transposed in place, the intermediate, and an unsqueeze taken after all come back with eager's geometry, sharing storage, with eager's gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/views_around_inplace_transpose_of_intermediate.yaml."""
import sys

import torch

def f(x):
    y = x * 3
    v1 = y.unsqueeze(0)
    y.t_()
    v2 = y.unsqueeze(0)
    return [v1, y, v2]

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((2, 4), generator=g, dtype=torch.float32).requires_grad_()
    try:
        out = fn(x)
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
