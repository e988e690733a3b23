#!/usr/bin/env python3
"""With dynamic=True, a clone of a TwoTensor viewed with its two symbolic sizes swapped gives eager's values, sizes and gradient, for two shapes from one compile.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_clone_view_swapped_dynamic.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(t):
    c = t.clone()
    return c.view(c.shape[1], c.shape[0])

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    t = TwoTensor(torch.randn((3, 4), generator=g, dtype=torch.float32), torch.randn((3, 4), generator=g, dtype=torch.float32)).requires_grad_()
    out = fn(t)
    t_ = out
    tensors = {'t': t}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t_._base is None else next((n for n, x in tensors.items() if x is t_._base or x._base is t_._base), '<intermediate>')

compiled_f = torch.compile(f, backend='inductor', dynamic=True, fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
