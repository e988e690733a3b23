"""Statements drawn from torch's own operator registry, not from a list.

Every ATen operator schema says which argument an op writes (`Tensor(a!) self`) or aliases
(`Tensor(a) self -> Tensor(a)`), and its tags say which in-place ops change only metadata
(`inplace_view`) and which draw random numbers (`nondeterministic_seeded`, never drawn: eager and
compiled would differ by design). From each schema a call is written with arguments made from
their types (a peer tensor of the target's shape and dtype, a scalar, a dim, the target's size),
and run eagerly on each shape the grammar draws and each dtype: a form is kept where eager accepts
it. Those runs happen in a child process, one attempt announced before it starts, so that an op
that ends the process (an integer division by zero raises SIGFPE) costs only itself. The table is
cached per torch build.

Families: `inplace` (writes its target's data), `metadata` (changes its target's sizes or strides
in place), `view` (returns an alias of its target), `functional` (returns a new tensor: the core
ATen set and pointwise ops, drawn where it reads a tensor written before).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.modules
import torch.optim

Shape = tuple[int, ...]

FAMILIES = ("inplace", "metadata", "view", "functional")
DTYPES = ("float32", "float64", "float16", "bfloat16", "complex64", "int64", "int32", "int16", "int8", "uint8", "bool")
FLOATING = frozenset({"float32", "float64", "float16", "bfloat16", "complex64"})
# ops no program of a user's reaches this way: backends' private entry points, quantized and sparse
# layouts, predicates that return no tensor
SKIPPED_PREFIXES = ("_", "fbgemm", "quantize", "q_", "mkldnn", "cudnn", "miopen", "native_", "sparse", "to_sparse",
                    "to_mkldnn", "is_", "can_cast", "promote", "result_type", "set_", "resize_", "lift",
                    "record_stream", "slice_inverse")
# slice_inverse backs the reverse view functions of fake-ification, meant for neither a user's eager code
# nor a PT2 graph (#117041, which added it): fake tensors refuse its two tensor arguments
REGISTRY_VERSION = "7"  # bumped when a change here changes the table: the cache key carries it
ATTEMPTS_PER_OP = 4


@dataclass(frozen=True)
class Form:
    """One statement torch's registry offers: `call` with {t} (the target), {o} (a peer of the same
    shape and dtype) and {out} (a new variable); `result`: the target's new shape (metadata) or the
    new variable's (view, functional)."""

    family: str
    op: str
    call: str
    shape: Shape
    dtype: str
    result: Shape

    @property
    def binary(self) -> bool:
        return "{o}" in self.call


def _arg_choices(arg: Any, shape: Shape) -> list[str | None] | None:  # noqa: PLR0911  # one answer per schema type
    """Source texts for one argument (None: left to its default), or None where no value can be made.
    Types as the schema's Python binding spells them (`number` for Scalar, `List[int]` for int[])."""
    kind, name = str(arg.type), arg.name
    if arg.has_default_value():
        return [None]
    if kind == "Tensor":
        return ["{o}", "torch.zeros(1, dtype=torch.long)"]
    if kind == "number":
        return ["2", "0.5"]
    if kind in ("int", "SymInt"):
        return ["0", "-1"] if "dim" in name else ["1"]
    if kind in ("List[int]", "List[SymInt]"):
        if "dim" in name:
            return ["[0]"]
        return [repr(list(shape)), "[-1]"] if name in ("size", "shape") else None
    if kind == "bool":
        return ["False", "True"]
    if kind == "float":
        return ["0.5"]
    if kind.startswith("Optional["):
        return ["None"]
    return None


def _family(schema: Any, tags: Any) -> str | None:
    first = schema.arguments[0].alias_info
    returns = schema.returns
    if first is not None and first.is_write:
        return "metadata" if torch.Tag.inplace_view in tags else "inplace"
    if first is not None and returns and returns[0].alias_info is not None and not returns[0].alias_info.is_write:
        return "view"
    if first is None and returns and all(r.alias_info is None and str(r.type) == "Tensor" for r in returns):
        return "functional"
    return None


def candidates(shapes: tuple[Shape, ...]) -> Iterator[tuple[str, str, Shape, list[str]]]:
    """(family, op, shape, calls to try), per ATen schema a form can be written for."""
    for schema in torch._C._jit_get_all_schemas():
        namespace, _, name = schema.name.partition("::")
        if namespace != "aten" or name.startswith(SKIPPED_PREFIXES) or "quantized" in name or "empty" in name \
                or not schema.arguments:  # an `empty` op's values are unspecified: no two runs need agree
            continue
        if str(schema.arguments[0].type) != "Tensor" or any(
                a.name == "out" or (a.alias_info is not None and a.alias_info.is_write) for a in schema.arguments[1:]):
            continue
        overload = schema.overload_name or "default"
        try:
            packet = getattr(getattr(torch.ops.aten, name), overload)
        except (AttributeError, RuntimeError):
            continue
        family = _family(schema, packet.tags)
        if family is None or torch.Tag.nondeterministic_seeded in packet.tags:
            continue
        if family == "functional" and not {torch.Tag.core, torch.Tag.pointwise} & set(packet.tags):
            continue  # the core ATen set and pointwise ops: a solver's garbage on a singular sample is no finding
        method = hasattr(torch.Tensor, name)
        head = f"{{t}}.{name}(" if method else f"torch.ops.aten.{name}.{overload}({{t}}, "
        for shape in shapes:
            choices = [_arg_choices(a, shape) for a in schema.arguments[1:]]
            if any(c is None for c in choices):
                continue
            calls = []
            for combo in itertools.islice(itertools.product(*choices), ATTEMPTS_PER_OP):  # type: ignore[arg-type]  # None filtered above
                parts = [f"{a.name}={v}" if a.kwarg_only else str(v)
                         for a, v in zip(schema.arguments[1:], combo, strict=True) if v is not None]
                calls.append((head + ", ".join(parts)).rstrip(", ") + ")")
            yield family, f"{name}.{overload}", shape, calls


def _sample(shape: Shape, dtype: str) -> Any:
    """A tensor of the shape and dtype with no zero (an integer division by zero ends the process)."""
    n = 1
    for d in shape:
        n *= d
    return (torch.arange(n) % 3 + 1).reshape(shape).to(getattr(torch, dtype))


def _run(call: str, shape: Shape, dtype: str) -> tuple[Any, Any, tuple[Any, Any]]:
    t = _sample(shape, dtype)
    before = (t.shape, t.stride())
    out = eval(call.format(t="t", o="o"), {"torch": torch, "t": t, "o": _sample(shape, dtype)})
    if isinstance(out, list | tuple):
        out = out[0] if out and isinstance(out[0], torch.Tensor) else None
    return t, out, before


def _same(a: Any, b: Any) -> bool:
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    return (a.is_floating_point() or a.is_complex()) and bool(((a == b) | (a.isnan() & b.isnan())).all())


@contextlib.contextmanager
def _filled() -> Iterator[None]:
    """Memory torch leaves uninitialised filled (NaN, the largest integer): an op whose result reads
    some gives another result here than on a first run, and is never drawn."""
    det, warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]  # a module attribute torch sets
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]  # see above
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(det, warn_only=warn)
        torch.utils.deterministic.fill_uninitialized_memory = fill  # type: ignore[attr-defined]  # see above


def _try(family: str, call: str, shape: Shape, dtype: str) -> Shape | None:
    """The result shape where eager accepts the call on a sample of the shape and dtype, and gives
    the same on a second sample with torch's uninitialised memory filled (an op whose result reads
    some does not), else None."""
    t, out, before = _run(call, shape, dtype)
    with _filled():
        again, out_again, _ = _run(call, shape, dtype)
    if not _same(t, again) or (isinstance(out, torch.Tensor) and not out.is_sparse and not _same(out, out_again)):
        return None
    if family == "metadata":
        return tuple(t.shape) if (t.shape, t.stride()) != before else None
    if family == "inplace":
        return shape if out is t or out is None else None
    if not isinstance(out, torch.Tensor):
        return None
    if family == "view" and out.untyped_storage().data_ptr() != t.untyped_storage().data_ptr():
        return None
    return tuple(out.shape)


def _child(shapes: list[Shape]) -> None:
    """Announce each attempt, then say whether eager accepted it (JSON lines on stdout)."""
    warnings.simplefilter("ignore")
    skip = set(sys.argv[3:])
    for family, op, shape, calls in candidates(tuple(shapes)):
        for dtype in DTYPES:
            key = f"{op}|{shape}|{dtype}"
            if key in skip:
                continue
            print(json.dumps({"try": key}), flush=True)
            for call in calls:
                try:
                    result = _try(family, call, shape, dtype)
                except Exception:  # noqa: S112  # eager refusing a form is the answer sought
                    continue
                if result is not None:
                    form = Form(family, op, ("{out} = " if family in ("view", "functional") else "") + call,
                                shape, dtype, result)
                    print(json.dumps({"form": asdict(form)}), flush=True)
                    break


def _validate(shapes: tuple[Shape, ...]) -> list[Form]:
    forms: list[Form] = []
    crashed: list[str] = []
    while True:
        proc = subprocess.run([sys.executable, "-m", "conformance.explore.registry", json.dumps(shapes), "-",  # noqa: S603  # our own module
                               *crashed], capture_output=True, text=True, check=False)
        last = None
        for line in proc.stdout.splitlines():
            data = json.loads(line)
            if "try" in data:
                last = data["try"]
            else:
                f = data["form"]
                forms.append(Form(f["family"], f["op"], f["call"], tuple(f["shape"]), f["dtype"], tuple(f["result"])))
        if proc.returncode == 0 or last is None or last in crashed:
            return sorted(set(forms), key=lambda f: (f.family, f.op, f.shape, f.dtype))
        crashed.append(last)  # the attempt that ended the child: never again


def _cache_path(shapes: tuple[Shape, ...]) -> Path:
    key = hashlib.sha256(f"{torch.__version__}|{torch.version.git_version}|{shapes}|{REGISTRY_VERSION}".encode())
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "torch-conformance"
    return root / f"forms-{key.hexdigest()[:16]}.json"


def forms(shapes: tuple[Shape, ...]) -> list[Form]:
    """Every form torch's registry offers for these shapes and DTYPES, validated eagerly (cached per build)."""
    path = _cache_path(shapes)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Form(d["family"], d["op"], d["call"], tuple(d["shape"]), d["dtype"], tuple(d["result"]))
                for d in data]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    made = _validate(shapes)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as tmp:
            json.dump([asdict(f) for f in made], tmp)
        os.replace(tmp.name, path)
    except OSError:
        pass  # a read-only home: validated again next time
    return made


@functools.cache
def real_code_ops() -> frozenset[str]:
    """The tensor methods and torch functions torch's own optimizers (torch/optim) and modules
    (torch/nn/modules) call, read from their source: the statement forms real training code runs
    (a `_foreach_mul_` counts as `mul_`)."""
    names: set[str] = set()
    for package in (torch.optim, torch.nn.modules):
        for path in Path(str(package.__file__)).parent.glob("*.py"):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (OSError, SyntaxError, ValueError):
                continue
            names |= {n.func.attr.removeprefix("_foreach_") for n in ast.walk(tree)
                      if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return frozenset(names)


def ops_in(line: str) -> set[str]:
    """The method and function names a statement calls."""
    return set(re.findall(r"\.(\w+)\(", line))


def real_code_of(lines: list[str]) -> list[str]:
    """The names among these statements' calls that torch's optimizers or modules call too."""
    real = real_code_ops()
    return sorted({op for line in lines for op in ops_in(line)} & real)


class FormTable:
    """The forms by (family, shape, dtype), as the grammar draws them (hashed by identity: a strategy
    argument)."""

    def __init__(self, forms: list[Form], real: frozenset[str] | None = None) -> None:
        self.forms = tuple(forms)
        self._by: dict[tuple[str, Shape, str], list[Form]] = {}
        for f in self.forms:
            self._by.setdefault((f.family, f.shape, f.dtype), []).append(f)
        self.dtypes = tuple(d for d in DTYPES if any(f.dtype == d for f in self.forms))
        self._real: dict[tuple[str, Shape, str], list[Form]] = {}
        self.real = real or frozenset()
        for key, group in self._by.items():
            self._real[key] = [f for f in group if f.op.split(".")[0] in self.real]

    def of(self, family: str, shape: Shape, dtype: str, *, real: bool = False) -> list[Form]:
        """The forms of a family for a target; `real`: only those torch's optimizers and modules call."""
        return (self._real if real else self._by).get((family, shape, dtype), [])


@functools.cache
def table(shapes: tuple[Shape, ...]) -> FormTable:
    """The process's table for these shapes (built or read from the cache once)."""
    return FormTable(forms(shapes), real_code_ops())


if __name__ == "__main__":
    _child([tuple(s) for s in json.loads(sys.argv[1])])
