#!/usr/bin/env python3
"""An input given its own data with `a.data = a` (a no-op in eager) and then mutated in place compiles and ends with eager's values (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/data_assign_self_then_mutation.yaml."""
import sys

import torch

def f(a):
    a.data = a
    a.mul_(2)

def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    try:
        out = fn(a)
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
