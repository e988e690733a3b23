#!/usr/bin/env python3
"""Three slices of one base, the last two overlapping, each incremented in place under dynamic shapes, recompile once when called with slices that no longer overlap, and every call ends with eager's values in the shared storage.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: is the input object (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/overlap_guard_recompiles_when_overlap_ends.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, b, c):
    for view in (a, b, c):
        view.add_(1)
    return a

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.ones((20,), dtype=torch.float32)
    a = base[:5]
    b = base[7:13]
    c = base[9:]
    out = fn(a, b, c)
    t = flatten_outputs(out)[0]
    tensors = {'base': base, 'a': a, 'b': b, 'c': c}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return next((n for n, x in tensors.items() if x is t), None)

compiled_f = torch.compile(f, backend='aot_eager', dynamic=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: is the input object differs from eager')
sys.exit(0 if same else 3)
