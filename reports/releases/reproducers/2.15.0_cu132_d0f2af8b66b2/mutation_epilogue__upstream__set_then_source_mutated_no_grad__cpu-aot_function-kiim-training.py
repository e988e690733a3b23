#!/usr/bin/env python3
"""Under no_grad one input is set_ onto a second input and the second is then doubled in place, so both inputs share the doubled storage afterwards, as in eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input a: shares storage with (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/set_then_source_mutated_no_grad.yaml."""
import sys

import torch

def non_leaf(leaf):
    t, nbytes = (torch.empty(0, dtype=leaf.dtype, device=leaf.device), leaf.untyped_storage().nbytes())
    with torch.no_grad():
        t.set_(torch.zeros(nbytes // leaf.element_size(), dtype=leaf.dtype, device=leaf.device).untyped_storage(), leaf.storage_offset(), leaf.shape, leaf.stride())
    with torch.enable_grad():
        return t.copy_(leaf)

def is_subclass(t):
    return type(t) is not torch.Tensor and hasattr(type(t), '__tensor_flatten__')

def storage_key(t):
    if is_subclass(t) or t.device.type == 'meta':
        return None
    try:
        st = t.untyped_storage()
        return (str(t.device), st.data_ptr()) if st.nbytes() else None
    except (RuntimeError, NotImplementedError):
        return None

def f(a, b):
    with torch.no_grad():
        a.set_(b)
        b.mul_(2)
    return a + b

def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    a = non_leaf(torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_())
    b = non_leaf(torch.randn((3, 3), generator=g, dtype=torch.float32).requires_grad_())
    with torch.set_grad_enabled(True):
        out = fn(a, b)
    t = a
    tensors = {'a': a, 'b': b}
    return sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None and storage_key(x) == storage_key(t))

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=True, dynamic=False)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: shares storage with differs from eager')
sys.exit(0 if same else 3)
