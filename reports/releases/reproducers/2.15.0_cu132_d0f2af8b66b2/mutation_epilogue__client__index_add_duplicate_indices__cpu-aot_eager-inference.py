#!/usr/bin/env python3
"""index_add_ into an input with given, repeated indices accumulates every contribution into the input, as eager does.
On torch 2.15.0+cu132 the compiled call differs from eager at input acc: _version delta (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/client/index_add_duplicate_indices.yaml."""
import sys

import torch


def f(acc, idx, src):
    acc.index_add_(0, idx, src)
    return acc[0]


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    acc = torch.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], dtype=torch.float32)
    idx = torch.tensor([0, 2, 0, 0], dtype=torch.int64)
    src = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], dtype=torch.float32)
    v0, s0 = acc._version, acc.untyped_storage()
    out = fn(acc, idx, src)
    return acc._version - v0


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input acc: _version delta differs from eager')
sys.exit(0 if same else 3)
