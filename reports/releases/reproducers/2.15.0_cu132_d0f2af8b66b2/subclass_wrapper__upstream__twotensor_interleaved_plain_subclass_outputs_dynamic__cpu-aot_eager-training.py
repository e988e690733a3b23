#!/usr/bin/env python3
"""With dynamic=True, plain inner tensors and flattened TwoTensor views of two clones, returned interleaved, keep eager's order, types, values and gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[1]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_interleaved_plain_subclass_outputs_dynamic.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(t):
    c1 = t.clone()
    c2 = t.clone()
    return c1.a, c1.view(c1.shape[0] * c1.shape[1]), c1.b, c2.view(-1)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    t = TwoTensor(torch.randn((3, 4), generator=g, dtype=torch.float32), torch.randn((3, 4), generator=g, dtype=torch.float32)).requires_grad_()
    out = fn(t)
    t_ = flatten_outputs(out)[1]
    tensors = {'t': t}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:1])})
    return None if t_._base is None else next((n for n, x in tensors.items() if x is t_._base or x._base is t_._base), '<intermediate>')

compiled_f = torch.compile(f, backend='aot_eager', dynamic=True, fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[1]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
