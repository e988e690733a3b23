#!/usr/bin/env python3
"""Explorer finding (torch.compile | values | an input (inner tensor) | differs): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at call 1: input c.a: values (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_values_an_input_inner_69a4f2.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def f(a, b, c, lr):
    v1 = torch.add(a, a, alpha=lr)
    b.set_(v1)
    b.mul_(lr)
    c.add_(v1, alpha=lr)


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(0)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    b = base[2:]
    c = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    lr = 0.1
    out = fn(a, b, c, lr)
    t = c.a
    return t.detach()


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
try:
    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, check_device=False, check_stride=False)
except AssertionError as exc:
    sys.exit(print('MISMATCH: call 1: input c.a: values differs from eager:', str(exc).splitlines()[0]) or 3)
sys.exit(print('MATCHES: compiled behaves like eager here') or 0)
