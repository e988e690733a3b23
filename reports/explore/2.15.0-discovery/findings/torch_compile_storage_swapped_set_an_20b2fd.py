#!/usr/bin/env python3
"""Explorer finding (torch.compile | storage swapped (set_) | an input | compiled True, eager False): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input b: storage swapped (set_) (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_storage_swapped_set_an_20b2fd.yaml."""
import sys

import torch


def f(b):
    with torch.no_grad():
        b.mul_(2)
    b.data = b


def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    b = torch.randn((), generator=g, dtype=torch.float32)
    v0, s0 = b._version, b.untyped_storage()
    with torch.set_grad_enabled(True):
        out = fn(b)
    return b.untyped_storage() is not s0


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input b: storage swapped (set_) differs from eager')
sys.exit(0 if same else 3)
