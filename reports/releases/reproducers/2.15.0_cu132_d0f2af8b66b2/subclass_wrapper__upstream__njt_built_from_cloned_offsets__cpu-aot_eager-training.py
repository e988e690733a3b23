#!/usr/bin/env python3
"""A jagged nested tensor built in the graph from a doubled values input and a clone of an offsets input is returned with eager's values, offsets and gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/njt_built_from_cloned_offsets.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(vals, offs):
    return torch.nested.nested_tensor_from_jagged(vals * 2, offs.clone())

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    vals = torch.randn((10, 5), generator=g, dtype=torch.float32).requires_grad_()
    offs = torch.tensor([0, 2, 6, 10], dtype=torch.int64)
    out = fn(vals, offs)
    t = out
    tensors = {'vals': vals, 'offs': offs}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')

compiled_f = torch.compile(f, backend='aot_eager', fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
