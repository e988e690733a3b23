#!/usr/bin/env python3
"""A flattened view and a transpose of one intermediate and a transpose of another come back sharing storage per intermediate, with eager's geometry and gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/views_of_two_intermediates_mixed.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x):
    p = x * 3
    q = x * 4
    return [p.view(-1), q.transpose(1, 0), p.transpose(1, 0)]

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    out = fn(x)
    t = flatten_outputs(out)[1]
    tensors = {'x': x}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:1])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[1]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
