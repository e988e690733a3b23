#!/usr/bin/env python3
"""A TwoTensor input mutated in place with a non-leaf tensor that requires grad compiles and ends as in eager, also when a later call passes a TwoTensor of transposed inner tensors (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/explored/twotensor_mutated_then_transposed_call.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def place(values, stride, offset, numel, device):
    with torch.no_grad():
        out = torch.empty(0, dtype=values.dtype, device=device).set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        return out.copy_(values.to(device))

def f(a, b):
    a.add_(b, alpha=0.5)
    a.mul_(2)

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(2)
    a = TwoTensor(torch.randn((3, 4), generator=g, dtype=torch.float32), torch.randn((3, 4), generator=g, dtype=torch.float32))
    b = non_leaf(torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_())
    out = fn(a, b)
    # call 2: a: two_tensor
    g = torch.Generator().manual_seed(2)
    a = TwoTensor(place(torch.randn((3, 4), generator=g, dtype=torch.float32), (1, 3), 0, 12, 'cpu'), place(torch.randn((3, 4), generator=g, dtype=torch.float32), (1, 3), 0, 12, 'cpu'))
    b = non_leaf(torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_())
    try:
        out = fn(a, b)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: call: exception differs from eager')
sys.exit(0 if same else 3)
