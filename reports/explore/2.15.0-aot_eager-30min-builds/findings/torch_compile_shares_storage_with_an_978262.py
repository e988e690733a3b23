#!/usr/bin/env python3
"""Explorer finding (torch.compile | shares storage with | an input | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at input a: shares storage with (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_shares_storage_with_an_978262.yaml."""
import sys

import torch


def is_subclass(t):
    return type(t) is not torch.Tensor and hasattr(type(t), '__tensor_flatten__')

def storage_key(t):
    if is_subclass(t) or t.device.type == 'meta':
        return None
    try:
        st = t.untyped_storage()
        if st.nbytes() == 0:
            return None
        return (str(t.device), st.data_ptr())
    except (RuntimeError, NotImplementedError):
        return None

def f(a, b):
    a.mul_(2)
    with torch.no_grad():
        b.mul_(2)
    a.data = b


def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    a = torch.randn((), generator=g, dtype=torch.float32)
    b = torch.randn((), generator=g, dtype=torch.float32)
    with torch.set_grad_enabled(True):
        out = fn(a, b)
    t = a
    tensors = {'a': a, 'b': b}
    return sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None and storage_key(x) == storage_key(t))


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input a: shares storage with differs from eager')
sys.exit(0 if same else 3)
