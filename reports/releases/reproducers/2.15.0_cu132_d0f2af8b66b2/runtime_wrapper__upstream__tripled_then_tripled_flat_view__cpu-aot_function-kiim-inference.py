#!/usr/bin/env python3
"""A tripled 3x3 input (computed from an all-ones leaf plus one) returned first itself and then as a flattened view are aliases of one intermediate, as in eager, and in training give the leaf eager's gradient, with and without kept inference mutations.
On torch 2.15.0+cu132 the compiled call differs from eager at outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/tripled_then_tripled_flat_view.yaml."""
import sys

import torch
import torch._functorch.config
torch._functorch.config.debug_assert = True

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
    tripled = torch.mul(x, 3)
    return tripled, tripled.view(-1)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    leaf = torch.ones((3, 3), dtype=torch.float32)
    x = leaf.add(1)
    out = fn(x)
    outs = flatten_outputs(out)
    return output_structure(out)

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=True, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: outputs: structure differs from eager')
sys.exit(0 if same else 3)
