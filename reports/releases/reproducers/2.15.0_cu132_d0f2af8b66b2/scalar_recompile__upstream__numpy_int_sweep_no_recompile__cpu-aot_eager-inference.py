#!/usr/bin/env python3
"""A function returning a dict of a float64 tensor plus one and a NumPy int64 halved, called with ten NumPy int64 values (0 to 9) while shapes are assumed dynamic, compiles one graph and gives eager's dict each time.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[1]: type (exit 3; 0 where they agree, 4 without the device).
From cases/scalar_recompile/upstream/numpy_int_sweep_no_recompile.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.assume_static_by_default = False

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x, n):
    return {"a": x + 1, "b": n / 2}

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    n = torch.tensor(0).numpy()[()]
    out = fn(x, n)
    t = flatten_outputs(out)[1]
    return f'{type(t).__module__}.{type(t).__qualname__}'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[1]: type differs from eager')
sys.exit(0 if same else 3)
