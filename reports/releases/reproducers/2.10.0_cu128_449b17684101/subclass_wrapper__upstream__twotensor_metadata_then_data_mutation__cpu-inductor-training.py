#!/usr/bin/env python3
"""subclass_wrapper/upstream/twotensor_metadata_then_data_mutation [cpu-inductor-training]: fail on torch 2.10.0+cu128 (git 449b1768410104d3ed79d3bcfe4ba1d65c7f22c0)

A plain non-leaf transposed and a TwoTensor non-leaf unsqueezed in place, then both scaled in place, end with eager's geometry and values, and their sum and gradients match eager.

  out[0]: stride is (3, 1, 3), but eager gives (9, 1, 3)
  backward: exception is AssertionError: expected size 3==3, stride 3==1 at dim=1; expected size 3==3, stride 1==3 at dim=2, but eager gives no exception
  grad of abase: .grad is None, but eager gives a tensor
(+1 more in the results file)

Case file: cases/subclass_wrapper/upstream/twotensor_metadata_then_data_mutation.yaml (sha256 d576958d20be5e22); upstream: https://github.com/pytorch/pytorch/issues/114975
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor


def f(a, b):
    a.t_()
    b.unsqueeze_(0)
    a.mul_(2)
    b.mul_(3)
    return a + b


def flat(out):  # the outputs in order: tuples, lists and dicts (sorted keys) flattened
    if isinstance(out, tuple | list):
        return [x for item in out for x in flat(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flat(out[k])]
    return [out]


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(0)
    abase = torch.arange(9, dtype=torch.float64).reshape((3, 3)).to(torch.float32).requires_grad_()
    a = abase + 1
    bbase = TwoTensor(torch.arange(9, dtype=torch.float64).reshape((3, 3)).to(torch.float32), torch.arange(9, dtype=torch.float64).reshape((3, 3)).to(torch.float32)).requires_grad_()
    b = bbase + 1
    return [a, b], {'abase': abase, 'a': a, 'bbase': bbase, 'b': b}, {'abase': abase, 'bbase': bbase}


torch.manual_seed(0)
compiled = torch.compile(f, backend='inductor', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = flat(e_out)[0].stride(), flat(c_out)[0].stride()
same = expected == actual
print('the harness recorded:', 'out[0]: stride is (3, 1, 3), but eager gives (9, 1, 3)')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: out[0]: stride is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
