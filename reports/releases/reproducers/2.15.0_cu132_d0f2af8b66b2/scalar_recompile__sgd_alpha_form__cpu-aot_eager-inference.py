#!/usr/bin/env python3
"""The torch.optim SGD update p.add_(g, alpha=-lr) gives eager's parameters for every lr and should compile twice, not once per value.
On torch 2.15.0+cu132 the compiled call differs from eager at cold pass over 5 call(s): graphs compiled (exit 3; 0 where they agree, 4 without the device).
From cases/scalar_recompile/sgd_alpha_form.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.specialize_float = False

def f(p, g, lr):
    p.add_(g, alpha=-lr)
    return p

def run(fn, compiled):
    for lr in [0.1, 0.05, 0.01, 0.005, 0.001]:  # calls 1 to 5
        gen = torch.Generator().manual_seed(0)
        p = torch.randn((16,), generator=gen, dtype=torch.float32)
        g = torch.randn((16,), generator=gen, dtype=torch.float32)
        out = fn(p, g, lr)

graphs = []

def backend(gm, example_inputs):  # counts the graphs it compiled, not those dynamo aborted
    compiled = torch._dynamo.lookup_backend('aot_eager')(gm, example_inputs)
    graphs.append(gm)
    return compiled

compiled_f = torch.compile(f, backend=backend)
run(compiled_f, compiled=True)
print('graphs compiled:', len(graphs))
# the verdict: what it printed, as the exit status
same = len(graphs) == 2  # the count the case expects
print('MATCHES: as expected' if same else f'MISMATCH: cold pass over 5 call(s): graphs compiled is {len(graphs)}, but the case expects 2')
sys.exit(0 if same else 3)
