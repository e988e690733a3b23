#!/usr/bin/env python3
"""Explorer finding (torch.compile | shares storage with | an output | differs): compiled differs from eager.
On torch 2.15.0+cu132 the compiled call differs from eager at call 1: out[0]: shares storage with (exit 3; 0 where they agree, 4 without the device).
From findings/torch_compile_shares_storage_with_an_0ddb30.yaml."""
import sys

import torch


def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

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

def f(a, b, lr):
    a.data = b
    b.div_((1.0 + lr) ** 0.5)
    return b


def run(fn, compiled):
    # call 1: lr=0.1
    g = torch.Generator().manual_seed(2)
    a = torch.randn((), generator=g, dtype=torch.float32)
    b = torch.randn((), generator=g, dtype=torch.float32)
    lr = 0.1
    with torch.inference_mode():
        out = fn(a, b, lr)
    t = flatten_outputs(out)[0]
    tensors = {'a': a, 'b': b}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None and storage_key(x) == storage_key(t))


compiled_f = torch.compile(f, backend='inductor')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: call 1: out[0]: shares storage with differs from eager')
sys.exit(0 if same else 3)
