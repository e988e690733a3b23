#!/usr/bin/env python3
"""Under dynamic shapes, a tensor and its interior slice each incremented in place by equal int arguments end as in eager, and both returned results are those inputs.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: is the input object (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/overlapping_inputs_add_equal_ints_dynamic.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(t0, t1, s0, s1):
    return t0.add_(s0), t1.add_(s1)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    t0 = (torch.rand((10,), generator=g, dtype=torch.float32))
    t1 = t0[1:-1]
    s0 = 2.0
    s1 = 2.0
    out = fn(t0, t1, s0, s1)
    t = flatten_outputs(out)[0]
    tensors = {'t0': t0, 't1': t1}
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
