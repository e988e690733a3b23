#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the backward | compiled raises where eager does not | RuntimeError: During the backward, we encountered a tensor subclass where we guessed its): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: backward: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_backward_compiled_ab4dd5.yaml."""
import contextlib
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def is_subclass(t):
    return type(t) is not torch.Tensor and hasattr(type(t), '__tensor_flatten__')

def tangent(out, gen):
    if is_subclass(out):
        names, ctx = type(out).__tensor_flatten__(out)
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())
    return plain_tangent(out, gen)

def plain_tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(a, b, m):
    b.add_(a, alpha=0.5)
    return b


def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(1)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    b = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        m = torch.nn.Linear(4, 4)
    m.to(device='cpu').train(True)
    out = fn(a, b, m)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7920)))
    # call 2: a: tensor[4]
    g = torch.Generator().manual_seed(1)
    a = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    b = TwoTensor(torch.randn((4,), generator=g, dtype=torch.float32), torch.randn((4,), generator=g, dtype=torch.float32))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        m = torch.nn.Linear(4, 4)
    m.to(device='cpu').train(True)
    out = fn(a, b, m)
    try:
        if out.requires_grad:
            out.backward(tangent(out, torch.Generator().manual_seed(7920)))
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: backward: exception differs from eager')
sys.exit(0 if same else 3)
