#!/usr/bin/env python3
"""A sparse EmbeddingBag's output flattened with view(-1), compiled with dynamic shapes, gives eager's values and the weight's sparse gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/sparse_embedding_bag_view_dynamic.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(emb, x, y):
    return emb(x, y).view(-1)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        emb = torch.nn.EmbeddingBag(100, 8, sparse=True).to(device='cpu').train(True)
    x = torch.arange(3, dtype=torch.float64).reshape((3,)).to(torch.int64)
    y = torch.arange(3, dtype=torch.float64).reshape((3,)).to(torch.int64)
    out = fn(emb, x, y)
    t = out
    tensors = {'emb.weight': emb.get_parameter('weight'), 'x': x, 'y': y}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')

compiled_f = torch.compile(f, backend='aot_eager', dynamic=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
