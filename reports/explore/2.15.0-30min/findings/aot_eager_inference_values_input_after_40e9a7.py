#!/usr/bin/env python3
"""aot_eager_inference_values_input_after_40e9a7 [cpu-aot_eager-inference]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-inference values @ input [after, input]): compiled differs from eager.

  input base: values is [-0.1467950940132141, 0.7861412763595581, 0.9468216300010681, -1.1143440008163452, 1.6907901763916016, -0.8948279023170471], but eager gives [-0.2935901880264282, 1.5722825527191162, 1.8936432600021362, -2.2286880016326904, 1.6907901763916016, -0.8948279023170471] (Tensor-likes are not close!; Mismatched elements: 4 / 6 (66.7%); Greatest absolute difference: 1.1143440008163452 at index (3,) (up to 1e-05 allowed); Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed))
  input base: _version moved is False (delta 0), but eager gives True (delta 1)
  input a: _version moved is False (delta 0), but eager gives True (delta 1)
(+4 more in the results file)

Case file: /work/research/discovery215/shards/1/findings/aot_eager_inference_values_input_after_40e9a7.yaml (sha256 c94ef23e484418e1); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b):
    a.mul_(2)
    a.data = a * 2


def close(a, b):
    try:
        torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), equal_nan=True, check_stride=False,
                                   rtol=None, atol=None)
    except AssertionError as exc:
        return str(exc).splitlines()[0]
    return True


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    b = base[2:]
    return [a, b], {'base': base, 'a': a, 'b': b}, {}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = e_named['base'], c_named['base']
same = close(actual, expected) is True
print('the harness recorded:', 'input base: values is [-0.1467950940132141, 0.7861412763595581, 0.9468216300010681, -1.1143440008163452, 1.6907901763916016, -0.8948279023170471], but eager gives [-0.2935901880264282, 1.5722825527191162, 1.8936432600021362, -2.2286880016326904, 1.6907901763916016, -0.8948279023170471] (Tensor-likes are not close!; Mismatched elements: 4 / 6 (66.7%); Greatest absolute difference: 1.1143440008163452 at index (3,) (up to 1e-05 allowed); Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed))')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: input base: values is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
