#!/usr/bin/env python3
"""After an input is transposed in place, a squeeze and a transpose of an intermediate and an unsqueeze of the input come back with eager's geometry, aliasing and gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: stride (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/all_alias_types_after_transpose.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, tuple | list):
        return [x for item in out for x in flatten_outputs(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flatten_outputs(out[k])]
    return [out]

def f(x):
    x.transpose_(1, 0)
    y = x.mul(2)
    return [y.squeeze(), y.transpose(1, 0), x.unsqueeze(0)]


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((1, 2, 4), generator=g, dtype=torch.float32)
    out = fn(x)
    t = flatten_outputs(out)[1]
    return t.stride()


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[1]: stride differs from eager')
sys.exit(0 if same else 3)
