#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | AssertionError: Guard failed on the same frame it was created. This is a bug - please create an issue.Guard fail reason: N/N: a.a.size()(?) != N # (_functorch/_aot_autograd/fun): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_cd1cdf.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def f(a, b):
    torch.ops.aten.t_.default(a)


def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(1)
    a = TwoTensor(torch.randn((3, 4), generator=g, dtype=torch.float32), torch.randn((3, 4), generator=g, dtype=torch.float32))
    b = torch.randn((3, 4), generator=g, dtype=torch.float32)
    out = fn(a, b)
    # call 2: a: two_tensor, b: tensor[5, 4]
    g = torch.Generator().manual_seed(1)
    a = TwoTensor(torch.randn((5, 4), generator=g, dtype=torch.float32), torch.randn((5, 4), generator=g, dtype=torch.float32))
    b = torch.randn((5, 4), generator=g, dtype=torch.float32)
    try:
        out = fn(a, b)
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
