#!/usr/bin/env python3
"""An intermediate returned both detached and as a flattened view gives two outputs sharing one storage, only the view requiring grad, as in eager; backward matches eager.
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/intermediate_detached_and_view.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x):
    y = x + 1
    return y.detach(), y.view(-1)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    out = fn(x)
    return flatten_outputs(out)[1].is_leaf

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[1]: is_leaf differs from eager')
sys.exit(0 if same else 3)
