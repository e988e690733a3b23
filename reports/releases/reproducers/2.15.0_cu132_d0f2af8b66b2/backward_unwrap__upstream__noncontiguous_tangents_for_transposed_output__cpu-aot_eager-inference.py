#!/usr/bin/env python3
"""The transpose of an input plus one, compiled once with tangent strides guessed from the outputs, gets from the caller an all-ones tangent, a zero-stride expanded tangent and a non-dense strided tangent on three calls; each input gradient has eager's values.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: out[0]: view of (_base) (exit 3; 0 where they agree, 4 without the device).
From cases/backward_unwrap/upstream/noncontiguous_tangents_for_transposed_output.yaml."""
import sys

import torch
import torch._functorch.config
torch._functorch.config.guess_tangent_strides_as_outputs = True

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(x):
    shifted = x + 1
    return shifted.transpose(1, 2)

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    x = torch.randn((2, 4, 6), generator=g, dtype=torch.float32)
    gx = torch.zeros((2, 4, 6), dtype=torch.float32)
    out = fn(x)
    # call 2: before: x = x.detach().requires_grad_(True), after: gx = torch.autograd.grad(out, x, torch.o ...
    g = torch.Generator().manual_seed(0)
    x = torch.randn((2, 4, 6), generator=g, dtype=torch.float32)
    gx = torch.zeros((2, 4, 6), dtype=torch.float32)
    # the caller, before the call
    x = x.detach().requires_grad_(True)
    out = fn(x)
    # the caller, after the call
    gx = torch.autograd.grad(out, x, torch.ones(out.shape, dtype=out.dtype, device=out.device))[0].clone(memory_format=torch.contiguous_format)
    t = flatten_outputs(out)[0]
    tensors = {'x': x, 'gx': gx}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), '<intermediate>')

compiled_f = torch.compile(f, backend='aot_eager', fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: out[0]: view of (_base) differs from eager')
sys.exit(0 if same else 3)
