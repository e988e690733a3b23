#!/usr/bin/env python3
"""aot_eager_training_values_out_after_a2ef9b [cpu-aot_eager-training]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-training values @ out[] [after, input, out[]]): compiled differs from eager.

  out[0]: values is [-0.2935901880264282, 1.5722825527191162, 1.8936432600021362, -2.2286880016326904], but eager gives [-0.1467950940132141, 0.7861412763595581, 0.9468216300010681, -1.1143440008163452] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.1143440008163452 at index (0, 0, 3) (up to 1e-05 allowed); Greatest relative difference: 1.0 at index (0, 0, 0) (up to 1.3e-06 allowed))
  out[0]: shares storage with is ['a', 'd'], but eager gives []
  input a: _version moved is False (delta 0), but eager gives True (delta 1)
(+4 more in the results file)

Case file: /work/research/discovery215/shards/0/findings/aot_eager_training_values_out_after_a2ef9b.yaml (sha256 6d17048cce64af45); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b, c, d):
    v0 = a.unsqueeze(0)
    c.mul_(2)
    c.add_(a, alpha=0.5)
    torch.ops.aten.unsqueeze_.default(v0, 0)
    d.data = d * 2
    b.zero_()
    return v0


def flat(out):  # the outputs in order: tuples, lists and dicts (sorted keys) flattened
    if isinstance(out, tuple | list):
        return [x for item in out for x in flat(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flat(out[k])]
    return [out]


def close(a, b):
    try:
        torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), equal_nan=True, check_stride=False,
                                   rtol=None, atol=None)
    except AssertionError as exc:
        return str(exc).splitlines()[0]
    return True


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
    a_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    c_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    c = non_leaf(c_leaf)
    d = a
    return [a, b, c, d], {'a': a, 'b': b, 'c': c, 'd': d}, {'a.leaf': a_leaf, 'c.leaf': c_leaf}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = flat(e_out)[0], flat(c_out)[0]
same = close(actual, expected) is True
print('the harness recorded:', 'out[0]: values is [-0.2935901880264282, 1.5722825527191162, 1.8936432600021362, -2.2286880016326904], but eager gives [-0.1467950940132141, 0.7861412763595581, 0.9468216300010681, -1.1143440008163452] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.1143440008163452 at index (0, 0, 3) (up to 1e-05 allowed); Greatest relative difference: 1.0 at index (0, 0, 0) (up to 1.3e-06 allowed))')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: out[0]: values is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
