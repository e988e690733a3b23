#!/usr/bin/env python3
"""Explorer finding (torch.compile | storage size | an output | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: storage size (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_storage_size_an_output_8e6a3c.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, lr):
    v0 = torch.add(a, a, alpha=lr)
    v0.set_(a)
    a.mul_(2)
    return v0


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(1)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    lr = 0.1
    out = fn(a, lr)
    t = flatten_outputs(out)[0]
    return t.untyped_storage().nbytes() // t.element_size()


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: storage size differs from eager')
sys.exit(0 if same else 3)
