#!/usr/bin/env python3
"""Rows of a non-leaf input returned by unbind refuse an in-place write, and refuse use after the input or a detached row is mutated, with eager's errors.
On torch 2.15.0+cu132 the compiled call differs from eager at call 3: out[0]: is_leaf (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/unbind_rows_inplace_errors.yaml."""
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
    return list(x.unbind(0))


def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    x_leaf = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    x = non_leaf(x_leaf)
    out = fn(x)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    # call 2: after: try: ...
    g = torch.Generator().manual_seed(0)
    x_leaf = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    x = non_leaf(x_leaf)
    out = fn(x)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    # the caller, after the call
    try:
        out[0].mul_(2)
    except RuntimeError as e:
        assert "multiple views" in str(e) or "view" in str(e), str(e)
    else:
        raise AssertionError("in-place write into an unbind output did not raise")
    # call 3: after: with torch.no_grad(): ...
    g = torch.Generator().manual_seed(0)
    x_leaf = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    x = non_leaf(x_leaf)
    out = fn(x)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    # the caller, after the call
    with torch.no_grad():
        x.mul_(2)
    try:
        out[0].grad_fn
    except RuntimeError as e:
        assert "view" in str(e), str(e)
    else:
        raise AssertionError("reading grad_fn of an unbind output after mutating its base did not raise")
    t = flatten_outputs(out)[0]
    try:
        return t.is_leaf
    except RuntimeError as exc:
        return f'raises {type(exc).__name__}: ' + str(exc).split('.')[0]


from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 3: out[0]: is_leaf differs from eager')
sys.exit(0 if same else 3)
