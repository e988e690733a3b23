#!/usr/bin/env python3
"""A tensor raised to a swept float exponent (x ** lr, an op argument) gives eager's result for every value and should compile twice, not once per value.
On torch 2.15.0+cu132 the compiled call differs from eager at cold pass over 5 call(s): graphs compiled (exit 3; 0 where they agree, 4 without the device).
From cases/scalar_recompile/tensor_pow_float_exponent.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.specialize_float = False

def f(x, lr):
    return x ** lr

def run(fn, compiled):
    for lr in [0.1, 0.01, 0.5, 1.5, 3.0]:  # calls 1 to 5
        g = torch.Generator().manual_seed(0)
        x = (torch.rand((8,), generator=g, dtype=torch.float32) + 0.5)
        out = fn(x, lr)

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
