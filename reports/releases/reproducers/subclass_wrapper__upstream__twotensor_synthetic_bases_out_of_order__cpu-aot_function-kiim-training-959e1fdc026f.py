#!bin/env python3
"""Four flat views of two TwoTensor bases interleaved, with a data mutation on the 2nd and unsqueeze_ on the 4th, end with eager's inner values and geometry.
Compares compiled with eager on the 444 checks the harness applies to this program (1 call(s)); exit 3 where any differs, 0 where none does, 4 without the device.
From cases/subclass_wrapper/upstream/twotensor_synthetic_bases_out_of_order.yaml."""
import re
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(a, b, c, d):
    b.add_(1)
    d.unsqueeze_(0)
    return [a + c + d, b.view(-1)]

def run(fn, compiled):  # every call; what each shows, check by check
    calls = []
    seen = {}
    calls.append(seen)
    g = torch.Generator().manual_seed(0)
    base1 = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32)).requires_grad_()
    base2 = TwoTensor(torch.randn((2, 2), generator=g, dtype=torch.float32), torch.randn((2, 2), generator=g, dtype=torch.float32)).requires_grad_()
    m1 = base1.add(1)
    m2 = base2.add(1)
    a = m1.view(-1)
    b = m2.view(-1)
    c = m1.view(-1)
    d = m2.view(-1)
    version_before = {'a': a._version, 'b': b._version, 'base1': base1._version, 'base2': base2._version, 'c': c._version, 'd': d._version, 'm1': m1._version, 'm2': m2._version}
    storage_before = {'a': a.untyped_storage(), 'b': b.untyped_storage(), 'base1': base1.untyped_storage(), 'base2': base2.untyped_storage(), 'c': c.untyped_storage(), 'd': d.untyped_storage(), 'm1': m1.untyped_storage(), 'm2': m2.untyped_storage()}
    try:
        out = fn(a, b, c, d)
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
    tensors = {'base1': base1, 'base2': base2, 'm1': m1, 'm2': m2, 'a': a, 'b': b, 'c': c, 'd': d}
    seen['outputs'] = observed(lambda: {'structure': output_structure(out), 'number of outputs': len(outs)})
    seen['out[0]'] = observed(lambda: {**look(outs[0], 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'is the input object': next((n for n, x in tensors.items() if x is outs[0]), None), 'view of (_base)': None if outs[0]._base is None else next((n for n, x in tensors.items() if x is outs[0]._base or x._base is outs[0]._base), '<intermediate>'), 'shares storage with': sorted(n for n, x in tensors.items() if x is not outs[0] and storage_key(x) is not None and storage_key(x) == storage_key(outs[0]))})
    seen['out[0].a'] = observed(lambda: look(outs[0].a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].b'] = observed(lambda: look(outs[0].b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[1]'] = observed(lambda: {**look(outs[1], 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'is the input object': next((n for n, x in tensors.items() if x is outs[1]), None), 'view of (_base)': None if outs[1]._base is None else next((n for n, x in tensors.items() if x is outs[1]._base or x._base is outs[1]._base), '<intermediate>'), 'shares storage with': sorted(n for n, x in {**tensors, 'out[0]': outs[0]}.items() if x is not outs[1] and storage_key(x) is not None and storage_key(x) == storage_key(outs[1]))})
    seen['out[1].a'] = observed(lambda: look(outs[1].a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[1].b'] = observed(lambda: look(outs[1].b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['input base1'] = observed(lambda: {**look(base1, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': base1.untyped_storage() is not storage_before['base1'], '_version moved': base1._version - version_before['base1'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not base1 and storage_key(x) is not None and storage_key(x) == storage_key(base1))})
    seen['input base1.a'] = observed(lambda: look(base1.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input base1.b'] = observed(lambda: look(base1.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input base2'] = observed(lambda: {**look(base2, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': base2.untyped_storage() is not storage_before['base2'], '_version moved': base2._version - version_before['base2'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not base2 and storage_key(x) is not None and storage_key(x) == storage_key(base2))})
    seen['input base2.a'] = observed(lambda: look(base2.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input base2.b'] = observed(lambda: look(base2.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input m1'] = observed(lambda: {**look(m1, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': m1.untyped_storage() is not storage_before['m1'], '_version moved': m1._version - version_before['m1'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not m1 and storage_key(x) is not None and storage_key(x) == storage_key(m1))})
    seen['input m1.a'] = observed(lambda: look(m1.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input m1.b'] = observed(lambda: look(m1.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input m2'] = observed(lambda: {**look(m2, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': m2.untyped_storage() is not storage_before['m2'], '_version moved': m2._version - version_before['m2'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not m2 and storage_key(x) is not None and storage_key(x) == storage_key(m2))})
    seen['input m2.a'] = observed(lambda: look(m2.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input m2.b'] = observed(lambda: look(m2.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input a'] = observed(lambda: {**look(a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': a.untyped_storage() is not storage_before['a'], '_version moved': a._version - version_before['a'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not a and storage_key(x) is not None and storage_key(x) == storage_key(a))})
    seen['input a.a'] = observed(lambda: look(a.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input a.b'] = observed(lambda: look(a.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input b'] = observed(lambda: {**look(b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': b.untyped_storage() is not storage_before['b'], '_version moved': b._version - version_before['b'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not b and storage_key(x) is not None and storage_key(x) == storage_key(b))})
    seen['input b.a'] = observed(lambda: look(b.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input b.b'] = observed(lambda: look(b.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input c'] = observed(lambda: {**look(c, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': c.untyped_storage() is not storage_before['c'], '_version moved': c._version - version_before['c'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not c and storage_key(x) is not None and storage_key(x) == storage_key(c))})
    seen['input c.a'] = observed(lambda: look(c.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input c.b'] = observed(lambda: look(c.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input d'] = observed(lambda: {**look(d, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': d.untyped_storage() is not storage_before['d'], '_version moved': d._version - version_before['d'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not d and storage_key(x) is not None and storage_key(x) == storage_key(d))})
    seen['input d.a'] = observed(lambda: look(d.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input d.b'] = observed(lambda: look(d.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['after the call'] = observed(lambda: {'grad mode': modes[0], 'inference mode': modes[1], 'autocast': modes[2]})
    seen['grad of base1'] = observed(lambda: {**look(base1, '.grad'), **look(base1.grad, 'type', 'dtype', 'device', 'shape')})
    seen['grad of base1.a'] = observed(lambda: look(base1.grad.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['grad of base1.b'] = observed(lambda: look(base1.grad.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['grad of base2'] = observed(lambda: {**look(base2, '.grad'), **look(base2.grad, 'type', 'dtype', 'device', 'shape')})
    seen['grad of base2.a'] = observed(lambda: look(base2.grad.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['grad of base2.b'] = observed(lambda: look(base2.grad.b, 'type', 'dtype', 'device', 'shape', 'values'))
    written = write_through_outputs(outs)  # in place, through each output
    seen['after writing through the outputs'] = observed(lambda: {'in-place write through outputs': written})
    seen['after writing through the outputs: base1'] = observed(lambda: look(base1, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: base1.a'] = observed(lambda: look(base1.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: base1.b'] = observed(lambda: look(base1.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: base2'] = observed(lambda: look(base2, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: base2.a'] = observed(lambda: look(base2.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: base2.b'] = observed(lambda: look(base2.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: m1'] = observed(lambda: look(m1, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: m1.a'] = observed(lambda: look(m1.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: m1.b'] = observed(lambda: look(m1.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: m2'] = observed(lambda: look(m2, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: m2.a'] = observed(lambda: look(m2.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: m2.b'] = observed(lambda: look(m2.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: a'] = observed(lambda: look(a, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: a.a'] = observed(lambda: look(a.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: a.b'] = observed(lambda: look(a.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: b'] = observed(lambda: look(b, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: b.a'] = observed(lambda: look(b.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: b.b'] = observed(lambda: look(b.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: c'] = observed(lambda: look(c, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: c.a'] = observed(lambda: look(c.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: c.b'] = observed(lambda: look(c.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: d'] = observed(lambda: look(d, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: d.a'] = observed(lambda: look(d.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: d.b'] = observed(lambda: look(d.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0]'] = observed(lambda: look(outs[0], 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].a'] = observed(lambda: look(outs[0].a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].b'] = observed(lambda: look(outs[0].b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[1]'] = observed(lambda: look(outs[1], 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[1].a'] = observed(lambda: look(outs[1].a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[1].b'] = observed(lambda: look(outs[1].b, 'type', 'dtype', 'device', 'shape', 'values'))
    return calls

from functorch.compile import aot_function, nop

compiled_f = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations=True, dynamic=False)

# -------------------- how the harness reads and judges each check (torch-conformance's own functions)
_FLAT_TUPLE = re.compile('tuple\\((?:\\*(?:, \\*)*)?\\)', re.NOFLAG)

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def tangent(out, gen):
    if hasattr(type(out), '__tensor_flatten__'):
        names, ctx = type(out).__tensor_flatten__(out)
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())
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

def _flat_tuple_as_list(actual, expected):
    return _FLAT_TUPLE.fullmatch(expected) is not None and actual == 'list' + expected.removeprefix('tuple')

def same_base(actual, expected, tol):
    if (actual is None) != (expected is None):
        return ''
    return None if actual == expected or '<intermediate>' in (actual, expected) else ''

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
    '.grad': lambda t: t.grad is not None,
}
JUDGES = {'exception': one_raised, 'structure': equal, 'number of outputs': equal, 'type': equal, 'dtype': equal, 'device': equal, 'shape': equal, 'stride': equal, 'storage_offset': equal, 'requires_grad': equal, 'is_leaf': equal, 'is the input object': equal, 'view of (_base)': same_base, 'shares storage with': equal, 'values': close, 'storage swapped (set_)': equal, '_version moved': moved, 'storage contents': close, 'grad mode': equal, 'inference mode': equal, 'autocast': equal, '.grad': equal, 'in-place write through outputs': equal}  # the core's judges
ALLOWED = {'structure': (_flat_tuple_as_list,)}  # differences the core documents, not failures
SHOW = {'structure': str}

class TOL:  # the case's tolerance (None: torch's defaults for the dtype)
    rtol, atol = None, None

eager = run(f, compiled=False)
differs = differences(eager, run(compiled_f, compiled=True))
# the verdict: what it printed, as the exit status
print(f'MISMATCH: {differs} check(s) differ from eager' if differs else 'MATCHES: compiled behaves like eager on every check')
sys.exit(3 if differs else 0)
