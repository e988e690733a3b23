#!/usr/bin/env python3
"""mutation_epilogue/explored/data_assign_after_mutation_grad [cpu-aot_eager-training]: fail on torch 2.10.0+cu128 (git 449b1768410104d3ed79d3bcfe4ba1d65c7f22c0)

A non-leaf input mutated in place, then given new data with `.data =` and returned, keeps the in-place op in its history, so the gradient matches eager's (found by the explorer).

  grad of a.leaf: values is [0.7824572920799255, 1.5089584589004517, -1.4185874462127686, -0.12878115475177765], but eager gives [1.564914584159851, 3.0179169178009033, -2.837174892425537, -0.2575623095035553] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.5089584589004517 at index (1,) (up to 1e-05 allowed); Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed))

Case file: cases/mutation_epilogue/explored/data_assign_after_mutation_grad.yaml (sha256 9870793da294dfc5); upstream: https://github.com/pytorch/pytorch/pull/179600
Recorded with python 3.11.7 on Linux-6.18.44-fc-v669-x86_64-with-glibc2.36 by torch-conformance 0.1.0.
The short form: the first mismatch only; --full-reproducers writes the full check of every contract beside it.
Exit status 3: compiled differs from eager; 0: it matches; 4: cannot tell (eager fails, no device).
"""
import sys

import torch


def f(a):
    a.mul_(2)
    a.data = a * 2
    return a


def close(a, b):
    try:
        torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), equal_nan=True, check_stride=False,
                                   rtol=None, atol=None)
    except AssertionError as exc:
        return str(exc).splitlines()[0]
    return True


def place(values, stride, offset, numel, device):  # exact geometry in a storage of its own
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out


def non_leaf(leaf):  # leaf's geometry and values, made by an op (a grad_fn), in a storage of its own
    t = place(torch.zeros(leaf.shape, dtype=leaf.dtype), leaf.stride(), leaf.storage_offset(),
              leaf.untyped_storage().nbytes() // leaf.element_size(), leaf.device)
    with torch.enable_grad():
        t.copy_(leaf)
    return t


def flat(out):  # the outputs in order: tuples, lists and dicts (sorted keys) flattened
    if isinstance(out, tuple | list):
        return [x for item in out for x in flat(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flat(out[k])]
    return [out]


def tangent(out, gen):  # a seeded gradient; a subclass output gets one of its own subclass
    if type(out) is not torch.Tensor and hasattr(type(out), "__tensor_flatten__"):
        names, ctx = type(out).__tensor_flatten__(out)
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)


def backward(out):  # through every differentiable output at once, as the harness does
    diff = [o for o in flat(out) if isinstance(o, torch.Tensor) and o.requires_grad
            and (o.is_floating_point() or o.is_complex())]
    if diff:
        gen = torch.Generator().manual_seed(7919)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])


def inputs():  # the harness's draws, in its order, from its seeded generator
    g = torch.Generator().manual_seed(0)
    a_leaf = torch.randn((4,), generator=g, dtype=torch.float32).requires_grad_()
    a = non_leaf(a_leaf)
    return [a], {'a': a}, {'a.leaf': a_leaf}


torch.manual_seed(0)
compiled = torch.compile(f, backend='aot_eager', dynamic=None, fullgraph=False)
for values in [()]:
    e_args, e_named, e_leaves = inputs(*values)
    c_args, c_named, c_leaves = inputs(*values)
    with torch.set_grad_enabled(True):  # each call in the case's grad mode, as the harness does
        e_out = f(*e_args)
    with torch.set_grad_enabled(True):
        c_out = compiled(*c_args)
    backward(e_out)
    backward(c_out)
expected, actual = e_leaves['a.leaf'].grad, c_leaves['a.leaf'].grad
same = close(actual, expected) is True
print('the harness recorded:', 'grad of a.leaf: values is [0.7824572920799255, 1.5089584589004517, -1.4185874462127686, -0.12878115475177765], but eager gives [1.564914584159851, 3.0179169178009033, -2.837174892425537, -0.2575623095035553] (Tensor-likes are not close!; Mismatched elements: 4 / 4 (100.0%); Greatest absolute difference: 1.5089584589004517 at index (1,) (up to 1e-05 allowed); Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed))')
if same:
    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')
    sys.exit(0)
print(f'MISMATCH: grad of a.leaf: values is {actual!r}, but eager gives {expected!r}')
sys.exit(3)
