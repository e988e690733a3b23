#!/usr/bin/env python3
"""An offsets tensor created in the graph is shared by a jagged nested tensor over the values input and one over ones of its shape; their product matches eager, values and gradients.
On torch 2.15.0+cu132 the compiled call differs from eager at after writing through the outputs: vals: values (exit 3; 0 where they agree, 4 without the device).
From cases/subclass_wrapper/upstream/njt_constant_offsets_shared_in_graph.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def write_through_outputs(outputs):
    errors = []
    with torch.no_grad():
        for o in outputs:
            if not isinstance(o, torch.Tensor):
                errors.append(None)
                continue
            try:
                if o.dtype == torch.bool:
                    o.logical_not_()
                else:
                    o.add_(1)
                errors.append(None)
            except Exception as exc:
                errors.append(type(exc).__name__)
    return errors

def f(vals):
    offs = torch.tensor([0, 2, 6, 10], dtype=torch.int64, device=vals.device)
    nt = torch.nested.nested_tensor_from_jagged(vals, offs)
    nt2 = torch.nested.nested_tensor_from_jagged(torch.ones_like(vals), offs)
    return nt * nt2

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    vals = torch.randn((10, 5), generator=g, dtype=torch.float32)
    out = fn(vals)
    written = write_through_outputs(flatten_outputs(out))  # in place, through each output
    return vals.detach()

compiled_f = torch.compile(f, backend='inductor', fullgraph=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
try:
    torch.testing.assert_close(compiled.cpu(), eager.cpu(), equal_nan=True, check_device=False, check_stride=False)
except AssertionError as exc:
    sys.exit(print('MISMATCH: after writing through the outputs: vals: values differs from eager:', str(exc).splitlines()[0]) or 3)
sys.exit(print('MATCHES: compiled behaves like eager here') or 0)
