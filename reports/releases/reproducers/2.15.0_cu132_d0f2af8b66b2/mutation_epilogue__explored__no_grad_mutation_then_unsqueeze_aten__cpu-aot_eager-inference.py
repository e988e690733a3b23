#!/usr/bin/env python3
"""An input mutated in place under no_grad and then unsqueezed in place through the ATen overload compiles and ends with eager's values, size and stride (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/no_grad_mutation_then_unsqueeze_aten.yaml."""
import sys

import torch

def f(a):
    with torch.no_grad():
        a.mul_(2)
    torch.ops.aten.unsqueeze_.default(a, 0)

def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    try:
        with torch.set_grad_enabled(True):
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
