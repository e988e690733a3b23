#!/usr/bin/env python3
"""Through aot_function with functorch's debug_assert on, a sum of two leaves compiled while both require grad is called again with a second input that does not require grad, and both calls give eager's output and gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: outputs: structure (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/upstream/grad_sum_then_second_without_grad_aot_function.yaml."""
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

def f(x, y):
    return (x + y,)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    y = torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_()
    out = fn(x, y)
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
