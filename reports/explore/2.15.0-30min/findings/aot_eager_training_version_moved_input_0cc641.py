#!/usr/bin/env python3
"""aot_eager_training_version_moved_input_0cc641 [cpu-aot_eager-training]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-training _version moved @ input [grad, input]): compiled differs from eager.

  input a: _version moved is False (delta 0), but eager gives True (delta 1)
  grad of a.leaf: values is [1.601651906967163, 1.693236231803894, -0.08279071003198624, 0.0007256481912918389], but eager gives [3.203303813934326, 3.386472463607788, -0.16558142006397247, 0.0014512963825836778] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.693236231803894 at index (1,) (up to 1e-05 allowed); Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed))

Case file: /work/research/discovery215/shards/0/findings/aot_eager_training_version_moved_input_0cc641.yaml (sha256 3e74d618fa9440a6); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b, c):
    a.mul_(2)
    a.data = a * 2
    b.mul_(2)
    return a


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


def storage(t):  # (device, address) of a dense tensor's storage, None if it has none to share
    if type(t) is not torch.Tensor or t.untyped_storage().nbytes() == 0:
        return None
    return (str(t.device), t.untyped_storage().data_ptr())


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    c = torch.randn((4,), generator=g, dtype=torch.float32)
    return [a, b, c], {'a': a, 'b': b, 'c': c}, {'a.leaf': a_leaf}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    e_storages = {n: storage(t) for n, t in e_named.items() if isinstance(t, torch.Tensor)}
    e_versions = {n: t._version for n, t in e_named.items() if isinstance(t, torch.Tensor)}
    c_storages = {n: storage(t) for n, t in c_named.items() if isinstance(t, torch.Tensor)}
    c_versions = {n: t._version for n, t in c_named.items() if isinstance(t, torch.Tensor)}
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = (e_named['a']._version - e_versions['a']) > 0, (c_named['a']._version - c_versions['a']) > 0
same = expected == actual
print('the harness recorded:', 'input a: _version moved is False (delta 0), but eager gives True (delta 1)')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: input a: _version moved is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
