#!bin/env python3
"""With dynamic=True, a TwoTensor whose a is a flat TwoTensor and whose b is a nested TwoTensor(TwoTensor, TwoTensor) built around that same flat TwoTensor gives eager's values and nesting.
Compares compiled with eager on the 308 checks the harness applies to this program (1 call(s)); exit 3 where any differs, 0 where none does, 4 without the device.
From cases/subclass_wrapper/upstream/twotensor_asymmetric_nesting.yaml."""
import re
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(z):
    return z.sin()

def run(fn, compiled):  # every call; what each shows, check by check
    calls = []
    seen = {}
    calls.append(seen)
    g = torch.Generator().manual_seed(0)
    s = TwoTensor(torch.randn((2, 3), generator=g, dtype=torch.float32), torch.randn((2, 3), generator=g, dtype=torch.float32))
    z = s.__class__(s, s.__class__(s, s.clone()))
    version_before = {'s': s._version, 'z': z._version}
    storage_before = {'s': s.untyped_storage(), 'z': z.untyped_storage()}
    try:
        out = fn(z)
        modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')))
        seen['call'] = {'exception': None}
    except Exception as exc:
        seen['call'] = {'exception': raised(exc)}
        return calls
    outs = flatten_outputs(out)
    tensors = {'s': s, 'z': z}
    seen['outputs'] = observed(lambda: {'structure': output_structure(out), 'number of outputs': len(outs)})
    seen['out[0]'] = observed(lambda: {**look(out, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'is the input object': next((n for n, x in tensors.items() if x is out), None), 'shares storage with': sorted(n for n, x in tensors.items() if x is not out and storage_key(x) is not None and storage_key(x) == storage_key(out))})
    seen['out[0].a'] = observed(lambda: look(out.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['out[0].a.a'] = observed(lambda: look(out.a.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].a.b'] = observed(lambda: look(out.a.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].b'] = observed(lambda: look(out.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['out[0].b.a'] = observed(lambda: look(out.b.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['out[0].b.a.a'] = observed(lambda: look(out.b.a.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].b.a.b'] = observed(lambda: look(out.b.a.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].b.b'] = observed(lambda: look(out.b.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['out[0].b.b.a'] = observed(lambda: look(out.b.b.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].b.b.b'] = observed(lambda: look(out.b.b.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['input s'] = observed(lambda: {**look(s, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': s.untyped_storage() is not storage_before['s'], '_version moved': s._version - version_before['s'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s and storage_key(x) is not None and storage_key(x) == storage_key(s))})
    seen['input s.a'] = observed(lambda: look(s.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input s.b'] = observed(lambda: look(s.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input z'] = observed(lambda: {**look(z, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': z.untyped_storage() is not storage_before['z'], '_version moved': z._version - version_before['z'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not z and storage_key(x) is not None and storage_key(x) == storage_key(z))})
    seen['input z.a'] = observed(lambda: look(z.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['input z.a.a'] = observed(lambda: look(z.a.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input z.a.b'] = observed(lambda: look(z.a.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input z.b'] = observed(lambda: look(z.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['input z.b.a'] = observed(lambda: look(z.b.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['input z.b.a.a'] = observed(lambda: look(z.b.a.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input z.b.a.b'] = observed(lambda: look(z.b.a.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input z.b.b'] = observed(lambda: look(z.b.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset'))
    seen['input z.b.b.a'] = observed(lambda: look(z.b.b.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input z.b.b.b'] = observed(lambda: look(z.b.b.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['after the call'] = observed(lambda: {'grad mode': modes[0], 'inference mode': modes[1], 'autocast': modes[2]})
    written = write_through_outputs(outs)  # in place, through each output
    seen['after writing through the outputs'] = observed(lambda: {'in-place write through outputs': written})
    seen['after writing through the outputs: s'] = observed(lambda: look(s, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: s.a'] = observed(lambda: look(s.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s.b'] = observed(lambda: look(s.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: z'] = observed(lambda: look(z, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: z.a'] = observed(lambda: look(z.a, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: z.a.a'] = observed(lambda: look(z.a.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: z.a.b'] = observed(lambda: look(z.a.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: z.b'] = observed(lambda: look(z.b, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: z.b.a'] = observed(lambda: look(z.b.a, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: z.b.a.a'] = observed(lambda: look(z.b.a.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: z.b.a.b'] = observed(lambda: look(z.b.a.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: z.b.b'] = observed(lambda: look(z.b.b, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: z.b.b.a'] = observed(lambda: look(z.b.b.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: z.b.b.b'] = observed(lambda: look(z.b.b.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0]'] = observed(lambda: look(out, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].a'] = observed(lambda: look(out.a, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].a.a'] = observed(lambda: look(out.a.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].a.b'] = observed(lambda: look(out.a.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].b'] = observed(lambda: look(out.b, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].b.a'] = observed(lambda: look(out.b.a, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].b.a.a'] = observed(lambda: look(out.b.a.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].b.a.b'] = observed(lambda: look(out.b.a.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].b.b'] = observed(lambda: look(out.b.b, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].b.b.a'] = observed(lambda: look(out.b.b.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].b.b.b'] = observed(lambda: look(out.b.b.b, 'type', 'dtype', 'device', 'shape', 'values'))
    return calls

compiled_f = torch.compile(f, backend='inductor', dynamic=True)

# -------------------- how the harness reads and judges each check (torch-conformance's own functions)
def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def output_structure(out):
    if isinstance(out, tuple | list):
        return f"{type(out).__name__}({', '.join((output_structure(x) for x in out))})"
    if isinstance(out, dict):
        return f"dict({', '.join((f'{k}: {output_structure(out[k])}' for k in sorted(out, key=str)))})"
    return '*'

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

def refusal(exc):
    first = str(exc).split('.')[0]
    return f'raises {type(exc).__name__}: ' + re.sub('\\bOutput \\d+ of \\w+', "A view's output", first)

def look(t, *checks):
    seen = {}
    for check in checks:
        try:
            value = OBSERVE[check](t)
        except Exception as exc:
            value = refusal(exc)
        seen[check] = value.clone() if isinstance(value, torch.Tensor) else value
    return seen

def raised(exc):
    text = f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    inner = exc.__cause__ or getattr(exc, 'inner_exception', None)
    if isinstance(inner, BaseException) and inner is not exc:
        text += f' (caused by {type(inner).__name__}: {str(inner).strip()})'
    return text

def observed(get):
    try:
        return get()
    except Exception as exc:
        return {'unobservable': raised(exc)}

def short(value, limit=160):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + '...'

def shown(value):
    return short(value.flatten()[:8].tolist() if isinstance(value, torch.Tensor) else value)

def judged(check, compiled, eager):
    try:
        detail = JUDGES[check](compiled, eager, TOL)
    except Exception:
        detail = None if repr(compiled) == repr(eager) else ''
    show = SHOW.get(check, str)
    if detail is not None and any((accepts(show(compiled), show(eager)) for accepts in ALLOWED.get(check, ()))):
        print(f'allowed: {check} is {show(compiled)}, eager gives {show(eager)} (a documented difference)')
        return None
    return detail

def differences(eager, compiled, pass_name=''):
    found = 0
    for k, (e_call, c_call) in enumerate(zip(eager, compiled, strict=False)):
        where_call = pass_name + (f'call {k + 1}: ' if len(eager) > 1 else '')
        for where, checks in e_call.items():
            if where not in c_call:
                continue
            lacking = c_call[where].get('unobservable')
            if lacking is not None and 'unobservable' not in checks:
                found += 1
                print(f'MISMATCH: {where_call}{where}: compiled has none ({lacking}), but eager does')
                continue
            for check, e in checks.items():
                c = c_call[where].get(check)
                detail = judged(check, c, e)
                if detail is not None:
                    found += 1
                    sides = (c, e) if check == 'exception' else (shown(c), shown(e))
                    print(f'MISMATCH: {where_call}{where}: {check} is {sides[0]}, but eager gives {sides[1]}' + (f' ({detail})' if detail else ''))
                    if check == '.grad':
                        break
    return found

def dims(sizes):
    return tuple((d if isinstance(d, int) else re.sub('\\bj\\d+\\b', 'j', str(d)) for d in sizes))

def significant_strides(shape, stride):
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple((None if n == 1 else s for n, s in zip(shape, stride, strict=False)))

def one_raised(actual, expected, tol):
    return None if (actual is None) == (expected is None) else ''

def equal(actual, expected, tol):
    return None if actual == expected else ''

def _identical(actual, expected):
    import torch
    if not (type(actual) is torch.Tensor and type(expected) is torch.Tensor and (actual.layout == expected.layout == torch.strided) and (actual.dtype == expected.dtype) and (actual.shape == expected.shape) and (actual.device == expected.device)):
        return False
    try:
        return bool(torch.equal(actual, expected))
    except (RuntimeError, NotImplementedError):
        return False

def close(actual, expected, tol):
    import torch
    if _identical(actual, expected):
        return None
    rtol, atol = (tol.rtol, tol.atol)
    if (rtol is None) != (atol is None):
        rtol, atol = (rtol or 0.0, atol or 0.0)
    try:
        torch.testing.assert_close(actual.cpu(), expected.cpu(), rtol=rtol, atol=atol, equal_nan=True, check_device=False, check_stride=False)
    except AssertionError as exc:
        return '; '.join([ln.strip() for ln in str(exc).splitlines() if ln.strip()][:4])
    return None

def moved(actual, expected, tol):
    return None if (actual > 0) == (expected > 0) else ''

OBSERVE = {  # how one side shows each check of a tensor t (conformance/core/checks.py)
    'type': lambda t: f'{type(t).__module__}.{type(t).__qualname__}',
    'dtype': lambda t: t.dtype,
    'device': lambda t: str(t.device),
    'shape': lambda t: dims(t.shape),
    'stride': lambda t: significant_strides(dims(t.shape), dims(t.stride())),
    'storage_offset': lambda t: t.storage_offset(),
    'requires_grad': lambda t: t.requires_grad,
    'is_leaf': lambda t: t.is_leaf,
    'values': lambda t: t.detach(),
    'storage contents': lambda t: torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage()).detach(),
}
JUDGES = {'exception': one_raised, 'structure': equal, 'number of outputs': equal, 'type': equal, 'dtype': equal, 'device': equal, 'shape': equal, 'stride': equal, 'storage_offset': equal, 'requires_grad': equal, 'is_leaf': equal, 'is the input object': equal, 'shares storage with': equal, 'values': close, 'storage swapped (set_)': equal, '_version moved': moved, 'storage contents': close, 'grad mode': equal, 'inference mode': equal, 'autocast': equal, 'in-place write through outputs': equal}  # the core's judges
ALLOWED, SHOW = {}, {}

class TOL:  # the case's tolerance (None: torch's defaults for the dtype)
    rtol, atol = None, None

eager = run(f, compiled=False)
differs = differences(eager, run(compiled_f, compiled=True))
# the verdict: what it printed, as the exit status
print(f'MISMATCH: {differs} check(s) differ from eager' if differs else 'MATCHES: compiled behaves like eager on every check')
sys.exit(3 if differs else 0)
