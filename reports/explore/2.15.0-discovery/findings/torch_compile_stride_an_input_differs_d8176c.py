#!/usr/bin/env python3
"""Explorer finding (torch.compile | stride | an input | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: input a: stride (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_stride_an_input_differs_d8176c.yaml."""
import sys

import torch


def place(values, stride, offset, numel, device):
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out

def significant_strides(shape, stride):
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple((s if n > 1 else None for n, s in zip(shape, stride, strict=False)))

def f(a, lr):
    a.mul_(lr)
    torch.ops.aten.squeeze_.default(a)


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(1)
    a = place(torch.randn((4,), generator=g, dtype=torch.float32), (2,), 0, 7, 'cpu')
    lr = 0.1
    out = fn(a, lr)
    return significant_strides(tuple(a.shape), a.stride())


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: input a: stride differs from eager')
sys.exit(0 if same else 3)
