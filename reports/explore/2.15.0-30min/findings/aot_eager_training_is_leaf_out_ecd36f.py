#!/usr/bin/env python3
"""aot_eager_training_is_leaf_out_ecd36f [cpu-aot_eager-training]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-training is_leaf @ out[] [after, backward, grad, out[]]): compiled differs from eager.

  out[1]: is_leaf is False, but eager gives True
  out[1]: shares storage with is ['c'], but eager gives []
  backward: exception is no exception, but eager gives RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
(+3 more in the results file)

Case file: /work/research/discovery215/shards/1/findings/aot_eager_training_is_leaf_out_ecd36f.yaml (sha256 bbe870ac5de06b81); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b, c, d):
    with torch.no_grad():
        v0 = c.unsqueeze(0)
    a.mul_(2)
    a.mul_(2)
    c.data = a * 2
    a.mul_(2)
    return a, v0


def flat(out):  # the outputs in order: tuples, lists and dicts (sorted keys) flattened
    if isinstance(out, tuple | list):
        return [x for item in out for x in flat(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flat(out[k])]
    return [out]


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


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    c_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    c = non_leaf(c_leaf)
    d = a
    return [a, b, c, d], {'a': a, 'b': b, 'c': c, 'd': d}, {'c.leaf': c_leaf}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = flat(e_out)[1].is_leaf, flat(c_out)[1].is_leaf
same = expected == actual
print('the harness recorded:', 'out[1]: is_leaf is False, but eager gives True')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: out[1]: is_leaf is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
