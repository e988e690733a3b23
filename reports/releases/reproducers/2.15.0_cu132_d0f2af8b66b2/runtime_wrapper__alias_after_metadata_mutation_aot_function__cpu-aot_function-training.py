#!/usr/bin/env python3
"""Through aot_function, outputs that view an input after its metadata mutation (t_) alias it with eager's post-mutation geometry, with and without keep_inference_input_mutations.
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/alias_after_metadata_mutation_aot_function.yaml."""
import contextlib
import sys

import torch


def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def flatten_outputs(out):
    if isinstance(out, tuple | list):
        return [x for item in out for x in flatten_outputs(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flatten_outputs(out[k])]
    return [out]

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def backward_outputs(outputs, seed):
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])

def f(x):
    x.t_()
    return x[0], x * 2


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x_leaf = torch.randn((3, 5), generator=g, dtype=torch.float32).requires_grad_()
    x = non_leaf(x_leaf)
    try:
        out = fn(x)
        raised = 'no exception'
    except Exception as exc:
        return f'{type(exc).__name__}: {exc}'.splitlines()[0]
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    return raised


from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
