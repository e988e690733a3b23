#!/usr/bin/env python3
"""aot_eager_inference_stride_input_input_9df468 [cpu-aot_eager-inference]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-inference stride @ input [input]): compiled differs from eager.

  call 1 (lr=0.1): input b: stride is (1, 4), but eager gives (2, 8)
  call 2 (lr=0.5): input b: stride is (1, 4), but eager gives (2, 8)
  call 3 (lr=1.5): input b: stride is (1, 4), but eager gives (2, 8)

Case file: /work/research/discovery215/shards/1/findings/aot_eager_inference_stride_input_input_9df468.yaml (sha256 cfff058c8e4c2b37); upstream: https://github.com/pytorch/pytorch/pull/179395
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b, c, lr):
    b.mul_(2)
    torch.ops.aten.t_.default(b)


def place(values, stride, offset, numel, device):  # exact geometry in a storage of its own
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out


def inputs(lr):  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a = torch.randn((3, 4), generator=g, dtype=torch.float32)
    b = place(torch.randn((3, 4), generator=g, dtype=torch.float32), (8, 2), 0, 23, 'cpu')
    c = torch.randn((3, 4), generator=g, dtype=torch.float32)
    return [a, b, c, lr], {'a': a, 'b': b, 'c': c, 'lr': lr}, {}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [(0.1,)]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = e_named['b'].stride(), c_named['b'].stride()
same = expected == actual
print('the harness recorded:', 'call 1 (lr=0.1): input b: stride is (1, 4), but eager gives (2, 8)')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: input b: stride is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
