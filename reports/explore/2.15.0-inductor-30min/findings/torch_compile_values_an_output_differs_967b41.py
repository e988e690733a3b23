#!/usr/bin/env python3
"""Explorer finding (torch.compile | values | an output | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: values (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_values_an_output_differs_967b41.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(b):
    v0 = b[1:]
    b.set_(b.detach().clone())
    v0.zero_()
    return b


def run(fn, compiled):
    g = torch.Generator().manual_seed(2)
    b = torch.randn((3, 4), generator=g, dtype=torch.float32)
    out = fn(b)
    t = flatten_outputs(out)[0]
    return t.detach()


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
try:
    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, check_device=False, check_stride=False)
except AssertionError as exc:
    sys.exit(print('MISMATCH: out[0]: values differs from eager:', str(exc).splitlines()[0]) or 3)
sys.exit(print('MATCHES: compiled behaves like eager here') or 0)
