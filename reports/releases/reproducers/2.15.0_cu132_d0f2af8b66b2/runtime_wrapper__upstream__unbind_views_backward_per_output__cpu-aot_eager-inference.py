#!/usr/bin/env python3
"""Unsqueezed pieces of an unbind of a leaf that requires grad, returned around a fresh output, are views of the leaf as in eager, and a caller backward through each output in turn (the fresh one first) accumulates eager's gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: calls[0].after: exception (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/unbind_views_backward_per_output.yaml."""
import sys

import torch

def f(t):
    pieces = t.unbind(0)
    return pieces[2].unsqueeze(1), t.sin(), pieces[0].unsqueeze(0)

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    src = torch.randn((4, 3), generator=g, dtype=torch.float32)
    t = src.clone().requires_grad_()
    gt = torch.zeros((4, 3), dtype=torch.float32)
    out = fn(t)
    # call 2: after: for o in (out[1], out[0], out[2]): ...
    g = torch.Generator().manual_seed(0)
    src = torch.randn((4, 3), generator=g, dtype=torch.float32)
    t = src.clone().requires_grad_()
    gt = torch.zeros((4, 3), dtype=torch.float32)
    out = fn(t)
    try:
        for o in (out[1], out[0], out[2]):
            o.sum().backward()
        gt = t.grad
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: calls[0].after: exception differs from eager')
sys.exit(0 if same else 3)
