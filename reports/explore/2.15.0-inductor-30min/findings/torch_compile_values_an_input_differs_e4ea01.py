#!/usr/bin/env python3
"""Explorer finding (torch.compile | values | an input | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input b: values (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_values_an_input_differs_e4ea01.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def f(a, b):
    b.addcmul_(a, a, value=0.5)


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    out = fn(a, b)
    return b.detach()


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
try:
    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, check_device=False, check_stride=False)
except AssertionError as exc:
    sys.exit(print('MISMATCH: input b: values differs from eager:', str(exc).splitlines()[0]) or 3)
sys.exit(print('MATCHES: compiled behaves like eager here') or 0)
