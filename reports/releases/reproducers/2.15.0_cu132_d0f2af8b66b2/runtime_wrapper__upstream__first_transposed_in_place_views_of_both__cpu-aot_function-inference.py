#!/usr/bin/env python3
"""Of two 3x3 inputs computed from all-ones leaves (plus one), the first transposed in place and same-shape views of the second and the first returned, end with eager's geometry and aliases, and in training give the leaves eager's gradients, with and without kept inference mutations.
On torch 2.15.0+cu132 the compiled call differs from eager at outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/first_transposed_in_place_views_of_both.yaml."""
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

def f(a, b):
    a.t_()
    return b.view(b.shape), a.view(a.shape)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    la = torch.ones((3, 3), dtype=torch.float32)
    lb = torch.ones((3, 3), dtype=torch.float32)
    a = la.add(1)
    b = lb.add(1)
    out = fn(a, b)
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
