#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: Encountered aliased inputs that are mutated in the graph, but at least one input/output): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_7d7c73.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def place(values, stride, offset, numel, device):
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out

def f(a, b, c):
    c.mul_(2)
    b.mul_(2)
    v2 = a.unsqueeze(0)


def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(2)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = place(torch.randn((4,), generator=g, dtype=torch.float32), (2,), 0, 7, 'cpu')
    b = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    c = torch.randn((4,), generator=g, dtype=torch.float32)
    out = fn(a, b, c)
    # call 2: a: base[:4], c: base[2:6]
    g = torch.Generator().manual_seed(2)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    b = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    c = base[2:6]
    try:
        out = fn(a, b, c)
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return raised


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: call: exception differs from eager')
sys.exit(0 if same else 3)
