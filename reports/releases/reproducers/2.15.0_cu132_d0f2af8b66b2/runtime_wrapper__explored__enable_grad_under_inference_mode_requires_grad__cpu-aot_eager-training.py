#!/usr/bin/env python3
"""Under an ambient inference mode, an output computed inside enable_grad from an input that requires grad does not require grad and has no grad_fn, as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: requires_grad (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/enable_grad_under_inference_mode_requires_grad.yaml."""
import sys

import torch

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def f(a):
    with torch.enable_grad():
        v0 = a * 2
    return v0

def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    a = non_leaf(torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_())
    with torch.set_grad_enabled(True):
        with torch.inference_mode():
            out = fn(a)
    return out.requires_grad

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: requires_grad differs from eager')
sys.exit(0 if same else 3)
