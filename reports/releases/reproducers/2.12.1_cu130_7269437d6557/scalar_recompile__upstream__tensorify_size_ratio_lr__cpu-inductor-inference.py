#!/usr/bin/env python3
"""scalar_recompile/upstream/tensorify_size_ratio_lr [cpu-inductor-inference]: fail on torch 2.12.1+cu130 (git 7269437d655783a26cba32aa88195b741ff496aa)

Method-form in-place scaling by composite float expressions (0.5 * lr, and lr times a power of a size ratio) under default settings compiles twice for eight lr values, with eager's results, within a recompile limit of two.

  call 3 (lr=0.0003): call: exception is FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit (caused by Unsupported: Dynamo recompile limit exceeded), but eager gives no exception
  call 4 (lr=0.0004): call: exception is FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit (caused by Unsupported: Dynamo recompile limit exceeded), but eager gives no exception
  call 5 (lr=0.0005): call: exception is FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit (caused by Unsupported: Dynamo recompile limit exceeded), but eager gives no exception
(+4 more in the results file)

Case file: cases/scalar_recompile/upstream/tensorify_size_ratio_lr.yaml (sha256 d30a0997215dab2f); upstream: https://github.com/pytorch/pytorch/pull/179395, https://github.com/pytorch/pytorch/issues/169634
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch
import importlib
importlib.import_module('torch._dynamo.config').patch({'recompile_limit': 2}).__enter__()
importlib.import_module('torch._dynamo.config').patch({'fail_on_recompile_limit_hit': True}).__enter__()


def f(u, d, lr):
    d.mul_(lr * 0.5)
    rows, cols = u.shape[-2], u.shape[-1]
    k = max(1, rows / cols) ** 0.5
    u.mul_(lr * k)
    return u


def inputs(lr):  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(0)
    u = torch.randn((12, 6), generator=g, dtype=torch.float32)
    d = torch.randn((9, 4), generator=g, dtype=torch.float32)
    return [u, d, lr], {'u': u, 'd': d, 'lr': lr}, {}


torch.manual_seed(0)
compiled = torch.compile(f, backend='inductor', dynamic=None, fullgraph=True)
for values in [(0.0001,), (0.0002,), (0.0003,)]:
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
print('the harness recorded:', 'call 3 (lr=0.0003): call: exception is FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit (caused by Unsupported: Dynamo recompile limit exceeded), but eager gives no exception')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: call: exception is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
