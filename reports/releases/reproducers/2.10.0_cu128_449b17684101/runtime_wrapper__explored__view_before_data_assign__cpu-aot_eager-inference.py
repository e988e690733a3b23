#!/usr/bin/env python3
"""runtime_wrapper/explored/view_before_data_assign [cpu-aot_eager-inference]: fail on torch 2.10.0+cu128 (git 449b1768410104d3ed79d3bcfe4ba1d65c7f22c0)

A view of an input taken before the input is given new data with `.data =` keeps the old storage and its values, as in eager, and does not alias the input's new data (found by the explorer).

  out[1]: values is [3.0819921493530273, -0.586857795715332, -4.357578754425049, 1.1368625164031982], but eager gives [1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 2.1787893772125244 at index (0, 2) (up to 1e-05 allowed); Greatest relative difference: 1.0 at index (0, 0) (up to 1.3e-06 allowed))
  out[1]: shares storage with is ['a', 'out[0]'], but eager gives []
  input a: _version moved is True (delta 1), but eager gives False (delta 0)
(+3 more in the results file)

Case file: cases/runtime_wrapper/explored/view_before_data_assign.yaml (sha256 4123a9203c25722f); upstream: https://github.com/pytorch/pytorch/pull/181271, https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a):
    v = a.unsqueeze(0)
    a.data = a * 2
    return a, v


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
    g = torch.Generator().manual_seed(0)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    return [a], {'a': a}, {}


torch.manual_seed(0)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = flat(e_out)[1], flat(c_out)[1]
same = close(actual, expected) is True
print('the harness recorded:', 'out[1]: values is [3.0819921493530273, -0.586857795715332, -4.357578754425049, 1.1368625164031982], but eager gives [1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.5684312582015991] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 2.1787893772125244 at index (0, 2) (up to 1e-05 allowed); Greatest relative difference: 1.0 at index (0, 0) (up to 1.3e-06 allowed))')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: out[1]: values is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
