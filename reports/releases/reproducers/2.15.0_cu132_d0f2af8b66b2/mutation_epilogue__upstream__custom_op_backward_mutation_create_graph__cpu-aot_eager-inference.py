#!/usr/bin/env python3
"""A caller's autograd.grad(create_graph=True) through a custom op whose backward zeroes an input that requires grad gives eager's gradient and leaves that input as eager does.
On torch 2.15.0+cu132 the compiled call differs from eager at call 2: calls[0].after: exception (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/custom_op_backward_mutation_create_graph.yaml."""
import sys

import torch

if not hasattr(torch.ops.tcaotd, "clone_zero_bw_cg"):  # this block runs for every item: the op is registered once
    @torch.library.custom_op("tcaotd::clone_zero_bw_cg", mutates_args=())
    def clone_zero_bw_cg(x: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        return x.clone()
    clone_zero_bw_cg.register_fake(lambda x, x1: torch.empty_like(x))

    def backward(ctx, grad):
        with torch.no_grad():
            ctx.x1.zero_()
        return grad * 2, None
    clone_zero_bw_cg.register_autograd(backward, setup_context=lambda ctx, inputs, output: setattr(ctx, "x1", inputs[1]))

def f(x, x1):
    return torch.ops.tcaotd.clone_zero_bw_cg(x, x1)

def run(fn, compiled):
    # call 1
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32)
    x1 = torch.randn((3,), generator=g, dtype=torch.float32)
    gx = torch.zeros((3,), dtype=torch.float32)
    out = fn(x, x1)
    # call 2: before: x = x.detach().requires_grad_(True) ..., after: gx = torch.autograd.grad(out.sum(), x, c ...
    g = torch.Generator().manual_seed(0)
    x = torch.randn((3,), generator=g, dtype=torch.float32)
    x1 = torch.randn((3,), generator=g, dtype=torch.float32)
    gx = torch.zeros((3,), dtype=torch.float32)
    # the caller, before the call
    x = x.detach().requires_grad_(True)
    x1 = x1.detach().requires_grad_(True)
    out = fn(x, x1)
    try:
        gx = torch.autograd.grad(out.sum(), x, create_graph=True)[0].detach()
    except Exception as exc:
        return f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    return 'no exception'

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 2: calls[0].after: exception differs from eager')
sys.exit(0 if same else 3)
