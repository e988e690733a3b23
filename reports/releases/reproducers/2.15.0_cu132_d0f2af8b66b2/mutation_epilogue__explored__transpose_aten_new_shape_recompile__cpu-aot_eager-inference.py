#!/usr/bin/env python3
"""An input transposed in place through the ATen overload, called again with a new shape, recompiles and ends transposed as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: call: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/transpose_aten_new_shape_recompile.yaml."""
import sys

import torch

def f(a):
    torch.ops.aten.t_.default(a)

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(1)
    a = torch.randn((0, 3), generator=g, dtype=torch.float32)
    out = fn(a)
    # call 2: a: tensor[2, 3]
    g = torch.Generator().manual_seed(1)
    a = torch.randn((2, 3), generator=g, dtype=torch.float32)
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
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: call: exception differs from eager')
sys.exit(0 if same else 3)
