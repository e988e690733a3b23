#!/usr/bin/env python3
"""A __torch_function__ subclass that re-enters the default torch.add and doubles its result gives eager's doubled sum (and type) when torch.add itself is compiled.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: type (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/torch_function_add_doubler_compiled_add.yaml."""
import sys

import torch

import torch

class AddDoubler(torch.Tensor):
    """A plain (non-wrapper) subclass whose torch.add result comes back times two."""

    @staticmethod
    def __new__(cls, data):
        return torch.Tensor._make_subclass(cls, data)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        result = super().__torch_function__(func, types, args, kwargs or {})
        if func is torch.add and isinstance(result, torch.Tensor):
            result = result * 2.0
        return result

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, b):
    return torch.add(a, b)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = AddDoubler(torch.tensor([1.0, 2.0], dtype=torch.float32))
    b = AddDoubler(torch.tensor([3.0, 4.0], dtype=torch.float32))
    out = fn(a, b)
    t = flatten_outputs(out)[0]
    return f'{type(t).__module__}.{type(t).__qualname__}'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: type differs from eager')
sys.exit(0 if same else 3)
