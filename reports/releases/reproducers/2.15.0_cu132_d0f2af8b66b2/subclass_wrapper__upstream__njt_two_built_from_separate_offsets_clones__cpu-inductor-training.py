#!/usr/bin/env python3
"""Two jagged nested tensors built in the graph from scaled copies of one values input, each on its own clone of one offsets input, are returned in swapped order with eager's values and gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/njt_two_built_from_separate_offsets_clones.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(vals, offs):
    first = torch.nested.nested_tensor_from_jagged(vals * 2, offs.clone())
    second = torch.nested.nested_tensor_from_jagged(vals * 3, offs.clone())
    return second, first

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    vals = torch.randn((10, 5), generator=g, dtype=torch.float32).requires_grad_()
    offs = torch.tensor([0, 2, 6, 10], dtype=torch.int64)
    out = fn(vals, offs)
    t = flatten_outputs(out)[0]
    tensors = {'vals': vals, 'offs': offs}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')

compiled_f = torch.compile(f, backend='inductor', fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
