#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: Expected !size_bytes_is_heap_allocated_ to be true, but got false. (Could this error message be improved? If so, please report an enhancement request to PyTorch): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at call 2: call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_113717.yaml."""
import sys

import torch


def f(a):
    v0 = a * 2 + a
    v0.data = a
    a.mul_(2)
    v0.mul_(2)


def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    a = torch.randn((0,), generator=g, dtype=torch.float32)
    out = fn(a)
    # call 2: a: tensor[2]
    g = torch.Generator().manual_seed(0)
    a = torch.randn((2,), generator=g, dtype=torch.float32)
    try:
        out = fn(a)
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
