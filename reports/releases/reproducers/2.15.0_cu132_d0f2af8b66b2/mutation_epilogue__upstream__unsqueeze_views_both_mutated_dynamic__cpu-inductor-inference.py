#!/usr/bin/env python3
"""Under dynamic shapes, two separate unsqueeze(0) views of one tensor, both incremented in place, end as in eager (both writes land), and the returned first view matches.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: is the input object (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/unsqueeze_views_both_mutated_dynamic.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x, y):
    x.add_(1)
    y.add_(1)
    return x

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.ones((10,), dtype=torch.float32)
    x = base.unsqueeze(0)
    y = base.unsqueeze(0)
    out = fn(x, y)
    t = flatten_outputs(out)[0]
    tensors = {'base': base, 'x': x, 'y': y}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return next((n for n, x in tensors.items() if x is t), None)

compiled_f = torch.compile(f, backend='inductor', dynamic=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: is the input object differs from eager')
sys.exit(0 if same else 3)
