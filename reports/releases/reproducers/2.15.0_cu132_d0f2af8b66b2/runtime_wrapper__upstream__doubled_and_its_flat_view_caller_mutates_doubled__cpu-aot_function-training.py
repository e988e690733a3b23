#!/usr/bin/env python3
"""A doubled input returned with a flattened view of it are aliases of one intermediate, so that a caller's in-place multiply of the first shows in the second, as in eager, whether or not the input requires grad.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/doubled_and_its_flat_view_caller_mutates_doubled.yaml."""
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
    doubled = a.mul(2)
    return doubled, doubled.view(-1)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.ones((3,), dtype=torch.float32).requires_grad_()
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
