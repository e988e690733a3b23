#!/usr/bin/env python3
"""An input that starts at a storage offset, mutated in place and then transposed in place, ends with eager's values, size, stride and offset (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at input a: storage_offset (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/transpose_offset_input.yaml."""
import sys

import torch

def place(values, stride, offset, numel, device):
    with torch.no_grad():
        out = torch.empty(0, dtype=values.dtype, device=device).set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        return out.copy_(values.to(device))

def f(a):
    a.mul_(2)
    torch.ops.aten.t_.default(a)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = place(torch.randn((3, 4), generator=g, dtype=torch.float32), (4, 1), 3, 15, 'cpu')
    out = fn(a)
    return a.storage_offset()

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: storage_offset differs from eager')
sys.exit(0 if same else 3)
