#!/usr/bin/env python3
"""Unbinding a jagged nested tensor under dynamic shapes (scalar outputs captured) gives eager's pieces; a nested tensor with as many pieces of other lengths and inner dim reuses the graph, one with a piece more recompiles.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/njt_unbind_offsets_length_guard.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.capture_scalar_outputs = True

def f(nt):
    return nt.unbind()

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a1 = torch.randn((2, 5), generator=g, dtype=torch.float64).requires_grad_()
    a2 = torch.randn((3, 5), generator=g, dtype=torch.float64).requires_grad_()
    a3 = torch.randn((4, 5), generator=g, dtype=torch.float64).requires_grad_()
    b1 = torch.randn((2, 2), generator=g, dtype=torch.float64).requires_grad_()
    b2 = torch.randn((3, 2), generator=g, dtype=torch.float64).requires_grad_()
    b3 = torch.randn((5, 2), generator=g, dtype=torch.float64).requires_grad_()
    c1 = torch.randn((2, 3), generator=g, dtype=torch.float64).requires_grad_()
    c2 = torch.randn((3, 3), generator=g, dtype=torch.float64).requires_grad_()
    c3 = torch.randn((4, 3), generator=g, dtype=torch.float64).requires_grad_()
    c4 = torch.randn((5, 3), generator=g, dtype=torch.float64).requires_grad_()
    nt = torch.nested._internal.nested_tensor.jagged_from_list([a1, a2, a3], None)[0]
    try:
        out = fn(nt)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='inductor', dynamic=True, fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: call: exception differs from eager')
sys.exit(0 if same else 3)
