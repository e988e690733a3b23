#!/usr/bin/env python3
"""The rows of an intermediate, the intermediate and a same-shape view of it are returned; the caller doubles the last output in place and then takes gradients, all as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: out[0]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/intermediate_rows_caller_mutates_then_grad.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, tuple | list):
        return [x for item in out for x in flatten_outputs(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flatten_outputs(out[k])]
    return [out]

def f(x):
    y = x * 3
    return (*y.unbind(0), y, y.view(y.shape))


def run(fn, compiled):
    out = None
    # call 1
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 3), generator=g, dtype=torch.float32)
    gx = torch.zeros((3, 3), dtype=torch.float32)
    out = fn(x)
    # call 2: before: x = x.detach().requires_grad_(True), after: out[-1].mul_(2) ...
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 3), generator=g, dtype=torch.float32)
    gx = torch.zeros((3, 3), dtype=torch.float32)
    # the caller, before the call
    x = x.detach().requires_grad_(True)
    out = fn(x)
    # the caller, after the call
    out[-1].mul_(2)
    gx = torch.autograd.grad(out[-1].sum(), x)[0]
    t = flatten_outputs(out)[0]
    try:
        return t.is_leaf
    except RuntimeError as exc:
        return f'raises {type(exc).__name__}: ' + str(exc).split('.')[0]


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: out[0]: is_leaf differs from eager')
sys.exit(0 if same else 3)
