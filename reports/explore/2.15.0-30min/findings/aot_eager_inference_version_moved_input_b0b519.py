#!/usr/bin/env python3
"""aot_eager_inference_version_moved_input_b0b519 [cpu-aot_eager-inference]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-inference _version moved @ input [input]): compiled differs from eager.

  input a: _version moved is False (delta 0), but eager gives True (delta 1)

Case file: /work/research/discovery215/shards/1/findings/aot_eager_inference_version_moved_input_b0b519.yaml (sha256 da40a03ea85f074e); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a):
    a.mul_(2)
    a.data = a * 2


def storage(t):  # (device, address) of a dense tensor's storage, None if it has none to share
    if type(t) is not torch.Tensor or t.untyped_storage().nbytes() == 0:
        return None
    return (str(t.device), t.untyped_storage().data_ptr())


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    return [a], {'a': a}, {}


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
