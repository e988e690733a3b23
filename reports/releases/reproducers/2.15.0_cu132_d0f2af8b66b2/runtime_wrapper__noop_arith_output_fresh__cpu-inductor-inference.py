#!/usr/bin/env python3
"""Outputs of arithmetic no-ops on an input (x * 1, x + 0, x / 1.0) are fresh tensors as in eager, not the input object or an alias of it, so writing them leaves the input alone.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: is the input object (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/noop_arith_output_fresh.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x):
    return x * 1, x + 0, x / 1.0

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((4, 3), generator=g, dtype=torch.float32)
    out = fn(x)
    t = flatten_outputs(out)[0]
    tensors = {'x': x}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return next((n for n, x in tensors.items() if x is t), None)

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: is the input object differs from eager')
sys.exit(0 if same else 3)
