#!/usr/bin/env python3
"""An input that starts at a storage offset, mutated in place and then restrided in place with as_strided_ at its own offset, compiles and ends with eager's values and geometry (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/as_strided_after_mutation_offset_input.yaml."""
import sys

import torch

def place(values, stride, offset, numel, device):
    with torch.no_grad():
        out = torch.empty(0, dtype=values.dtype, device=device).set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        return out.copy_(values.to(device))

def f(a):
    a.mul_(2)
    torch.ops.aten.as_strided_.default(a, (a.numel(),), (1,), a.storage_offset())

def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    a = place(torch.randn((4,), generator=g, dtype=torch.float32), (1,), 3, 7, 'cpu')
    try:
        out = fn(a)
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call: exception differs from eager')
sys.exit(0 if same else 3)
