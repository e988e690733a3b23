#!/usr/bin/env python3
"""An input with gaps in its storage, mutated in place and then squeezed in place through the ATen overload (no dim of size 1, so a no-op), keeps eager's stride (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at input a: stride (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/squeeze_after_mutation_strided_input.yaml."""
import sys

import torch

def place(values, stride, offset, numel, device):
    with torch.no_grad():
        out = torch.empty(0, dtype=values.dtype, device=device).set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        return out.copy_(values.to(device))

def significant_strides(shape, stride):
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple((s if n > 1 else None for n, s in zip(shape, stride, strict=False)))

def f(a):
    a.mul_(2)
    torch.ops.aten.squeeze_.default(a)

def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    a = place(torch.randn((4,), generator=g, dtype=torch.float32), (2,), 0, 7, 'cpu')
    out = fn(a)
    return significant_strides(tuple(a.shape), a.stride())

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: stride differs from eager')
sys.exit(0 if same else 3)
