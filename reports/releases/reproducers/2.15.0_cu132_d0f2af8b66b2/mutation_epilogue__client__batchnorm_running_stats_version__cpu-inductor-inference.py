#!/usr/bin/env python3
"""BatchNorm1d in training mode updates its running statistics in place, with eager's values and version counters.
On torch 2.15.0+cu132 the compiled call differs from eager at input bn.running_mean: _version moved (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/client/batchnorm_running_stats_version.yaml."""
import sys

import torch

def f(bn, x):
    return bn(x)

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=g)))
        bn = torch.nn.BatchNorm1d(4, momentum=0.3).to(device='cpu').train(True).requires_grad_(False)
    x = torch.randn((8, 4), generator=g, dtype=torch.float32)
    v0, s0 = bn.get_buffer('running_mean')._version, bn.get_buffer('running_mean').untyped_storage()
    out = fn(bn, x)
    return bn.get_buffer('running_mean')._version - v0

compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = (compiled > 0) == (eager > 0)
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input bn.running_mean: _version moved differs from eager')
sys.exit(0 if same else 3)
