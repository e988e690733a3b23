#!/usr/bin/env python3
"""Explorer finding (torch.compile | is the input object | an output | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: is the input object (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_is_the_input_object_7e7520.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, b):
    a.set_(b.untyped_storage(), b.storage_offset(), b.size(), b.stride())
    b.mul_(2)
    return a


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    a = torch.randn((), generator=g, dtype=torch.float32)
    b = torch.randn((), generator=g, dtype=torch.float32)
    out = fn(a, b)
    t = flatten_outputs(out)[0]
    tensors = {'a': a, 'b': b}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return next((n for n, x in tensors.items() if x is t), None)


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: is the input object differs from eager')
sys.exit(0 if same else 3)
