#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: shape '?' is invalid for input of size N): the sweep compiles other than the 2 graph(s) the reference predicts.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_925bfa.yaml."""
import sys

import torch


def f(a, b, lr):
    v1 = torch.nn.functional.leaky_relu(b, negative_slope=lr)
    v2 = v1.unsqueeze(0)
    with torch.set_grad_enabled(False):
        b.clamp_(min=-0.5, max=0.5)
    with torch.set_grad_enabled(False):
        a.zero_()
    return v2


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(1)
    base = torch.randn((6,), generator=g, dtype=torch.float32).requires_grad_()
    a = base[:4]
    b = base[2:]
    lr = 0.1
    try:
        with torch.set_grad_enabled(True):
            out = fn(a, b, lr)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: call: exception differs from eager')
sys.exit(0 if same else 3)
