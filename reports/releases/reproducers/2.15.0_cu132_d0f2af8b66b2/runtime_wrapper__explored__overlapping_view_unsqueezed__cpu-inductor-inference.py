#!/usr/bin/env python3
"""Of two overlapping views of one hidden base, one is mutated and both are returned (the other through a fresh view), with eager's shapes, values and aliasing (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/overlapping_view_unsqueezed.yaml."""
import sys

import torch

def f(a, b):
    a.mul_(2)
    v = b.unsqueeze(0)
    return a, v

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    b = base[2:]
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
