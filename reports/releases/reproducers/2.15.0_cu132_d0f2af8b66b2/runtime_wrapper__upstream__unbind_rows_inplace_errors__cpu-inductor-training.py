#!/usr/bin/env python3
"""Rows of a non-leaf input returned by unbind refuse an in-place write, and refuse use after the input or a detached row is mutated, with eager's errors.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/unbind_rows_inplace_errors.yaml."""
import sys

import torch

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x):
    return list(x.unbind(0))

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = non_leaf(torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_())
    out = fn(x)
    t = flatten_outputs(out)[0]
    tensors = {'x': x}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
