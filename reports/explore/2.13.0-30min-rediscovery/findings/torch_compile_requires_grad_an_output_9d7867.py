#!/usr/bin/env python3
"""Explorer finding (torch.compile | requires_grad | an output | compiled False, eager True): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at out[0]: requires_grad (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_requires_grad_an_output_9d7867.yaml."""
import sys

import torch


def f(b):
    v0 = b * 2 + b
    with torch.no_grad():
        v2 = v0.view(-1)
    return v2


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.randn((6,), generator=g, dtype=torch.float32).requires_grad_()
    b = base[2:]
    with torch.set_grad_enabled(True):
        out = fn(b)
    return out.requires_grad


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: requires_grad differs from eager')
sys.exit(0 if same else 3)
