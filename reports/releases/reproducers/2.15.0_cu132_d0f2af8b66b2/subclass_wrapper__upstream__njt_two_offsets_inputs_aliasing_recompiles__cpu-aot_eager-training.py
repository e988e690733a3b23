#!/usr/bin/env python3
"""Two jagged nested tensors built in the graph from scaled copies of one values tensor and two offsets inputs, returned in swapped order, match eager when the offsets are distinct tensors, when one offsets tensor is passed twice (a recompile for the aliasing) and when a fresh clone is passed twice (no further recompile).
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/njt_two_offsets_inputs_aliasing_recompiles.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(vals, offs_a, offs_b):
    first = torch.nested.nested_tensor_from_jagged(vals * 2, offs_a)
    second = torch.nested.nested_tensor_from_jagged(vals * 3, offs_b)
    return second, first

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    vals = torch.randn((10, 5), generator=g, dtype=torch.float32).requires_grad_()
    offs_a = torch.tensor([0, 2, 6, 10], dtype=torch.int64)
    offs_b = torch.tensor([0, 1, 4, 10], dtype=torch.int64)
    out = fn(vals, offs_a, offs_b)
    t = flatten_outputs(out)[0]
    tensors = {'vals': vals, 'offs_a': offs_a, 'offs_b': offs_b}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
