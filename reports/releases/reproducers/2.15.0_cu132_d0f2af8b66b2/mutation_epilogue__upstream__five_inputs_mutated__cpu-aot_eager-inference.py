#!/usr/bin/env python3
"""Five inputs each mutated in place by a different amount each end with their own eager value and moved version (no index mix-up in the epilogue).
On torch 2.15.0+cu132 the compiled call differs from eager at input a: _version delta (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/five_inputs_mutated.yaml."""
import sys

import torch


def f(a, b, c, d, e):
    a.add_(1)
    b.add_(2)
    c.add_(3)
    d.add_(4)
    e.add_(5)
    return a + b + c + d + e


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    c = torch.randn((4,), generator=g, dtype=torch.float32)
    d = torch.randn((4,), generator=g, dtype=torch.float32)
    e = torch.randn((4,), generator=g, dtype=torch.float32)
    v0, s0 = a._version, a.untyped_storage()
    out = fn(a, b, c, d, e)
    return a._version - v0


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: _version delta differs from eager')
sys.exit(0 if same else 3)
