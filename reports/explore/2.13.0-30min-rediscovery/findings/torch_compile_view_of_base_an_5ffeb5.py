#!/usr/bin/env python3
"""Explorer finding (torch.compile | view of (_base) | an output | compiled not a view, eager a view of an intermediate): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_view_of_base_an_5ffeb5.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, m):
    v1 = m(a)
    return v1


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        m = torch.nn.Linear(4, 4)
    m.to(device='cpu').train(True)
    out = fn(a, m)
    t = out
    tensors = {'a': a, 'm.weight': m.get_parameter('weight'), 'm.bias': m.get_parameter('bias')}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
