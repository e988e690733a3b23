#!/usr/bin/env python3
"""A view of an input taken before the input is given new data with `.data =` keeps the old storage and its values, as in eager, and does not alias the input's new data (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at out[1]: values (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/view_before_data_assign.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a):
    v = a.unsqueeze(0)
    a.data = a * 2
    return a, v

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    out = fn(a)
    return flatten_outputs(out)[1].detach()

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
try:
    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, check_device=False, check_stride=False)
except AssertionError as exc:
    sys.exit(print('MISMATCH: out[1]: values differs from eager:', str(exc).splitlines()[0]) or 3)
sys.exit(print('MATCHES: compiled behaves like eager here') or 0)
