#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | AssertionError: sources must not be empty for symbol sN): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at call 2: call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_1a820b.yaml."""
import sys

import torch


def place(values, stride, offset, numel, device):
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out

def f(a, b, c):
    torch.ops.aten.as_strided_.default(c, (c.numel(),), (1,), c.storage_offset())


def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    a = torch.randn((3, 4), generator=g, dtype=torch.float32)
    b = torch.randn((3, 4), generator=g, dtype=torch.float32)
    c = place(torch.randn((3, 4), generator=g, dtype=torch.float32), (4, 1), 3, 15, 'cpu')
    out = fn(a, b, c)
    # call 2: a: tensor[5, 4], b: tensor[5, 4], c: tensor[5, 4]
    g = torch.Generator().manual_seed(0)
    a = torch.randn((5, 4), generator=g, dtype=torch.float32)
    b = torch.randn((5, 4), generator=g, dtype=torch.float32)
    c = place(torch.randn((5, 4), generator=g, dtype=torch.float32), (4, 1), 3, 23, 'cpu')
    try:
        out = fn(a, b, c)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: call: exception differs from eager')
sys.exit(0 if same else 3)
