#!/usr/bin/env python3
"""A view of a leaf that requires grad, mutated through detach(), is updated without error and keeps eager's values, as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/detach_mutation_view_of_leaf.yaml."""
import sys

import torch

def f(a):
    a.detach().mul_(3)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.randn((6,), generator=g, dtype=torch.float32).requires_grad_()
    a = base[:4]
    try:
        out = fn(a)
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
