#!/usr/bin/env python3
"""A nested TwoTensor with dynamic=True keeps its type, inner sizes and strides at every level across two shapes, from one compile.
On torch 2.15.0+cu132 the compiled call differs from eager at cold pass over 2 call(s): graphs compiled (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/nested_dynamic.yaml."""
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(x):
    return x * 2, x.sum(0)

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(TwoTensor(torch.randn((4, 3), generator=g, dtype=torch.float32), torch.randn((4, 3), generator=g, dtype=torch.float32)), TwoTensor(torch.randn((4, 3), generator=g, dtype=torch.float32), torch.randn((4, 3), generator=g, dtype=torch.float32)))
    out = fn(x)
    # call 2: x: two_tensor
    g = torch.Generator().manual_seed(0)
    x = TwoTensor(TwoTensor(torch.randn((7, 3), generator=g, dtype=torch.float32), torch.randn((7, 3), generator=g, dtype=torch.float32)), TwoTensor(torch.randn((7, 3), generator=g, dtype=torch.float32), torch.randn((7, 3), generator=g, dtype=torch.float32)))
    out = fn(x)

graphs = []

def backend(gm, example_inputs):  # counts the graphs it compiled, not those dynamo aborted
    compiled = torch._dynamo.lookup_backend('aot_eager')(gm, example_inputs)
    graphs.append(gm)
    return compiled

compiled_f = torch.compile(f, backend=backend, dynamic=True)
run(compiled_f, compiled=True)
print('graphs compiled:', len(graphs))
# the verdict: what it printed, as the exit status
same = len(graphs) == 1  # the count the case expects
print('MATCHES: as expected' if same else f'MISMATCH: cold pass over 2 call(s): graphs compiled is {len(graphs)}, but the case expects 1')
sys.exit(0 if same else 3)
