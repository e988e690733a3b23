#!/usr/bin/env python3
"""With specialize_float off, a float swept through 2.0, 3.0, 4.0 compiles twice, 5.0 takes an equality branch through a third graph, and NaN compiles a fourth, with eager's results each time.
On torch 2.15.0+cu132 the compiled call differs from eager at cold pass over 5 call(s): graphs compiled (exit 3; 0 where they agree, 4 without the device).
From cases/scalar_recompile/upstream/float_equality_branch_then_nan.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.specialize_float = False
torch._dynamo.config.assume_static_by_default = True


def f(x, y):
    if y == 5.0:
        return x + 2
    return x + y


def run(fn, compiled):
    # call 1: y=2.0
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32)
    y = 2.0
    out = fn(x, y)
    # call 2: y=3.0
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32)
    y = 3.0
    out = fn(x, y)
    # call 3: y=4.0
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32)
    y = 4.0
    out = fn(x, y)
    # call 4: y=5.0
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32)
    y = 5.0
    out = fn(x, y)
    # call 5: y=nan
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32)
    y = float('nan')
    out = fn(x, y)


graphs = []


def backend(gm, example_inputs):  # counts the graphs it is handed
    graphs.append(gm)
    return torch._dynamo.lookup_backend('aot_eager')(gm, example_inputs)


compiled_f = torch.compile(f, backend=backend, fullgraph=True)
run(compiled_f, compiled=True)
same = len(graphs) == 4  # the count the case expects
print('MATCHES: as expected' if same else f'MISMATCH: cold pass over 5 call(s): graphs compiled is {len(graphs)}, but the case expects 4')
sys.exit(0 if same else 3)
