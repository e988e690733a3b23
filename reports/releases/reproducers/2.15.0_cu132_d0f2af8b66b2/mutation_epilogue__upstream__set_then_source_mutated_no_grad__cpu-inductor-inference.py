#!/usr/bin/env python3
"""Under no_grad one input is set_ onto a second input and the second is then doubled in place, so both inputs share the doubled storage afterwards, as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input b: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/set_then_source_mutated_no_grad.yaml."""
import sys

import torch

def f(a, b):
    with torch.no_grad():
        a.set_(b)
        b.mul_(2)
    return a + b

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((3, 3), generator=g, dtype=torch.float32)
    b = torch.randn((3, 3), generator=g, dtype=torch.float32)
    v0, s0 = b._version, b.untyped_storage()
    with torch.set_grad_enabled(True):
        out = fn(a, b)
    return b._version - v0

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input b: _version moved differs from eager')
sys.exit(0 if same else 3)
