#!/usr/bin/env python3
"""Of three 2x2 inputs computed from all-ones leaves, the first doubled and the third tripled in place, then 2x2 views of the second and third returned, end with eager's values and aliases, and in training give the leaves eager's gradients, with and without kept inference mutations.
On torch 2.15.0+cu132 the compiled call differs from eager at outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/first_and_third_scaled_views_of_second_and_third.yaml."""
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

def f(a, b, c):
    a.mul_(2)
    c.mul_(3)
    return b.view(2, 2), c.view(2, 2)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    la = torch.ones((2, 2), dtype=torch.float32).requires_grad_()
    lb = torch.ones((2, 2), dtype=torch.float32).requires_grad_()
    lc = torch.ones((2, 2), dtype=torch.float32).requires_grad_()
    a = la.add(1).add(1)
    b = lb.add(1).add(1)
    c = lc.add(1).add(1)
    out = fn(a, b, c)
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
