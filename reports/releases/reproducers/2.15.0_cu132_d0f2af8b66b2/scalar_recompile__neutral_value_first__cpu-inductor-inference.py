#!/usr/bin/env python3
"""A momentum-style buf * m swept from the neutral value m = 1.0 returns a fresh tensor with eager's values for every value (the static first graph must not fold buf * 1.0 into an alias of buf), compiling twice.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: is the input object (exit 3; 0 where they agree, 4 without the device).
From cases/scalar_recompile/neutral_value_first.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.specialize_float = False

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(buf, m):
    return buf * m

def run(fn, compiled):
    # call 1: m=1.0
    g = torch.Generator().manual_seed(0)
    buf = torch.randn((8,), generator=g, dtype=torch.float32)
    m = 1.0
    out = fn(buf, m)
    t = flatten_outputs(out)[0]
    tensors = {'buf': buf}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return next((n for n, x in tensors.items() if x is t), None)

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: is the input object differs from eager')
sys.exit(0 if same else 3)
