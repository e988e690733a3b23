#!/usr/bin/env python3
"""Explorer finding (torch.compile | _version moved | an input | compiled False, eager True): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at input a: _version moved (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_version_moved_an_input_53cd52.yaml."""
import sys

import torch


def f(a):
    torch.ops.aten.t_.default(a)


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    v0, s0 = a._version, a.untyped_storage()
    out = fn(a)
    return a._version - v0


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: _version moved differs from eager')
sys.exit(0 if same else 3)
