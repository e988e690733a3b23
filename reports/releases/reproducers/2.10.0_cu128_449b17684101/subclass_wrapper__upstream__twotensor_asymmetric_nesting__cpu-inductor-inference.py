#!/usr/bin/env python3
"""subclass_wrapper/upstream/twotensor_asymmetric_nesting [cpu-inductor-inference]: fail on torch 2.10.0+cu128 (git 449b1768410104d3ed79d3bcfe4ba1d65c7f22c0)

With dynamic=True, a TwoTensor whose a is a flat TwoTensor and whose b is a nested TwoTensor(TwoTensor, TwoTensor) built around that same flat TwoTensor gives eager's values and nesting.

  out[0]: stride is (2, 1), but eager gives (3, 1)

Case file: cases/subclass_wrapper/upstream/twotensor_asymmetric_nesting.yaml (sha256 ae3e52e5214fe79f); upstream: https://github.com/pytorch/pytorch/pull/176741
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def f(z):
    return z.sin()


def flat(out):  # the outputs in order: tuples, lists and dicts (sorted keys) flattened
    if isinstance(out, tuple | list):
        return [x for item in out for x in flat(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flat(out[k])]
    return [out]


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(0)
    s = TwoTensor(torch.randn((2, 3), generator=g, dtype=torch.float32), torch.randn((2, 3), generator=g, dtype=torch.float32))
    z = s.__class__(s, s.__class__(s, s.clone()))
    return [z], {'s': s, 'z': z}, {}


torch.manual_seed(0)
compiled = torch.compile(f, backend='inductor', dynamic=True, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = flat(e_out)[0].stride(), flat(c_out)[0].stride()
same = expected == actual
print('the harness recorded:', 'out[0]: stride is (2, 1), but eager gives (3, 1)')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: out[0]: stride is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
