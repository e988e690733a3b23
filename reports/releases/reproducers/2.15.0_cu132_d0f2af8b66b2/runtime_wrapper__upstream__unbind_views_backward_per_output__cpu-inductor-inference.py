#!/usr/bin/env python3
"""Unsqueezed pieces of an unbind of a leaf that requires grad, returned around a fresh output, are views of the leaf as in eager, and a caller backward through each output in turn (the fresh one first) accumulates eager's gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/unbind_views_backward_per_output.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(t):
    pieces = t.unbind(0)
    return pieces[2].unsqueeze(1), t.sin(), pieces[0].unsqueeze(0)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    src = torch.randn((4, 3), generator=g, dtype=torch.float32)
    t = src.clone().requires_grad_()
    gt = torch.zeros((4, 3), dtype=torch.float32)
    out = fn(t)
    t_ = flatten_outputs(out)[0]
    tensors = {'src': src, 't': t, 'gt': gt}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t_._base is None else next((n for n, x in tensors.items() if x is t_._base or x._base is t_._base), '<intermediate>')

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
