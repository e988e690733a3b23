#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | TorchRuntimeError: RuntimeError when making fake tensor call): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_22c9bd.yaml."""
import sys

import torch


def f(a, c):
    torch.ops.aten.t_.default(a)
    a.set_(a.untyped_storage(), a.storage_offset(), a.size(), a.stride())
    torch.ops.aten.t_.default(a)
    v5 = a * 2 + c


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a = torch.randn((0, 3), generator=g, dtype=torch.float32)
    c = torch.randn((0, 3), generator=g, dtype=torch.float32)
    try:
        out = fn(a, c)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
