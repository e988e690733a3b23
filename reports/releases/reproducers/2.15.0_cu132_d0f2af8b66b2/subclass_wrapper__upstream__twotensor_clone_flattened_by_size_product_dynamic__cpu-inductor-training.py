#!/usr/bin/env python3
"""With dynamic=True, the clone of a TwoTensor of ones (inner b a clone of the grad leaf a) viewed flat by the product of its symbolic sizes comes back as a TwoTensor with eager's values and, after backward, eager's gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_clone_flattened_by_size_product_dynamic.yaml."""
import sys

import torch

import torch.testing._internal.two_tensor  # the view expressions name TwoTensor by its path

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(t):
    c = t.clone()
    return c.view(c.shape[0] * c.shape[1])

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.ones((3, 4), dtype=torch.float32).requires_grad_()
    t = torch.testing._internal.two_tensor.TwoTensor(a, a.clone())
    out = fn(t)
    t_ = out
    tensors = {'a': a, 't': t}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t_._base is None else next((n for n, x in tensors.items() if x is t_._base or x._base is t_._base), '<intermediate>')

compiled_f = torch.compile(f, backend='inductor', dynamic=True, fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
