#!/usr/bin/env python3
"""The torch.optim Adam update forms (m.lerp_(g, 1 - beta1), v.addcmul_(g, g, value=1 - beta2), p.addcdiv_(m, denom, value=-step_size)) give eager's state for every value and should compile twice, not once per value.
On torch 2.15.0+cu132 the compiled call differs from eager at cold pass over 5 call(s): graphs compiled (exit 3; 0 where they agree, 4 without the device).
From cases/scalar_recompile/adam_torch_optim_forms.yaml."""
import sys

import torch
import torch._dynamo.config
torch._dynamo.config.specialize_float = False

def f(p, g, m, v, lr, beta1):
    m.lerp_(g, 1 - beta1)
    v.mul_(0.999).addcmul_(g, g, value=1 - 0.999)
    step_size = lr / (1 - beta1 ** 2)
    denom = (v.sqrt() / (1 - 0.999 ** 2) ** 0.5).add_(1e-8)
    p.addcdiv_(m, denom, value=-step_size)
    return p

def run(fn, compiled):
    for lr, beta1 in [(0.001, 0.9), (0.0005, 0.8), (0.01, 0.95), (0.003, 0.85), (0.1, 0.5)]:  # calls 1 to 5
        gen = torch.Generator().manual_seed(0)
        p = torch.randn((16,), generator=gen, dtype=torch.float32)
        g = torch.randn((16,), generator=gen, dtype=torch.float32)
        m = torch.zeros((16,), dtype=torch.float32)
        v = torch.zeros((16,), dtype=torch.float32)
        out = fn(p, g, m, v, lr, beta1)

graphs = []

def backend(gm, example_inputs):  # counts the graphs it compiled, not those dynamo aborted
    compiled = torch._dynamo.lookup_backend('inductor')(gm, example_inputs)
    graphs.append(gm)
    return compiled

compiled_f = torch.compile(f, backend=backend)
run(compiled_f, compiled=True)
print('graphs compiled:', len(graphs))
# the verdict: what it printed, as the exit status
same = len(graphs) == 2  # the count the case expects
print('MATCHES: as expected' if same else f'MISMATCH: cold pass over 5 call(s): graphs compiled is {len(graphs)}, but the case expects 2')
sys.exit(0 if same else 3)
