#!/usr/bin/env python3
"""Explorer finding (torch.compile | stride | an output | differs): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at out[0]: stride (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_stride_an_output_differs_c61af0.yaml."""
import sys

import torch


def place(values, stride, offset, numel, device):
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def significant_strides(shape, stride):
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple((s if n > 1 else None for n, s in zip(shape, stride, strict=False)))

def f(b):
    b.mul_(2)
    torch.ops.aten.squeeze_.default(b)
    return b


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    b = place(torch.randn((4,), generator=g, dtype=torch.float32), (2,), 0, 7, 'cpu')
    out = fn(b)
    t = flatten_outputs(out)[0]
    return significant_strides(tuple(t.shape), t.stride())


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: stride differs from eager')
sys.exit(0 if same else 3)
