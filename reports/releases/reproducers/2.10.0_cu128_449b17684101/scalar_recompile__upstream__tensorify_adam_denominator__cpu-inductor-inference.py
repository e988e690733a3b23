#!/usr/bin/env python3
"""scalar_recompile/upstream/tensorify_adam_denominator [cpu-inductor-inference]: fail on torch 2.10.0+cu128 (git 449b1768410104d3ed79d3bcfe4ba1d65c7f22c0)

An Adam-style denominator (sqrt, then div_ by bc2 ** 0.5, then add_ eps) over eight bias corrections compiles twice under default settings, with eager's results, within a recompile limit of two.

  call 3 (bc2=0.002997000999999999): call: exception is FailOnRecompileLimitHit: recompile_limit reached, because fail_on_recompile_limit_hit = True this is a HARD failure, but eager gives no exception
  call 4 (bc2=0.003994003998999962): call: exception is FailOnRecompileLimitHit: recompile_limit reached, because fail_on_recompile_limit_hit = True this is a HARD failure, but eager gives no exception
  call 5 (bc2=0.004990009995000988): call: exception is FailOnRecompileLimitHit: recompile_limit reached, because fail_on_recompile_limit_hit = True this is a HARD failure, but eager gives no exception
(+4 more in the results file)

Case file: cases/scalar_recompile/upstream/tensorify_adam_denominator.yaml (sha256 9e1ef205789bfc4b); upstream: https://github.com/pytorch/pytorch/pull/179395, https://github.com/pytorch/pytorch/issues/169634
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch
import importlib
importlib.import_module('torch._dynamo.config').patch({'recompile_limit': 2}).__enter__()
importlib.import_module('torch._dynamo.config').patch({'fail_on_recompile_limit_hit': True}).__enter__()


def f(v, bc2):
    return v.sqrt().div_(bc2 ** 0.5).add_(1e-8)


def inputs(bc2):  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(0)
    v = (torch.rand((16, 40), generator=g, dtype=torch.float32) + 0.5)
    return [v, bc2], {'v': v, 'bc2': bc2}, {}


torch.manual_seed(0)
compiled = torch.compile(f, backend='inductor', dynamic=None, fullgraph=True)
for values in [(0.0010000000000000009,), (0.001998999999999973,), (0.002997000999999999,)]:
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
print('the harness recorded:', 'call 3 (bc2=0.002997000999999999): call: exception is FailOnRecompileLimitHit: recompile_limit reached, because fail_on_recompile_limit_hit = True this is a HARD failure, but eager gives no exception')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: call: exception is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
