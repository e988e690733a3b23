#!/usr/bin/env python3
"""aot_eager_training_exception_call_runtimeerror_fe41b9 [cpu-aot_eager-training]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-training exception @ call (RuntimeError vs no exception) [call]): compiled differs from eager.

  call: exception is RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation., but eager gives no exception

Case file: /work/research/discovery215/shards/0/findings/aot_eager_training_exception_call_runtimeerror_fe41b9.yaml (sha256 7e8672294452547a); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b):
    a.detach().mul_(3)


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    base = torch.randn((6,), generator=g, dtype=torch.float32).requires_grad_()
    a = base[:4]
    b = base[2:]
    return [a, b], {'base': base, 'a': a, 'b': b}, {'base': base}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
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
print('the harness recorded:', 'call: exception is RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation., but eager gives no exception')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: call: exception is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
