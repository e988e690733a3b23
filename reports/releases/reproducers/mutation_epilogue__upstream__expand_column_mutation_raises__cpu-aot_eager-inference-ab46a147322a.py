#!bin/env python3
"""An in-place add into a column of an expanded (zero-stride) view of an int64 arange, whose elements share memory, raises on the compiled side as it does in eager.
Compares compiled with eager on the 0 checks the harness applies to this program (1 call(s)); exit 3 where any differs, 0 where none does, 4 without the device.
From cases/mutation_epilogue/upstream/expand_column_mutation_raises.yaml."""
import re
import sys

import torch

def f(x):
    rows = x.expand(3, *x.shape)
    rows[0:3, 0].add_(5)
    return rows

def run(fn, compiled):  # every call; what each shows, check by check
    calls = []
    seen = {}
    calls.append(seen)
    g = torch.Generator().manual_seed(0)
    x = torch.arange(6, dtype=torch.float64).reshape((6,)).to(torch.int64)
    try:
        out = fn(x)
        modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')))
        seen['call'] = {'exception': None}
    except Exception as exc:
        seen['call'] = {'exception': raised(exc)}
        return calls
    outs = flatten_outputs(out)
    return calls

compiled_f = torch.compile(f, backend='aot_eager')

# -------------------- how the harness reads and judges each check (torch-conformance's own functions)
def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

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

def one_raised(actual, expected, tol):
    return None if (actual is None) == (expected is None) else ''

JUDGES = {'exception': one_raised}  # the core's judges
ALLOWED, SHOW = {}, {}

class TOL:  # the case's tolerance (None: torch's defaults for the dtype)
    rtol, atol = None, None

eager = run(f, compiled=False)
differs = differences(eager, run(compiled_f, compiled=True))
# the verdict: what it printed, as the exit status
print(f'MISMATCH: {differs} check(s) differ from eager' if differs else 'MATCHES: compiled behaves like eager on every check')
sys.exit(3 if differs else 0)
