#!/usr/bin/env python3
"""Explorer finding (torch.compile | storage swapped (set_) | an input | compiled True, eager False): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at input a: storage swapped (set_) (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_storage_swapped_set_an_20b2fd.yaml."""
import sys

import torch


def f(a):
    with torch.no_grad():
        a.mul_(2)
    a.data = a


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    v0, s0 = a._version, a.untyped_storage()
    with torch.set_grad_enabled(True):
        out = fn(a)
    return a.untyped_storage() is not s0


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: storage swapped (set_) differs from eager')
sys.exit(0 if same else 3)
