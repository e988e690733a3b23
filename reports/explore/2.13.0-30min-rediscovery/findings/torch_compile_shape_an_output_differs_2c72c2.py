#!/usr/bin/env python3
"""Explorer finding (torch.compile | shape | an output | differs): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at call 1: out[0]: shape (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_shape_an_output_differs_2c72c2.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, lr):
    v0 = torch.add(a, a, alpha=lr)
    torch.ops.aten.as_strided_.default(v0, (v0.numel(),), (1,), v0.storage_offset())
    with torch.no_grad():
        v0.mul_(2)
    return v0


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(0)
    a = torch.randn((1, 4), generator=g, dtype=torch.float32)
    lr = 0.1
    with torch.set_grad_enabled(True):
        out = fn(a, lr)
    t = flatten_outputs(out)[0]
    return tuple(t.shape)


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: shape differs from eager')
sys.exit(0 if same else 3)
