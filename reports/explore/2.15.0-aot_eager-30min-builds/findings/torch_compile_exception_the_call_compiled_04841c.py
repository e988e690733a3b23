#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: expand: attempting to expand a dimension of length N -> N!): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_04841c.yaml."""
import sys

import torch


def f(b):
    torch.ops.aten.t_.default(b)
    with torch.no_grad():
        b.mul_(2)


def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    b = torch.randn((0, 3), generator=g, dtype=torch.float32)
    try:
        with torch.set_grad_enabled(True):
            out = fn(b)
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
