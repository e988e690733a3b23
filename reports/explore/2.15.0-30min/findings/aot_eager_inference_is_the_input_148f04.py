#!/usr/bin/env python3
"""aot_eager_inference_is_the_input_148f04 [cpu-aot_eager-inference]: fail on torch 2.15.0+cu132 (git d0f2af8b66b20da4baa50644c0cd3f887a2eae2e)

Explorer finding (aot_eager-inference is the input object @ out[] [after, input, out[]]): compiled differs from eager.

  call 1 (lr=0.1): out[0]: is the input object is None, but eager gives 'a'
  call 1 (lr=0.1): out[0]: shares storage with is ['a', 'b', 'base'], but eager gives ['a', 'base']
  call 1 (lr=0.1): input base: shares storage with is ['a', 'b'], but eager gives ['a']
(+21 more in the results file)

Case file: /work/research/discovery215/shards/0/findings/aot_eager_inference_is_the_input_148f04.yaml (sha256 48d733dff94b046a); upstream: https://github.com/pytorch/pytorch/pull/179395
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a, b, lr):
    v0 = a * 2 + a
    a.mul_(2)
    a.mul_(2)
    a.mul_(2)
    b.data = a * 2
    return a


def flat(out):  # the outputs in order: tuples, lists and dicts (sorted keys) flattened
    if isinstance(out, tuple | list):
        return [x for item in out for x in flat(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flat(out[k])]
    return [out]


def inputs(lr):  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(7)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    b = base[2:]
    return [a, b, lr], {'base': base, 'a': a, 'b': b, 'lr': lr}, {}


torch.manual_seed(7)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [(0.1,)]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
expected, actual = next((n for n, v in e_named.items() if v is flat(e_out)[0]), None), next((n for n, v in c_named.items() if v is flat(c_out)[0]), None)
same = expected == actual
print('the harness recorded:', "call 1 (lr=0.1): out[0]: is the input object is None, but eager gives 'a'")
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: out[0]: is the input object is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
