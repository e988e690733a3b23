#!/usr/bin/env python3
"""Two flat views of one non-leaf tensor where only the first gets a metadata mutation (t_ on 1-D) end with eager's geometry, and their sum matches.
On torch 2.15.0+cu132 the compiled call differs from eager at input mid: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/aliased_views_metadata_mutation_only.yaml."""
import contextlib
import sys

import torch

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def f(a, b):
    a.t_()
    return a + b

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.randn((2, 2), generator=g, dtype=torch.float32).requires_grad_()
    mid = base.add(1)
    a = mid.view(-1)
    b = mid.view(-1)
    v0, s0 = mid._version, mid.untyped_storage()
    out = fn(a, b)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        out.backward(tangent(out, torch.Generator().manual_seed(7919)))
    return mid._version - v0

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input mid: _version moved differs from eager')
sys.exit(0 if same else 3)
