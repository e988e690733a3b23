#!/usr/bin/env python3
"""A module that counts its calls in an integer buffer (self.steps += 1) and scales by it keeps eager's count and output over three calls.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: grad of m.lin.weight: values (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/client/buffer_step_counter.yaml."""
import contextlib
import sys

import torch

class Counted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.steps += 1
        return self.lin(x) / self.steps

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(m, x):
    return m(x)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        m = Counted().to(device='cpu').train(True)
    x = torch.randn((2, 4), generator=g, dtype=torch.float32)
    out = fn(m, x)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7919)))
    return m.get_parameter('lin.weight').grad.detach()

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
try:
    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, check_device=False, check_stride=False)
except AssertionError as exc:
    sys.exit(print('MISMATCH: call 1: grad of m.lin.weight: values differs from eager:', str(exc).splitlines()[0]) or 3)
sys.exit(print('MATCHES: compiled behaves like eager here') or 0)
