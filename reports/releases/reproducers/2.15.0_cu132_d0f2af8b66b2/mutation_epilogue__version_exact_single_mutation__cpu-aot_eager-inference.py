#!/usr/bin/env python3
"""Inputs mutated exactly once (one in place, one by copy_) bump their version counters by exactly eager's amount, not by an extra epilogue write.
On torch 2.15.0+cu132 the compiled call differs from eager at input x: _version delta (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/version_exact_single_mutation.yaml."""
import sys

import torch

def f(x, y):
    x.mul_(2)
    y.copy_(x + 1)
    return x + y

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((8,), generator=g, dtype=torch.float32)
    y = torch.randn((8,), generator=g, dtype=torch.float32)
    v0, s0 = x._version, x.untyped_storage()
    out = fn(x, y)
    return x._version - v0

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input x: _version delta differs from eager')
sys.exit(0 if same else 3)
