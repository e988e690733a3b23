#!/usr/bin/env python3
"""Two overlapping views of one hidden base, one mutated and the other read after the write, see eager's values (the read must observe the mutation).
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: storage_offset (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/aliased_inputs_overlapping.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, b):
    a.mul_(2)
    return b * 1

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.randn((10,), generator=g, dtype=torch.float32)
    a = base[0:6]
    b = base[3:9]
    out = fn(a, b)
    return flatten_outputs(out)[0].storage_offset()

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: storage_offset differs from eager')
sys.exit(0 if same else 3)
