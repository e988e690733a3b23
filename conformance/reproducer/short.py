"""The short reproducer: the program, its inputs, the compiled call and the one check that fails.

What a maintainer would accept in an upstream issue: torch as the only import, a few dozen
lines, the failing check spelled out. It builds the inputs with the same draws from the same
seeded generator as the harness (conformance/core/build.py), so the values are the ones that
failed; it runs the calls of the failing pass up to the failing one, and checks only the first
mismatch of the record. `render_short` returns None where it has no check for that mismatch
(the full reproducer then serves).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conformance.core.build import CallPoint, Spec, call_points, contiguous_strides, geometry, storage_numel, sweep
from conformance.core.call import TANGENT_SEED_OFFSET
from conformance.core.check import REPRO_DIFFERS, REPRO_MATCHES
from conformance.core.entry import AOT_FUNCTION
from conformance.reproducer import header, literal
from conformance.results import MismatchRecord, ResultRecord

if TYPE_CHECKING:
    from conformance.loader import LoadedCase
    from conformance.variants import Variant

HELPERS = {
    "place": '''def place(values, stride, offset, numel, device):  # exact geometry in a storage of its own
    out = torch.empty(0, dtype=values.dtype, device=device)
    with torch.no_grad():
        out.set_(torch.zeros(numel, dtype=values.dtype, device=device).untyped_storage(), offset, values.shape, stride)
        out.copy_(values.to(device))
    return out''',
    "non_leaf": '''def non_leaf(leaf):  # leaf's geometry and values, made by an op (a grad_fn), in a storage of its own
    t = place(torch.zeros(leaf.shape, dtype=leaf.dtype), leaf.stride(), leaf.storage_offset(),
              leaf.untyped_storage().nbytes() // leaf.element_size(), leaf.device)
    with torch.enable_grad():
        t.copy_(leaf)
    return t''',
    "flat": '''def flat(out):  # the outputs in order: tuples, lists and dicts (sorted keys) flattened
    if isinstance(out, tuple | list):
        return [x for item in out for x in flat(item)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in flat(out[k])]
    return [out]''',
    "structure": '''def structure(out):
    if isinstance(out, tuple | list):
        return f"{type(out).__name__}({', '.join(structure(x) for x in out)})"
    if isinstance(out, dict):
        return f"dict({', '.join(f'{k}: {structure(out[k])}' for k in sorted(out, key=str))})"
    return "*"''',
    "storage": '''def storage(t):  # (device, address) of a dense tensor's storage, None if it has none to share
    if type(t) is not torch.Tensor or t.untyped_storage().nbytes() == 0:
        return None
    return (str(t.device), t.untyped_storage().data_ptr())''',
    "whole": '''def whole(t):  # the whole storage the tensor lives in, as its dtype
    st = t.untyped_storage()
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(st, 0, (st.nbytes() // t.element_size(),), (1,))''',
    "close": '''def close(a, b):
    try:
        torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), equal_nan=True, check_stride=False,
                                   RTOL_ATOL)
    except AssertionError as exc:
        return str(exc).splitlines()[0]
    return True''',
    "tangent": '''def tangent(out, gen):  # a seeded gradient; a subclass output gets one of its own subclass
    if type(out) is not torch.Tensor and hasattr(type(out), "__tensor_flatten__"):
        names, ctx = type(out).__tensor_flatten__(out)
        inner = {n: tangent(getattr(out, n), gen) for n in names}
        return type(out).__tensor_unflatten__(inner, ctx, out.size(), out.stride())
    dtype = torch.complex64 if out.is_complex() else torch.float32
    return torch.randn(tuple(out.shape), generator=gen, dtype=dtype).to(device=out.device, dtype=out.dtype)''',
    "backward": '''def backward(out):  # through every differentiable output at once, as the harness does
    diff = [o for o in flat(out) if isinstance(o, torch.Tensor) and o.requires_grad
            and (o.is_floating_point() or o.is_complex())]
    if diff:
        gen = torch.Generator().manual_seed(TANGENT_SEED)
        with torch.enable_grad():
            torch.autograd.backward(diff, grad_tensors=[tangent(o, gen) for o in diff])''',
    "write_through": '''def write_through(out):  # write through every output, so that aliasing shows
    errors = []
    with torch.no_grad():
        for o in flat(out):
            try:
                if isinstance(o, torch.Tensor):
                    o.logical_not_() if o.dtype == torch.bool else o.add_(1)
                errors.append(None)
            except Exception as exc:
                errors.append(type(exc).__name__)
    return errors''',
}
NEEDS = {"non_leaf": ("place",), "close": (), "backward": ("flat", "tangent"), "write_through": ("flat",)}


@dataclass
class _Script:
    lc: LoadedCase
    variant: Variant
    helpers: list[str] = field(default_factory=list)
    two_tensor: bool = False

    def need(self, name: str) -> None:
        for dep in NEEDS.get(name, ()):
            self.need(dep)
        if name not in self.helpers:
            self.helpers.append(name)


# ----------------------------------------------------------------------------- inputs


def _draw(spec: Spec) -> str:  # noqa: PLR0911  # one return per init kind
    """The expression that draws `spec`'s values exactly as conformance.core.build.draw_values."""
    shape = tuple(spec["shape"])
    dtype = f"torch.{spec['dtype']}"
    if spec["values"] is not None:
        return f"torch.tensor({literal(spec['values'])!r}, dtype={dtype}).reshape({shape})"
    floating = spec["dtype"] in ("float32", "float64", "float16", "bfloat16", "complex64")
    init = spec["init"] or ("randn" if floating else ("randint" if spec["dtype"] != "bool" else "rand"))
    if init in ("ones", "zeros"):
        return f"torch.{init}({shape}, dtype={dtype})"
    if init == "arange":
        return f"torch.arange({storage_numel(shape, contiguous_strides(shape), 0)}, dtype=torch.float64)" \
               f".reshape({shape}).to({dtype})"
    if init == "randint":
        return f"torch.randint(0, 10, {shape}, generator=g, dtype=torch.int64).to({dtype})"
    if spec["dtype"] == "bool":
        return f"(torch.rand({shape}, generator=g) > 0.5)"
    draw = dtype if spec["dtype"] in ("float32", "float64", "complex64") else "torch.float32"
    cast = "" if draw == dtype else f".to({dtype})"
    if init == "randn":
        return f"torch.randn({shape}, generator=g, dtype={draw}){cast}"
    plus = " + 0.5" if init == "positive" else ""
    return f"(torch.rand({shape}, generator=g, dtype={draw}){plus}){cast}"


def _dense(s: _Script, spec: Spec, device: str) -> str:
    stride, offset = geometry(spec)
    shape = tuple(spec["shape"])
    where = spec["device"] or device
    if stride == contiguous_strides(shape) and offset == 0:
        return _draw(spec) + (f".to({where!r})" if where != "cpu" else "")
    s.need("place")
    return f"place({_draw(spec)}, {stride}, {offset}, {storage_numel(shape, stride, offset)}, {where!r})"


def _inner(s: _Script, spec: Spec, device: str) -> str:
    if spec["tensor"] is not None:
        return _dense(s, spec["tensor"], device)
    return _two_tensor(s, spec["two_tensor"], device)


def _two_tensor(s: _Script, spec: Spec, device: str) -> str:
    s.two_tensor = True
    return f"TwoTensor({_inner(s, spec['a'], device)}, {_inner(s, spec['b'], device)})"


def _input_lines(s: _Script, point: CallPoint, training: bool) -> list[str]:  # noqa: PLR0912  # one branch per input kind
    case, device = s.lc.data, s.variant.device
    lines = [f"g = torch.Generator().manual_seed({case['seed']})"]
    leaves: list[str] = []
    for name, declared in case["inputs"].items():
        spec = point.overrides.get(name, declared)
        if spec["tensor"] is not None:
            t = spec["tensor"]
            grad = training and t["requires_grad"]
            if grad and not t["leaf"]:
                s.need("non_leaf")
                lines.append(f"{name}_leaf = {_dense(s, t, device)}.requires_grad_()")
                lines.append(f"{name} = non_leaf({name}_leaf)")
                leaves.append(f"{name}.leaf: {name}_leaf")
            else:
                lines.append(f"{name} = {_dense(s, t, device)}" + (".requires_grad_()" if grad else ""))
                if grad:
                    leaves.append(f"{name}: {name}")
        elif spec["two_tensor"] is not None:
            grad = training and spec["two_tensor"]["requires_grad"]
            lines.append(f"{name} = {_two_tensor(s, spec['two_tensor'], device)}" + (".requires_grad_()" if grad
                                                                                     else ""))
            if grad:
                leaves.append(f"{name}: {name}")
        elif spec["view"] is not None:
            lines.append(f"{name} = {spec['view']}")
        elif spec["scalar"] is not None:
            value = point.scalars.get(name, sweep(spec["scalar"])[0]) if name not in point.overrides else \
                sweep(spec["scalar"])[0]
            lines.append(f"{name} = {value!r}")
        else:
            module = spec["module"]
            lines.append(f"{name} = torch.nn.Module()")
            for p, pspec in module["parameters"].items():
                value = _dense(s, pspec["tensor"], device) if pspec["tensor"] is not None else \
                    _two_tensor(s, pspec["two_tensor"], device)
                grad = training and pspec["requires_grad"]
                lines.append(f"{name}.register_parameter({p!r}, torch.nn.Parameter({value}, requires_grad={grad}))")
                if grad:
                    leaves.append(f"{name}.{p}: {name}.{p}")
            for b, bspec in module["buffers"].items():
                lines.append(f"{name}.register_buffer({b!r}, {_inner(s, bspec, device)})")
    passed = [n for n, spec in case["inputs"].items() if not spec["hidden"]]
    keys = ", ".join(f"{n!r}: {n}" for n in case["inputs"])
    leaf_keys = ", ".join(f"{k.split(': ')[0]!r}: {k.split(': ')[1]}" for k in leaves)
    lines.append(f"return [{', '.join(passed)}], {{{keys}}}, {{{leaf_keys}}}")
    return lines


# ----------------------------------------------------------------------------- the check

_PREFIX = re.compile(r"^(?P<warm>warm rerun, )?(?:(?P<call>call \d+(?: \(.*?\))?): )?(?P<where>.*)$", re.DOTALL)
TENSOR_CHECKS: dict[str, str] = {
    "dtype": "{t}.dtype", "device": "{t}.device", "shape": "tuple({t}.shape)", "stride": "{t}.stride()",
    "storage_offset": "{t}.storage_offset()", "requires_grad": "{t}.requires_grad", "is_leaf": "{t}.is_leaf",
    "type": "f'{{type({t}).__module__}}.{{type({t}).__qualname__}}'",
    "inner tensors": "sorted(type({t}).__tensor_flatten__({t})[0])",
}


def _tensor_names(case: Spec) -> list[str]:
    names = []
    for name, spec in case["inputs"].items():
        if spec["module"] is not None:
            names += [f"{name}.{p}" for p in (*spec["module"]["parameters"], *spec["module"]["buffers"])]
        elif spec["scalar"] is None:
            names.append(name)
    return sorted(names, key=len, reverse=True)


def _thing(s: _Script, where: str, side: str) -> str | None:
    """The expression for what `where` names, on side `e` (eager) or `c` (compiled)."""
    out = re.match(r"^out\[(\d+)\]((?:\.\w+)*)$", where)
    if out:
        s.need("flat")
        return f"flat({side}_out)[{out[1]}]{out[2]}"
    for name in _tensor_names(s.lc.data):
        if where == name or where.startswith(name + "."):
            head, _, attr = name.partition(".")
            base = f"{side}_named[{head!r}]" + (f".{attr}" if attr else "")
            return base + where[len(name):]
    return None


@dataclass
class _Check:
    lines: list[str]
    backward: bool = False
    write_through: bool = False
    before: bool = False  # needs storage/versions recorded before the calls
    backward_exceptions: bool = False  # runs the backward of each side catching what it raises
    ambient: bool = False  # needs the modes read right after each call
    count: bool = False


def _compare(s: _Script, m: MismatchRecord, e: str, c: str) -> list[str]:
    """values, storage contents (within the case's tolerance) or a plain value."""
    if m.check == "value":
        return [f"expected, actual = {e}, {c}", "same = expected == actual or (expected != expected and actual "
                "!= actual)"]
    if m.check == "storage contents":
        s.need("whole")
        e, c = f"whole({e})", f"whole({c})"
    s.need("close")
    return [f"expected, actual = {e}, {c}", "same = close(actual, expected) is True"]


def _check(s: _Script, m: MismatchRecord, where: str) -> _Check | None:  # noqa: PLR0911, PLR0912  # one branch per kind
    training = s.variant.mode == "training"
    if m.check == "graphs compiled":
        return _Check([f"expected, actual = {m.expected}, len(graphs)", "same = expected == actual"], count=True)
    if m.check in ("grad mode", "inference mode", "autocast"):
        return _Check([f"expected, actual = e_modes[{m.check!r}], c_modes[{m.check!r}]", "same = expected == actual"],
                      ambient=True)
    if m.check == "exception" and where == "call":
        return _Check(["expected, actual = e_exc, c_exc", "same = expected == actual"])
    if m.check == "exception" and where == "backward":
        return _Check(["expected, actual = e_backward, c_backward", "same = expected == actual"],
                      backward_exceptions=True)
    if m.check == "structure":
        s.need("structure")
        return _Check(["expected, actual = structure(e_out), structure(c_out)", "same = expected == actual"])
    if m.check == "number of outputs":
        s.need("flat")
        return _Check(["expected, actual = len(flat(e_out)), len(flat(c_out))", "same = expected == actual"])
    if m.check == "in-place write through outputs":
        return _Check(["expected, actual = e_written, c_written", "same = expected == actual"], backward=training,
                      write_through=True)
    if where.startswith("grad of "):
        name = where[len("grad of "):].split(".grad", maxsplit=1)[0]
        leaf = name if name in s.lc.data["inputs"] or "." in name else None
        if leaf is None:
            return None
        if m.check == ".grad":
            return _Check([f"expected, actual = e_leaves[{name!r}].grad is not None, "
                           f"c_leaves[{name!r}].grad is not None", "same = expected == actual"], backward=True)
        if m.check == "values":
            s.need("close")
            return _Check([f"expected, actual = e_leaves[{name!r}].grad, c_leaves[{name!r}].grad",
                           "same = close(actual, expected) is True"], backward=True)
        return None
    after = where.startswith("after writing through the outputs: ")
    target = where[len("after writing through the outputs: "):] if after else where.removeprefix("input ")
    e, c = _thing(s, target, "e"), _thing(s, target, "c")
    if e is None or c is None:
        return None
    if m.check in TENSOR_CHECKS:
        template = TENSOR_CHECKS[m.check]
        return _Check([f"expected, actual = {template.format(t=e)}, {template.format(t=c)}",
                       "same = expected == actual"], backward=after and training, write_through=after)
    if m.check in ("values", "storage contents", "value"):
        return _Check(_compare(s, m, e, c), backward=after and training, write_through=after)
    name = target
    if m.check in ("_version moved", "_version delta"):
        delta = "{t}._version - {side}_versions[{name!r}]"
        if m.check == "_version moved":
            delta = f"({delta}) > 0"
        return _Check([f"expected, actual = {delta.format(t=e, side='e', name=name)}, "
                       f"{delta.format(t=c, side='c', name=name)}", "same = expected == actual"], before=True)
    if m.check == "storage swapped (set_)":
        s.need("storage")
        return _Check([f"expected, actual = storage({e}) != e_storages[{name!r}], storage({c}) != c_storages[{name!r}]",
                       "same = expected == actual"], before=True)
    if m.check == "shares storage with":
        s.need("storage")
        s.need("flat")
        share = ("sorted(n for n, t in {{**{side}_named, "
                 "**{{f'out[{{k}}]': o for k, o in enumerate(flat({side}_out))}}}}.items() "
                 "if isinstance(t, torch.Tensor) and t is not {thing} and storage(t) is not None "
                 "and storage(t) == storage({thing}))")
        return _Check([f"expected, actual = {share.format(side='e', thing=e)}, {share.format(side='c', thing=c)}",
                       "same = expected == actual"])
    if m.check == "is the input object":
        who = "next((n for n, v in {side}_named.items() if v is {thing}), None)"
        return _Check([f"expected, actual = {who.format(side='e', thing=e)}, {who.format(side='c', thing=c)}",
                       "same = expected == actual"])
    if m.check == "view of (_base)":
        base = ("(None if {thing}._base is None else next((n for n, v in {side}_named.items() if isinstance(v, "
                "torch.Tensor) and (v is {thing}._base or v._base is {thing}._base)), '<intermediate>'))")
        return _Check([f"expected, actual = {base.format(side='e', thing=e)}, {base.format(side='c', thing=c)}",
                       "same = expected == actual"])
    return None


# ----------------------------------------------------------------------------- the script


def _compile_lines(s: _Script, count: bool) -> list[str]:
    case, v = s.lc.data, s.variant
    options = case["compile"]
    lines = []
    if v.backend == AOT_FUNCTION:
        lines.append("from functorch.compile import aot_function, nop")
        lines.append(f"compiled = aot_function(f, fw_compiler=nop, bw_compiler=nop, keep_inference_input_mutations="
                     f"{v.kiim}, dynamic={bool(options['dynamic'])})")
        return lines
    backend = repr(v.backend)
    if count:
        lines += ["graphs = []", "", "", "def backend(gm, example_inputs):  # counts the graphs compiled",
                  "    graphs.append(gm)",
                  f"    return torch._dynamo.lookup_backend({v.backend!r})(gm, example_inputs)", "", ""]
        backend = "backend"
    lines.append(f"compiled = torch.compile(f, backend={backend}, dynamic={options['dynamic']}, "
                 f"fullgraph={options['fullgraph']})")
    return lines


def _config_lines(s: _Script) -> list[str]:
    case, v = s.lc.data, s.variant
    lines = []
    for key, value in case["config"].items():
        module, _, attr = key.partition(".config.")
        lines.append(f"importlib.import_module({module + '.config'!r}).patch({{{attr!r}: {value!r}}}).__enter__()")
    options = case["compile"]
    if v.backend == "inductor" and (options["options"] or options["mode"]):
        lines.append("import torch._inductor.config")
        chosen = dict(options["options"])
        if options["mode"]:
            lines.append(f"torch._inductor.config.patch(torch._inductor.list_mode_options({options['mode']!r}, "
                         f"{options['dynamic']!r})).__enter__()")
        if chosen:
            lines.append(f"torch._inductor.config.patch({chosen!r}).__enter__()")
    return ["import importlib", *lines] if case["config"] else lines


def _run_lines(s: _Script, check: _Check, calls: list[tuple[object, ...]], swept: list[str],
               catch: bool) -> list[str]:
    """The calls of the failing pass up to the failing one: fresh inputs for each side, eager then
    compiled, then what the check needs after the call (backward, the write through)."""
    grad = s.lc.data["grad_enabled"]
    modes = ("{'grad mode': torch.is_grad_enabled(), 'inference mode': torch.is_inference_mode_enabled(), "
             "'autocast': torch.is_autocast_enabled('cpu')}")
    run = [f"for values in {calls!r}:" if swept else "for values in [()]:",
           "    e_args, e_named, e_leaves = inputs(*values)",
           "    c_args, c_named, c_leaves = inputs(*values)"]
    if check.before:
        s.need("storage")
        run += [f"    {side}_{what} = {{n: {how} for n, t in {side}_named.items() if isinstance(t, torch.Tensor)}}"
                for side in "ec" for what, how in (("storages", "storage(t)"), ("versions", "t._version"))]
    within = f"    with torch.set_grad_enabled({grad}):  # each call in the case's grad mode, as the harness does"
    run += [within, "        e_out = f(*e_args)"]
    run += [f"        e_modes = {modes}"] if check.ambient else []
    run.append(within.split("  #", maxsplit=1)[0])
    if catch:
        run += ["        try:",
                "            c_out, c_exc = compiled(*c_args), 'no exception'",
                "        except Exception as exc:",
                "            c_out, c_exc = None, f'{type(exc).__name__}: {str(exc).strip().splitlines()[0]}'",
                "    e_exc = 'no exception'"]
    else:
        run.append("        c_out = compiled(*c_args)")
        run += [f"        c_modes = {modes}"] if check.ambient else []
    if check.backward:
        s.need("backward")
        run += ["    backward(e_out)", "    backward(c_out)"]
    if check.backward_exceptions:
        s.need("backward")
        for side in "ec":
            run += ["    try:", f"        backward({side}_out)", f"        {side}_backward = 'no exception'",
                    "    except Exception as exc:",
                    f"        {side}_backward = f'{{type(exc).__name__}}: {{str(exc).strip().splitlines()[0]}}'"]
    if check.write_through:
        s.need("write_through")
        run += ["    e_written, c_written = write_through(e_out), write_through(c_out)"]
    return run


def _tolerance(case: Spec) -> str:
    rtol, atol = case["expect"]["rtol"], case["expect"]["atol"]
    if (rtol, atol) == (None, None):
        return "rtol=None, atol=None"
    return f"rtol={rtol or 0.0}, atol={atol or 0.0}"


def _needs_the_core(value: object) -> bool:
    """Whether the case uses what only the core builds: classes, subclasses by class, module
    classes, optimizers, persisted inputs (the full reproducer serves those)."""
    if isinstance(value, dict):
        if value.get("subclass") or value.get("class") or value.get("optimizer") or value.get("persist"):
            return True
        return any(_needs_the_core(v) for v in value.values())
    if isinstance(value, list):
        return any(_needs_the_core(v) for v in value)
    return False


def render_short(lc: LoadedCase, variant: Variant, record: ResultRecord) -> str | None:
    """The short script for the record's first mismatch, or None where it has no check for it."""
    if record.status not in ("fail", "xfail") or not record.mismatches or lc.case.calls:
        return None
    if lc.case.classes is not None or _needs_the_core(lc.data["inputs"]):
        return None
    m = record.mismatches[0]
    prefix = _PREFIX.match(m.where)
    if m.source == "--strict-internals" or prefix is None:
        return None
    pass_where = re.match(r"^(cold|warm) pass over \d+ call\(s\)$", prefix["where"])
    warm = bool(prefix["warm"]) or bool(pass_where and pass_where[1] == "warm")
    points = call_points(lc.data)
    labels = [p.label for p in points]
    upto = len(points) - 1 if pass_where else (labels.index(prefix["call"]) if prefix["call"] in labels else 0)
    s = _Script(lc, variant)
    check = _check(s, m, prefix["where"])
    if check is None:
        return None
    swept = [n for n, spec in lc.data["inputs"].items() if spec["scalar"] is not None and spec["scalar"]["values"]]
    body = [line for line in _input_lines(s, points[0], variant.mode == "training")
            if not any(line.startswith(f"{n} = ") for n in swept)]  # the swept values come in as parameters
    calls = [tuple(p.scalars[n] for n in swept) for p in points[: upto + 1]]
    run = _run_lines(s, check, calls, swept, catch=m.check == "exception" and prefix["where"] == "call")
    compile_lines = _compile_lines(s, check.count)
    warm_lines, cold_pass = [], []
    if warm:
        warm_lines = ["import os", "import tempfile",
                      "os.environ['TORCHINDUCTOR_CACHE_DIR'] = tempfile.mkdtemp()  # cold caches of its own"]
        cold_pass = ["# the cold pass; the failing one is the same calls again after a reset, caches warm", *run,
                     "torch._dynamo.reset()", compile_lines[-1], *(["graphs.clear()"] if check.count else [])]
    helpers = [HELPERS[h].replace("RTOL_ATOL", _tolerance(lc.data)).replace("TANGENT_SEED",
                                                                             str(lc.data["seed"] + TANGENT_SEED_OFFSET))
               for h in s.helpers]
    lines = [
        "#!/usr/bin/env python3",
        header(lc, variant, record, "The short form: the first mismatch only; --full-reproducers writes the full "
               "check of every contract beside it."),
        "import sys", "", "import torch",
        *(["from torch.testing._internal.two_tensor import TwoTensor"] if s.two_tensor else []),
        *_config_lines(s), "", "",
        lc.case.program.strip("\n"), "", "",
        *[part for h in helpers for part in (h, "", "")],
        f"def inputs({', '.join(swept)}):  # the harness's draws, in its order, from its seeded generator",
        *(f"    {line}" for line in body), "", "",
        *warm_lines,
        f"torch.manual_seed({lc.data['seed']})",
        *compile_lines, *cold_pass, *run, *check.lines,
        f"print('the harness recorded:', {m.message()!r})",
        "if same:",
        "    print(f'MATCHES: {expected!r} on both sides (the failure does not reproduce here)')",
        f"    sys.exit({REPRO_MATCHES})",
        f"print(f'MISMATCH: {prefix['where']}: {m.check} is {{actual!r}}, but eager gives {{expected!r}}')",
        f"sys.exit({REPRO_DIFFERS})",
    ]
    return "\n".join(lines) + "\n"
