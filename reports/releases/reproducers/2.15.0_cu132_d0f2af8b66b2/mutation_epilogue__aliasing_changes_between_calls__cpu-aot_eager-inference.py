#!/usr/bin/env python3
"""Two views scaled in place, disjoint on the first call and sharing one element on the second, end with eager's values on both calls (the second aliasing needs a graph of its own).
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: out[0]: values (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/aliasing_changes_between_calls.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(a, b):
    a.mul_(3)
    b.mul_(2)
    return a.clone().view(-1) + b.clone().view(-1)

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    base = torch.randn((256,), generator=g, dtype=torch.float32)
    mid = base.add(1)
    a = mid.as_strided((2, 4, 3), (110, 24, 4), 5)
    b = mid[196:220]
    out = fn(a, b)
    # call 2: b: mid[195:219]
    g = torch.Generator().manual_seed(0)
    base = torch.randn((256,), generator=g, dtype=torch.float32)
    mid = base.add(1)
    a = mid.as_strided((2, 4, 3), (110, 24, 4), 5)
    b = mid[195:219]
    out = fn(a, b)
    return flatten_outputs(out)[0].detach()

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
try:
    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, check_device=False, check_stride=False)
except AssertionError as exc:
    sys.exit(print('MISMATCH: call 2: out[0]: values differs from eager:', str(exc).splitlines()[0]) or 3)
sys.exit(print('MATCHES: compiled behaves like eager here') or 0)
