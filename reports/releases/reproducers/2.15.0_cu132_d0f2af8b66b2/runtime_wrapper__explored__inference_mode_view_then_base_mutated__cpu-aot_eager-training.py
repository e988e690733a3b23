#!/usr/bin/env python3
"""Under inference mode, a view of an input that requires grad, taken before the input is mutated in place and then returned, compiles and runs as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/inference_mode_view_then_base_mutated.yaml."""
import sys

import torch

def f(a):
    v5 = a.view(-1)
    a.add_(a, alpha=0.5)
    return v5

def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    base = torch.randn((6,), generator=g, dtype=torch.float32).requires_grad_()
    a = base[:4]
    try:
        with torch.inference_mode():
            out = fn(a)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
