#!/usr/bin/env python3
"""An in-place add into a column of an expanded (zero-stride) view of an int64 arange, whose elements share memory, raises on the compiled side as it does in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/expand_column_mutation_raises.yaml."""
import sys

import torch

def f(x):
    rows = x.expand(3, *x.shape)
    rows[0:3, 0].add_(5)
    return rows

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.arange(6, dtype=torch.float64).reshape((6,)).to(torch.int64)
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
