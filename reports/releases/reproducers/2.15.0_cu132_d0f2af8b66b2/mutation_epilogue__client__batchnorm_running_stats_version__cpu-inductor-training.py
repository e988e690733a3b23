#!/usr/bin/env python3
"""BatchNorm1d in training mode updates its running statistics in place, with eager's values and version counters.
On torch 2.15.0+cu132 the compiled call differs from eager at input bn.running_mean: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/client/batchnorm_running_stats_version.yaml."""
import contextlib
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def backward_outputs(outputs, seed):
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])

def f(bn, x):
    return bn(x)


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        bn = torch.nn.BatchNorm1d(4, momentum=0.3)
    bn.to(device='cpu').train(True)
    x = torch.randn((8, 4), generator=g, dtype=torch.float32)
    v0, s0 = bn.get_buffer('running_mean')._version, bn.get_buffer('running_mean').untyped_storage()
    out = fn(bn, x)
    with contextlib.suppress(Exception):  # what a backward raises is its own check
        backward_outputs(flatten_outputs(out), 7919)
    t = bn.get_buffer('running_mean')
    return t._version - v0


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input bn.running_mean: _version moved differs from eager')
sys.exit(0 if same else 3)
