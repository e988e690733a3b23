#!/usr/bin/env python3
"""A jagged nested tensor rebuilt in a fullgraph region from its own doubled values and its offsets matches eager (values, offsets, gradients).
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/njt_rebuilt_from_own_values_and_offsets.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(nt):
    return torch.nested.nested_tensor_from_jagged(nt.values() * 2, nt.offsets())

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a1 = torch.randn((2, 5), generator=g, dtype=torch.float64).requires_grad_()
    a2 = torch.randn((3, 5), generator=g, dtype=torch.float64).requires_grad_()
    a3 = torch.randn((4, 5), generator=g, dtype=torch.float64).requires_grad_()
    nt = torch.nested._internal.nested_tensor.jagged_from_list([a1, a2, a3], None)[0]
    out = fn(nt)
    t = out
    tensors = {'a1': a1, 'a2': a2, 'a3': a3, 'nt': nt}
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
