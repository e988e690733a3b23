#!/usr/bin/env python3
"""Explorer finding (torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: invalid gradient at index N - got (?) but expected shape compatible with (?)): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_exception_the_call_compiled_175450.yaml."""
import sys

import torch


def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def f(b):
    b.mul_(2)
    with torch.no_grad():
        torch.ops.aten.t_.default(b)


def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    b_leaf = torch.randn((3, 4), generator=g, dtype=torch.float32).requires_grad_()
    b = non_leaf(b_leaf)
    try:
        with torch.set_grad_enabled(True):
            out = fn(b)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
