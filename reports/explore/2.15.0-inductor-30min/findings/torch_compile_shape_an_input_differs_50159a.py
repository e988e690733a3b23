#!/usr/bin/env python3
"""Explorer finding (torch.compile | shape | an input | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input a: shape (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_shape_an_input_differs_50159a.yaml."""
import sys

import torch


def f(a):
    torch.ops.aten.t_.default(a)
    a.set_(a.untyped_storage(), a.storage_offset(), a.size(), a.stride())


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a = torch.randn((0, 3), generator=g, dtype=torch.float32)
    out = fn(a)
    return tuple(a.shape)


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: shape differs from eager')
sys.exit(0 if same else 3)
