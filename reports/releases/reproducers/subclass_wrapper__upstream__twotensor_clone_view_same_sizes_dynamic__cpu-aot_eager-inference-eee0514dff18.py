#!bin/env python3
"""With dynamic=True, a clone of a TwoTensor viewed with its own symbolic sizes in order comes back as a TwoTensor with eager's values and gradient, for two shapes from one compile.
Compares compiled with eager on the 174 checks the harness applies to this program (2 call(s)); exit 3 where any differs, 0 where none does, 4 without the device.
From cases/subclass_wrapper/upstream/twotensor_clone_view_same_sizes_dynamic.yaml."""
import re
import sys

import torch
from torch.testing._internal.two_tensor import TwoTensor

def f(t):
    c = t.clone()
    return c.view(c.shape[0], c.shape[1])

def run(fn, compiled):  # every call; what each shows, check by check
    calls = []
    # call 1
    seen = {}
    calls.append(seen)
    g = torch.Generator().manual_seed(0)
    t = TwoTensor(torch.randn((3, 4), generator=g, dtype=torch.float32), torch.randn((3, 4), generator=g, dtype=torch.float32))
    version_before = {'t': t._version}
    storage_before = {'t': t.untyped_storage()}
    try:
        out = fn(t)
        modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')))
        seen['call'] = {'exception': None}
    except Exception as exc:
        seen['call'] = {'exception': raised(exc)}
        return calls
    outs = flatten_outputs(out)
    tensors = {'t': t}
    seen['outputs'] = observed(lambda: {'structure': output_structure(out), 'number of outputs': len(outs)})
    seen['out[0]'] = observed(lambda: {**look(out, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'is the input object': next((n for n, x in tensors.items() if x is out), None), 'shares storage with': sorted(n for n, x in tensors.items() if x is not out and storage_key(x) is not None and storage_key(x) == storage_key(out))})
    seen['out[0].a'] = observed(lambda: look(out.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].b'] = observed(lambda: look(out.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['input t'] = observed(lambda: {**look(t, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': t.untyped_storage() is not storage_before['t'], '_version moved': t._version - version_before['t'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None and storage_key(x) == storage_key(t))})
    seen['input t.a'] = observed(lambda: look(t.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input t.b'] = observed(lambda: look(t.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['after the call'] = observed(lambda: {'grad mode': modes[0], 'inference mode': modes[1], 'autocast': modes[2]})
    written = write_through_outputs(outs)  # in place, through each output
    seen['after writing through the outputs'] = observed(lambda: {'in-place write through outputs': written})
    seen['after writing through the outputs: t'] = observed(lambda: look(t, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: t.a'] = observed(lambda: look(t.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: t.b'] = observed(lambda: look(t.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0]'] = observed(lambda: look(out, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].a'] = observed(lambda: look(out.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].b'] = observed(lambda: look(out.b, 'type', 'dtype', 'device', 'shape', 'values'))
    # call 2: t: two_tensor
    seen = {}
    calls.append(seen)
    g = torch.Generator().manual_seed(0)
    t = TwoTensor(torch.randn((5, 7), generator=g, dtype=torch.float32), torch.randn((5, 7), generator=g, dtype=torch.float32))
    version_before = {'t': t._version}
    storage_before = {'t': t.untyped_storage()}
    try:
        out = fn(t)
        modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')))
        seen['call'] = {'exception': None}
    except Exception as exc:
        seen['call'] = {'exception': raised(exc)}
        return calls
    outs = flatten_outputs(out)
    tensors = {'t': t}
    seen['outputs'] = observed(lambda: {'structure': output_structure(out), 'number of outputs': len(outs)})
    seen['out[0]'] = observed(lambda: {**look(out, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'is the input object': next((n for n, x in tensors.items() if x is out), None), 'shares storage with': sorted(n for n, x in tensors.items() if x is not out and storage_key(x) is not None and storage_key(x) == storage_key(out))})
    seen['out[0].a'] = observed(lambda: look(out.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['out[0].b'] = observed(lambda: look(out.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values'))
    seen['input t'] = observed(lambda: {**look(t, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf'), 'storage swapped (set_)': t.untyped_storage() is not storage_before['t'], '_version moved': t._version - version_before['t'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None and storage_key(x) == storage_key(t))})
    seen['input t.a'] = observed(lambda: look(t.a, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['input t.b'] = observed(lambda: look(t.b, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'values', 'storage contents'))
    seen['after the call'] = observed(lambda: {'grad mode': modes[0], 'inference mode': modes[1], 'autocast': modes[2]})
    written = write_through_outputs(outs)  # in place, through each output
    seen['after writing through the outputs'] = observed(lambda: {'in-place write through outputs': written})
    seen['after writing through the outputs: t'] = observed(lambda: look(t, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: t.a'] = observed(lambda: look(t.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: t.b'] = observed(lambda: look(t.b, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0]'] = observed(lambda: look(out, 'type', 'dtype', 'device', 'shape'))
    seen['after writing through the outputs: out[0].a'] = observed(lambda: look(out.a, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0].b'] = observed(lambda: look(out.b, 'type', 'dtype', 'device', 'shape', 'values'))
    return calls

graphs = []

def backend(gm, example_inputs):  # counts the graphs it compiled, not those dynamo aborted
    compiled = torch._dynamo.lookup_backend('aot_eager')(gm, example_inputs)
    graphs.append(gm)
    return compiled

compiled_f = torch.compile(f, backend=backend, dynamic=True, fullgraph=True)

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
if len(graphs) != 1:
    print(f'MISMATCH: cold pass over 2 call(s): graphs compiled is {len(graphs)}, but expect.compiles gives 1')
    differs += 1
# the verdict: what it printed, as the exit status
print(f'MISMATCH: {differs} check(s) differ from eager' if differs else 'MATCHES: compiled behaves like eager on every check')
sys.exit(3 if differs else 0)
