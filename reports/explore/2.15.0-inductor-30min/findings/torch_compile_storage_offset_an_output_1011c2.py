#!/usr/bin/env python3
"""Explorer finding (torch.compile | storage_offset | an output | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: storage_offset (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_storage_offset_an_output_1011c2.yaml."""
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

def f(a):
    a.mul_(2)
    torch.ops.aten.t_.default(a)
    return a


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a = place(torch.randn((4,), generator=g, dtype=torch.float32), (1,), 3, 7, 'cpu')
    out = fn(a)
    t = flatten_outputs(out)[0]
    return t.storage_offset()


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: storage_offset differs from eager')
sys.exit(0 if same else 3)
