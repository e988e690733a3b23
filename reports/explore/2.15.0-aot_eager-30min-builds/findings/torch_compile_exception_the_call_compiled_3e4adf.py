#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor (?)] is at version N; expected version N inst): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_3e4adf.yaml."""
import sys

import torch


def f(a, m):
    v5 = m(a)
    a.add_(a, alpha=0.5)
    return v5


def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        m = torch.nn.Linear(4, 4)
    m.to(device='cpu').train(True)
    try:
        out = fn(a, m)
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
