#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | LoweringException: NotImplementedError: as_strided((?), (?), N) requires N elements but bufN holds only N. This happens when a tensor al): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_da81e1.yaml."""
import sys

import torch


def place(values, stride, offset, numel, device):
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out

def f(a, b, lr):
    a.zero_()
    torch.ops.aten.as_strided_.default(a, (a.numel(),), (1,), a.storage_offset())
    a.add_(b, alpha=lr)


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(2)
    a = place(torch.randn((4,), generator=g, dtype=torch.float32), (1,), 3, 7, 'cpu')
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    lr = 0.1
    try:
        out = fn(a, b, lr)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: call: exception differs from eager')
sys.exit(0 if same else 3)
