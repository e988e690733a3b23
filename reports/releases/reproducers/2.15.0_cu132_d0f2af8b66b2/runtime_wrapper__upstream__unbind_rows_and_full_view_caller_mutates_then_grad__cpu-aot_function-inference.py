#!/usr/bin/env python3
"""The rows (unbind) and a same-shape view of a clone of an all-ones leaf that requires grad are views of the input as in eager, and after the caller doubles the full view and triples the input through a flat view, a backward through leaf plus the full view gives the leaf eager's gradient.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/unbind_rows_and_full_view_caller_mutates_then_grad.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def output_structure(out):
    if isinstance(out, tuple | list):
        return f"{type(out).__name__}({', '.join((output_structure(x) for x in out))})"
    if isinstance(out, dict):
        return f"dict({', '.join((f'{k}: {output_structure(out[k])}' for k in sorted(out, key=str)))})"
    return '*'

def f(a):
    return (*a.unbind(0), a.view(a.shape))

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    src = torch.ones((3, 3), dtype=torch.float32)
    leaf = src.clone().requires_grad_()
    a = leaf.clone()
    gl = torch.zeros((3, 3), dtype=torch.float32)
    out = fn(a)
    outs = flatten_outputs(out)
    return output_structure(out)

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=False, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: outputs: structure differs from eager')
sys.exit(0 if same else 3)
