#!/usr/bin/env python3
"""An input transposed in place twice (its metadata ends as it began) has its version counter moved as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at input a: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/explored/transpose_twice_version.yaml."""
import sys

import torch

def f(a):
    torch.ops.aten.t_.default(a)
    torch.ops.aten.t_.default(a)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((3, 4), generator=g, dtype=torch.float32)
    v0, s0 = a._version, a.untyped_storage()
    out = fn(a)
    return a._version - v0

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: _version moved differs from eager')
sys.exit(0 if same else 3)
