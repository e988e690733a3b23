#!/usr/bin/env python3
"""After set_grad_enabled(False) inside the region, an output viewing an input still aliases it and grad mode stays off after the call.
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/grad_mode_disabled_then_view.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x):
    y = x.cos()
    torch.set_grad_enabled(False)
    return y, x[1:], x.sum()

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_()
    with torch.set_grad_enabled(True):
        out = fn(x)
    return flatten_outputs(out)[1].is_leaf

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[1]: is_leaf differs from eager')
sys.exit(0 if same else 3)
