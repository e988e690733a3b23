#!/usr/bin/env python3
"""aot_eager_training_exception_call_indexerror_75e52f [cpu-aot_eager-training]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-training exception @ call (IndexError vs no exception) [call]): compiled differs from eager.

  call 1 (lr=0.1): call: exception is IndexError: list index out of range, but eager gives no exception
  call 2 (lr=0.5): call: exception is IndexError: list index out of range, but eager gives no exception
  call 3 (lr=1.5): call: exception is IndexError: list index out of range, but eager gives no exception

Case file: /work/research/discovery215/shards/1/findings/aot_eager_training_exception_call_indexerror_75e52f.yaml (sha256 db8e5352e2f95a41); upstream: https://github.com/pytorch/pytorch/pull/179395
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b, c, lr):
    torch.ops.aten.unsqueeze_.default(a, 0)


def place(values, stride, offset, numel, device):  # exact geometry in a storage of its own
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out


def non_leaf(leaf):  # leaf's geometry and values, made by an op (a grad_fn), in a storage of its own
    t = place(torch.zeros(leaf.shape, dtype=leaf.dtype), leaf.stride(), leaf.storage_offset(),
              leaf.untyped_storage().nbytes() // leaf.element_size(), leaf.device)
    with torch.enable_grad():
        t.copy_(leaf)
    return t


def inputs(lr):  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    c = torch.randn((4,), generator=g, dtype=torch.float32)
    return [a, b, c, lr], {'a': a, 'b': b, 'c': c, 'lr': lr}, {'a.leaf': a_leaf}


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
