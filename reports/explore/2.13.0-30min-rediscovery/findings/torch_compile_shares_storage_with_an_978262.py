#!/usr/bin/env python3
"""Explorer finding (torch.compile | shares storage with | an input | differs): compiled differs from eager.
On torch 2.13.0+cpu the compiled call differs from eager at input base: shares storage with (exit 3; 0 where they agree, 4 without the device).
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
    b.data = a * 2


def run(fn, compiled):
    g = torch.Generator().manual_seed(0)
    base = torch.randn((6,), generator=g, dtype=torch.float32)
    a = base[:4]
    b = base[2:]
    out = fn(a, b)
    t = base
    tensors = {'base': base, 'a': a, 'b': b}
    return sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None and storage_key(x) == storage_key(t))


compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: input base: shares storage with differs from eager')
sys.exit(0 if same else 3)
