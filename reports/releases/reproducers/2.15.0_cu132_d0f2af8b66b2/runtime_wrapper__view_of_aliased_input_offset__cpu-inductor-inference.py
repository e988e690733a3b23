#!/usr/bin/env python3
"""With a base and its offset slice both passed and the base mutated, an output viewing the slice is regenerated from the slice (eager's offset and values), not from the base.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/view_of_aliased_input_offset.yaml."""
import sys

import torch

def f(t0, ta):
    t0.add_(100)
    return ta[0], ta.view(-1)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    t0 = torch.randn((4, 6), generator=g, dtype=torch.float32)
    ta = t0[1:]
    try:
        out = fn(t0, ta)
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
