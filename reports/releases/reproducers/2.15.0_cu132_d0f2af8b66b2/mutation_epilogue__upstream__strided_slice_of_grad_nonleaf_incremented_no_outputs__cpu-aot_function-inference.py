#!/usr/bin/env python3
"""Every other element of a non-leaf (a ones leaf requiring grad, plus zero), incremented in place by a program that returns nothing, leaves the whole base storage with eager's values.
On torch 2.15.0+cu132 the compiled call differs from eager at outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/strided_slice_of_grad_nonleaf_incremented_no_outputs.yaml."""
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

def f(x):
    x.add_(1)
    return ()

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    src = torch.ones((4,), dtype=torch.float32)
    leaf = src.clone().requires_grad_()
    mid = leaf + 0
    x = mid[0::2]
    out = fn(x)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: outputs: structure differs from eager')
sys.exit(0 if same else 3)
