#!/usr/bin/env python3
"""Explorer finding (torch.compile | shape | an output | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: shape (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_shape_an_output_differs_2c72c2.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a):
    a.mul_(2)
    torch.ops.aten.squeeze_.default(a)
    return a


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a = torch.randn((1,), generator=g, dtype=torch.float32)
    with torch.inference_mode():
        out = fn(a)
    t = flatten_outputs(out)[0]
    return tuple(t.shape)


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: shape differs from eager')
sys.exit(0 if same else 3)
