#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: setStorage: sizes (?), strides (?), storage offset N, and itemsize N requiring a storage size of N are out of bounds for storage of size N): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_ab3ed1.yaml."""
import sys

import torch


def place(values, stride, offset, numel, device):
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out

def f(a, c):
    torch.ops.aten.squeeze_.default(a)
    c.mul_(2)
    return c


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((1,), generator=g, dtype=torch.float32)
    c = place(torch.randn((1,), generator=g, dtype=torch.float32), (1,), 3, 4, 'cpu')
    try:
        out = fn(a, c)
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return raised


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
