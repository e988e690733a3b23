#!/usr/bin/env python3
"""aot_eager_inference_values_out_after_14a0fb [cpu-aot_eager-inference]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-inference values @ out[] [after, out[]]): compiled differs from eager.

  out[2]: values is [-0.2935901880264282, 1.5722825527191162, 1.8936432600021362, -2.2286880016326904], but eager gives [-0.1467950940132141, 0.7861412763595581, 0.9468216300010681, -1.1143440008163452] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.1143440008163452 at index (0, 3) (up to 1e-05 allowed); Greatest relative difference: 1.0 at index (0, 0) (up to 1.3e-06 allowed))
  out[2]: shares storage with is ['a', 'out[0]'], but eager gives []
  after writing through the outputs: a: values is [1.7064098119735718, 3.572282552719116, 3.893643379211426, -0.22868800163269043], but eager gives [0.7064098119735718, 2.572282552719116, 2.893643379211426, -1.2286880016326904] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed); Greatest relative difference: 1.4156088829040527 at index (0,) (up to 1.3e-06 allowed))
(+2 more in the results file)

Case file: /work/research/discovery215/shards/1/findings/aot_eager_inference_values_out_after_14a0fb.yaml (sha256 506a2e3221944287); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b):
    v0 = a.unsqueeze(0)
    a.data = a * 2
    b.mul_(2)
    return a, b, v0


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


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    b = torch.randn((4,), generator=g, dtype=torch.float32)
    return [a, b], {'a': a, 'b': b}, {}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = flat(e_out)[2], flat(c_out)[2]
same = close(actual, expected) is True
print('the harness recorded:', 'out[2]: values is [-0.2935901880264282, 1.5722825527191162, 1.8936432600021362, -2.2286880016326904], but eager gives [-0.1467950940132141, 0.7861412763595581, 0.9468216300010681, -1.1143440008163452] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.1143440008163452 at index (0, 3) (up to 1e-05 allowed); Greatest relative difference: 1.0 at index (0, 0) (up to 1.3e-06 allowed))')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: out[2]: values is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
