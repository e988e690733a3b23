#!/usr/bin/env python3
"""A detached copy of a transposed intermediate and the transposed view itself come back sharing storage, only the second requiring grad, with eager's gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: stride (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/detach_and_view_of_intermediate.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def significant_strides(shape, stride):
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple((s if n > 1 else None for n, s in zip(shape, stride, strict=False)))

def f(x):
    y = (x + 1).transpose(0, 1)
    return y.detach(), y

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    out = fn(x)
    t = flatten_outputs(out)[0]
    return significant_strides(tuple(t.shape), t.stride())

compiled_f = torch.compile(f, backend='inductor', fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: stride differs from eager')
sys.exit(0 if same else 3)
