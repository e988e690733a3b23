#!/usr/bin/env python3
"""Explorer finding (torch.compile | view of (_base) | an output | compiled a view of an intermediate, eager not a view): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_view_of_base_an_2af613.yaml."""
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

def f(a, lr):
    v0 = torch.nn.functional.leaky_relu(a, negative_slope=lr)
    torch.ops.aten.unsqueeze_.default(v0, 0)
    return v0


def run(fn, compiled):
    # call 1: lr=1.0
    g = torch.Generator().manual_seed(1)
    a_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    lr = 1.0
    out = fn(a, lr)
    t = out
    tensors = {'a': a}
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
