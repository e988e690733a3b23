#!/usr/bin/env python3
"""A view of an input requiring grad, taken under no_grad and returned, is a leaf that does not require grad and takes no gradient, as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/no_grad_view_output.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a):
    with torch.no_grad():
        v = a.unsqueeze(0)
    return a, v

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    with torch.set_grad_enabled(True):
        out = fn(a)
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
