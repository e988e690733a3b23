#!/usr/bin/env python3
"""Explorer finding (torch.compile | graphs compiled | the pass | more graphs than expected): the sweep compiles other than the 2 graph(s) the reference predicts.
On torch 2.15.0+cu132 the compiled call differs from eager at cold pass over 3 call(s): graphs compiled (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_graphs_compiled_the_pass_d0f678.yaml."""
import sys

import torch


def f(a, lr):
    a.add_(a, alpha=lr)


def run(fn, compiled):
    for lr in [0.1, 0.5, 1.5]:  # calls 1 to 3
        g = torch.Generator().manual_seed(1)
        a = torch.randn((4,), generator=g, dtype=torch.float32)
        out = fn(a, lr)


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
print('MATCHES: as expected' if same else f'MISMATCH: cold pass over 3 call(s): graphs compiled is {len(graphs)}, but the case expects 2')
sys.exit(0 if same else 3)
