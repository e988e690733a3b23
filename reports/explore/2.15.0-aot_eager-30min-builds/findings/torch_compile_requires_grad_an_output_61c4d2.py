#!/usr/bin/env python3
"""Explorer finding (torch.compile | requires_grad | an output | compiled True, eager False): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: requires_grad (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_requires_grad_an_output_61c4d2.yaml."""
import sys

import torch


def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def f(a, lr):
    with torch.enable_grad():
        v0 = a * lr ** 2
    return v0


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(1)
    a_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    lr = 0.1
    with torch.set_grad_enabled(True):
        with torch.inference_mode():
            out = fn(a, lr)
    return out.requires_grad


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: requires_grad differs from eager')
sys.exit(0 if same else 3)
