#!/usr/bin/env python3
"""aot_eager_inference_exception_call_indexerror_56245a [cpu-aot_eager-inference]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-inference exception @ call (IndexError vs no exception) [call]): compiled differs from eager.

  call 1 (lr=0.1): call: exception is IndexError: list index out of range, but eager gives no exception
  call 2 (lr=0.5): call: exception is IndexError: list index out of range, but eager gives no exception
  call 3 (lr=1.5): call: exception is IndexError: list index out of range, but eager gives no exception

Case file: /work/research/discovery215/shards/1/findings/aot_eager_inference_exception_call_indexerror_56245a.yaml (sha256 b194728f55c18aab); upstream: https://github.com/pytorch/pytorch/pull/179395
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, lr):
    torch.ops.aten.unsqueeze_.default(a, 0)


def inputs(lr):  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    return [a, lr], {'a': a, 'lr': lr}, {}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [(0.1,)]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        try:
            c_out, c_exc = compiled(*c_args), 'no exception'
        except Exception as exc:
            c_out, c_exc = None, f'{type(exc).__name__}: {str(exc).strip().splitlines()[0]}'
    e_exc = 'no exception'
expected, actual = e_exc, c_exc
same = expected == actual
print('the harness recorded:', 'call 1 (lr=0.1): call: exception is IndexError: list index out of range, but eager gives no exception')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: call: exception is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
