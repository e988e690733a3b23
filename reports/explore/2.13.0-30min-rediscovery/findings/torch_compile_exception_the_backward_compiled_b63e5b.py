#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the backward | compiled raises where eager does not | RuntimeError: Function CompiledFunctionBackward returned an invalid gradient at index N - got (?) but expected shape compatible with (?)): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at call 1: backward: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_backward_compiled_b63e5b.yaml."""
import sys

import torch


def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(a, lr):
    a.mul_(lr)
    torch.ops.aten.as_strided_.default(a, (a.numel(),), (1,), a.storage_offset())
    with torch.no_grad():
        torch.ops.aten.unsqueeze_.default(a, 0)
    v4 = a * 2 + a
    return v4


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(0)
    a_leaf = torch.randn((1, 4), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    lr = 0.1
    with torch.set_grad_enabled(True):
        out = fn(a, lr)
    try:
        if out.requires_grad:
            out.backward(tangent(out, torch.Generator().manual_seed(7919)))
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return raised


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: backward: exception differs from eager')
sys.exit(0 if same else 3)
