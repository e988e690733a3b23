#!bin/env python3
"""Outputs of arithmetic no-ops on an input (x * 1, x + 0, x / 1.0) are fresh tensors as in eager, not the input object or an alias of it, so writing them leaves the input alone.
Compares compiled with eager on the 83 checks the harness applies to this program (1 call(s)); exit 3 where any differs, 0 where none does, 4 without the device.
From cases/runtime_wrapper/noop_arith_output_fresh.yaml."""
import re
import sys

import torch

def f(x):
    return x * 1, x + 0, x / 1.0

def run(fn, compiled):  # every call; what each shows, check by check
    calls = []
    seen = {}
    calls.append(seen)
    g = torch.Generator().manual_seed(0)
    x = torch.randn((4, 3), generator=g, dtype=torch.float32).requires_grad_()
    version_before = {'x': x._version}
    storage_before = {'x': x.untyped_storage()}
    try:
        out = fn(x)
        modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')))
        seen['call'] = {'exception': None}
    except Exception as exc:
        seen['call'] = {'exception': raised(exc)}
        return calls
    outs = flatten_outputs(out)
    try:
        backward_outputs(outs, 7919)
        seen['backward'] = {'exception': None}
    except Exception as exc:
        seen['backward'] = {'exception': raised(exc)}
    tensors = {'x': x}
    seen['outputs'] = observed(lambda: {'structure': output_structure(out), 'number of outputs': len(outs)})
    seen['out[0]'] = observed(lambda: {**look(outs[0], 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values'), 'is the input object': next((n for n, x in tensors.items() if x is outs[0]), None), 'view of (_base)': None if outs[0]._base is None else next((n for n, x in tensors.items() if x is outs[0]._base or x._base is outs[0]._base), '<intermediate>'), 'shares storage with': sorted(n for n, x in tensors.items() if x is not outs[0] and storage_key(x) is not None and storage_key(x) == storage_key(outs[0]))})
    seen['out[1]'] = observed(lambda: {**look(outs[1], 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values'), 'is the input object': next((n for n, x in tensors.items() if x is outs[1]), None), 'view of (_base)': None if outs[1]._base is None else next((n for n, x in tensors.items() if x is outs[1]._base or x._base is outs[1]._base), '<intermediate>'), 'shares storage with': sorted(n for n, x in {**tensors, 'out[0]': outs[0]}.items() if x is not outs[1] and storage_key(x) is not None and storage_key(x) == storage_key(outs[1]))})
    seen['out[2]'] = observed(lambda: {**look(outs[2], 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values'), 'is the input object': next((n for n, x in tensors.items() if x is outs[2]), None), 'view of (_base)': None if outs[2]._base is None else next((n for n, x in tensors.items() if x is outs[2]._base or x._base is outs[2]._base), '<intermediate>'), 'shares storage with': sorted(n for n, x in {**tensors, 'out[0]': outs[0]}.items() if x is not outs[2] and storage_key(x) is not None and storage_key(x) == storage_key(outs[2]))})
    seen['input x'] = observed(lambda: {**look(x, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': x.untyped_storage() is not storage_before['x'], '_version moved': x._version - version_before['x'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not x and storage_key(x) is not None and storage_key(x) == storage_key(x))})
    seen['after the call'] = observed(lambda: {'grad mode': modes[0], 'inference mode': modes[1], 'autocast': modes[2]})
    seen['grad of x'] = observed(lambda: {**look(x, '.grad'), **look(x.grad, 'type', 'dtype', 'device', 'shape', 'values')})
    written = write_through_outputs(outs)  # in place, through each output
    seen['after writing through the outputs'] = observed(lambda: {'in-place write through outputs': written})
    seen['after writing through the outputs: x'] = observed(lambda: look(x, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0]'] = observed(lambda: look(outs[0], 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[1]'] = observed(lambda: look(outs[1], 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[2]'] = observed(lambda: look(outs[2], 'type', 'dtype', 'device', 'shape', 'values'))
    return calls

compiled_f = torch.compile(f, backend='inductor')

# -------------------- how the harness reads and judges each check (torch-conformance's own functions)
def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def tangent(out, gen):
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)

def backward_outputs(outputs, seed):
    diff = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if diff:
        gen = torch.Generator().manual_seed(seed)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])

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

def same_base(actual, expected, tol):
    if (actual is None) != (expected is None):
        return ''
    return None if actual == expected or '<intermediate>' in (actual, expected) else ''

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
    '.grad': lambda t: t.grad is not None,
}
JUDGES = {'exception': one_raised, 'structure': equal, 'number of outputs': equal, 'type': equal, 'dtype': equal, 'device': equal, 'shape': equal, 'stride': equal, 'storage_offset': equal, 'requires_grad': equal, 'is_leaf': equal, 'values': close, 'is the input object': equal, 'view of (_base)': same_base, 'shares storage with': equal, 'storage contents': close, 'storage swapped (set_)': equal, '_version moved': moved, 'grad mode': equal, 'inference mode': equal, 'autocast': equal, '.grad': equal, 'in-place write through outputs': equal}  # the core's judges
ALLOWED, SHOW = {}, {}

class TOL:  # the case's tolerance (None: torch's defaults for the dtype)
    rtol, atol = None, None

eager = run(f, compiled=False)
differs = differences(eager, run(compiled_f, compiled=True))
# the verdict: what it printed, as the exit status
print(f'MISMATCH: {differs} check(s) differ from eager' if differs else 'MATCHES: compiled behaves like eager on every check')
sys.exit(3 if differs else 0)
