#!/usr/bin/env python3
"""An intermediate set_ onto an input, returned after the input is mutated in place, aliases the input's storage as in eager (found by the explorer).
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: shares storage with (exit 3; 0 where they agree, 4 without the device).
From cases/runtime_wrapper/explored/set_intermediate_onto_input_then_mutated.yaml."""
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
        return (str(t.device), st.data_ptr()) if st.nbytes() else None
    except (RuntimeError, NotImplementedError):
        return None

def f(a):
    v0 = a * 2
    v0.set_(a)
    a.mul_(2)
    return v0

def run(fn, compiled):
    g = torch.Generator().manual_seed(1)
    a = torch.randn((4,), generator=g, dtype=torch.float32)
    out = fn(a)
    t = flatten_outputs(out)[0]
    tensors = {'a': a}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None and storage_key(x) == storage_key(t))

compiled_f = torch.compile(f, backend='aot_eager')
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: shares storage with differs from eager')
sys.exit(0 if same else 3)
