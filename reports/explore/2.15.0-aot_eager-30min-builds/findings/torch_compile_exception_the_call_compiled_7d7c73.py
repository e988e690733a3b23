#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: Encountered aliased inputs that are mutated in the graph, but at least one input/output): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_7d7c73.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def f(a, b, c, d):
    d.set_(c)
    v1 = c[1:]
    a.copy_(b)
    return v1


def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    b = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    c = torch.randn((4,), generator=g, dtype=torch.float32)
    d = a
    try:
        out = fn(a, b, c, d)
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
