#!/usr/bin/env python3
"""Explorer finding (torch.compile | shape | an input | differs): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at input a: shape (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_shape_an_input_differs_50159a.yaml."""
import sys

import torch


def f(a):
    torch.ops.aten.squeeze_.default(a)
    with torch.no_grad():
        a.mul_(2)


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((1,), generator=g, dtype=torch.float32)
    with torch.set_grad_enabled(True):
        out = fn(a)
    return tuple(a.shape)


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: shape differs from eager')
sys.exit(0 if same else 3)
