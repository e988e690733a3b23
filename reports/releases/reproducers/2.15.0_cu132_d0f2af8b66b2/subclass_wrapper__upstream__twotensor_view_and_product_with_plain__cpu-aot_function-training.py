#!/usr/bin/env python3
"""A same-shape view of a TwoTensor (over all-ones leaves that require grad) and its product with a plain all-ones leaf come back as eager's TwoTensor alias and TwoTensor product, and a joint backward gives both inputs eager's gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/twotensor_view_and_product_with_plain.yaml."""
import sys

import torch

import torch.testing._internal.two_tensor  # loads the module the view below names

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
    return b.view(b.shape), a * b

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.ones((3, 3), dtype=torch.float32).requires_grad_()
    p = torch.ones((3, 3), dtype=torch.float32).requires_grad_()
    q = torch.ones((3, 3), dtype=torch.float32).requires_grad_()
    b = torch.testing._internal.two_tensor.TwoTensor(p, q)
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
