#!/usr/bin/env python3
"""aot_eager_inference_storage_offset_input_fb0035 [cpu-aot_eager-inference]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-inference storage_offset @ input [input]): compiled differs from eager.

  input a: storage_offset is 0, but eager gives 3

Case file: /work/research/discovery215/shards/1/findings/aot_eager_inference_storage_offset_input_fb0035.yaml (sha256 0358ee35c2da903d); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a):
    a.mul_(2)
    torch.ops.aten.t_.default(a)


def place(values, stride, offset, numel, device):  # exact geometry in a storage of its own
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a = place(torch.randn((3, 4), generator=g, dtype=torch.float32), (4, 1), 3, 15, 'cpu')
    return [a], {'a': a}, {}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = e_named['a'].storage_offset(), c_named['a'].storage_offset()
same = expected == actual
print('the harness recorded:', 'input a: storage_offset is 0, but eager gives 3')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: input a: storage_offset is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
