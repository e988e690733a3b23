#!/usr/bin/env python3
"""Explorer finding (torch.compile | is_leaf | an output | compiled True, eager False): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_is_leaf_an_output_984fa8.yaml."""
import sys

import torch


def f(a, b):
    a.add_(a, alpha=0.5)
    return b


def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    base = torch.randn((6,), generator=g, dtype=torch.float32).requires_grad_()
    a = base[:4]
    b = base[2:]
    with torch.inference_mode():
        out = fn(a, b)
    return out.is_leaf


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: is_leaf differs from eager')
sys.exit(0 if same else 3)
