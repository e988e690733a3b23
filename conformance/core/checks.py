"""Every oracle check, declared once: its id (the word a mismatch carries), what it compares, its judge
(compiled's observation against eager's: agree, or differ with a detail), how a reproducer observes the
same thing in plain torch code, which ways a difference of it can go, and the words an issue draft says
it in.

The core judges every difference through this registry (`C.VALUES.judged(...)`; `CHECKS` and `by_id` by id,
for the ids records carry), and makes a mismatch only through a declared check (`Check.mismatch`), so a check
cannot be judged one way and rendered another. A reproducer (conformance/reproducer/short.py) renders the
failing check from it: `observe` is a Python expression of what one side shows, in the names a reproducer has
(`t`: the tensor the mismatch's subject names; `out`: the call's return value; `outs`: it flattened; `tensors`:
the call's input tensors by name; `v0`/`s0`: the subject's version and storage before the call; `modes`: grad
mode, inference mode and autocast on the CPU and CUDA right after the call), `reads` which of them (the
check's family), and `compare` how the script holds the two sides' observations together: equal, close
(assert_close within the case's tolerance), moved (both changed or neither), or special (the script's own
code: exceptions, compile counts, the write-through). A cause (conformance/core/cause.py) takes its
direction from the check's `ways`, and an issue draft its title from the check's `words`.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from conformance.core.mismatch import WRITE_THROUGH, Mismatch, Tolerance, short
from conformance.core.ways import (
    MODE_WORDS,
    PLAIN_WAYS,
    PLAIN_WORDS,
    BumpWays,
    CountWays,
    FlagWays,
    PresenceWays,
    RaiseWays,
    ViewWays,
    Ways,
    Words,
    flag_words,
    present_words,
)

if TYPE_CHECKING:
    import torch

Compare = Literal["equal", "close", "moved", "special"]
# (actual, expected, tolerance) -> None where compiled agrees with eager, else a detail ("" for none)
Judge = Callable[[Any, Any, Tolerance], str | None]
EXACT = Tolerance()


def equal(actual: Any, expected: Any, tol: Tolerance) -> str | None:
    return None if actual == expected else ""


def moved(actual: int, expected: int, tol: Tolerance) -> str | None:
    """Both changed or neither: how far is `_version delta`'s question (extra bumps are allowed)."""
    return None if (actual > 0) == (expected > 0) else ""


def _identical(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Plain dense tensors of one dtype and shape with equal values: within any tolerance, so
    assert_close (a tenth of the harness's own time, most values being equal) need not run."""
    import torch  # lazy: start-up

    if not (type(actual) is torch.Tensor and type(expected) is torch.Tensor
            and actual.layout == expected.layout == torch.strided and actual.dtype == expected.dtype
            and actual.shape == expected.shape and actual.device == expected.device):
        return False
    try:
        return bool(torch.equal(actual, expected))
    except (RuntimeError, NotImplementedError):  # a tensor torch.equal does not take: assert_close decides
        return False


def close(actual: torch.Tensor, expected: torch.Tensor, tol: Tolerance) -> str | None:
    """assert_close within the case's tolerance (both or neither given; torch's defaults for the
    dtype otherwise), NaN equal to NaN, on the CPU; the detail is assert_close's own words."""
    import torch  # lazy: start-up

    if _identical(actual, expected):
        return None
    rtol, atol = tol.rtol, tol.atol
    if (rtol is None) != (atol is None):  # assert_close takes both or neither
        rtol, atol = rtol or 0.0, atol or 0.0
    try:
        torch.testing.assert_close(actual.cpu(), expected.cpu(), rtol=rtol, atol=atol, equal_nan=True,
                                   check_device=False, check_stride=False)
    except AssertionError as exc:
        return "; ".join([ln.strip() for ln in str(exc).splitlines() if ln.strip()][:4])
    return None


def is_ndarray(value: Any) -> bool:
    """A NumPy array; numpy is not imported for the question (where it is not imported, no array exists)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


def close_array(actual: Any, expected: Any, tol: Tolerance) -> str | None:
    """Two NumPy arrays as two tensors of theirs are compared: dtype and shape exactly, then the values
    by `close` (the case's tolerance, else torch's defaults for the dtype; NaN equal to NaN). An array
    torch cannot hold (object, strings, datetimes) element by element: an array as an array, a float
    by `close_float`, anything else exactly."""
    import torch  # lazy: start-up

    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, but eager's is {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {tuple(actual.shape)}, but eager's is {tuple(expected.shape)}"
    try:  # a copy: contiguous and writable, as from_numpy wants, and not sharing the output's memory
        a, e = torch.from_numpy(actual.copy()), torch.from_numpy(expected.copy())
    except TypeError:  # a dtype torch has no tensor of
        for k, (x, y) in enumerate(zip(actual.flat, expected.flat, strict=True)):
            if type(x) is not type(y):
                agree = False
            elif is_ndarray(x):
                agree = close_array(x, y, tol) is None
            elif isinstance(x, float):
                agree = close_float(x, y, tol)
            else:
                try:
                    agree = bool(x == y)
                except (TypeError, ValueError):  # an element whose == is no truth value
                    agree = False
            if not agree:
                return f"element {k} is {short(x)}, but eager's is {short(y)}"
        return None
    return close(a, e, tol)


def close_float(actual: float, expected: float, tol: Tolerance) -> bool:
    """Within the tolerance (float32's defaults when none is given), NaN equal to NaN."""
    rtol = tol.rtol if tol.rtol is not None else 1.3e-6
    atol = tol.atol if tol.atol is not None else 1e-5
    return abs(actual - expected) <= atol + rtol * abs(expected) or (math.isnan(actual) and math.isnan(expected))


def close_number(actual: Any, expected: Any, tol: Tolerance) -> str | None:
    """A Python float within the tolerance (`close_float`); a NumPy array by `close_array`; any other
    value exactly."""
    if is_ndarray(actual) and is_ndarray(expected):
        return close_array(actual, expected, tol)
    if not (isinstance(actual, float) and isinstance(expected, float)):
        return equal(actual, expected, tol)
    return None if close_float(actual, expected, tol) else ""


def dims(sizes: Any) -> tuple[int | str, ...]:
    """Sizes or strides as plain values, a nested int (a jagged dim: `j3`, `5*j3`) by its form with
    its number dropped: the number is a process-wide counter, so eager's and compiled's tensors of one
    jagged shape carry different ones. The ragged lengths themselves are compared as the offsets."""
    return tuple(d if isinstance(d, int) else re.sub(r"\bj\d+\b", "j", str(d)) for d in sizes)


def significant_strides(shape: Any, stride: Any) -> Any:
    """The strides that say something about the layout: a dim of size 1 has none (any stride
    reaches its one element; PyTorch's own tests compare strides this way), nor has an empty
    tensor. Anything but a shape and strides (an error's text) is kept as it is."""
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple(None if n == 1 else s for n, s in zip(shape, stride, strict=False))


def one_raised(actual: BaseException | None, expected: BaseException | None, tol: Tolerance) -> str | None:
    """One side raised where the other did not (what each raised is the mismatch's text)."""
    return None if (actual is None) == (expected is None) else ""


def same_base(actual: str | None, expected: str | None, tol: Tolerance) -> str | None:
    """The input an output is an autograd view of; an intermediate base is any base (See Note
    [View-ness of outputs] in compare.py for where this is asked)."""
    if (actual is None) != (expected is None):
        return ""
    return None if actual == expected or "<intermediate>" in (actual, expected) else ""


def same_keys(actual: Any, expected: Any, tol: Tolerance) -> str | None:
    """Dispatch key sets (included, excluded): the detail names the keys each set gained or lost."""
    if actual == expected:
        return None
    if actual is None or expected is None:
        return ""
    parts = []
    for which, a, e in (("included", actual[0], expected[0]), ("excluded", actual[1], expected[1])):
        parts += [f"{which} +{k}" for k in sorted(set(a) - set(e))] + [f"{which} -{k}" for k in sorted(set(e) - set(a))]
    return ", ".join(parts)


def show_keys(keys: Any) -> str:
    """A dispatch key sets pair with the Autocast* family (the same on every side) as one name."""
    if keys is None:
        return "absent"
    def one(names: tuple[str, ...]) -> str:
        kept = [k for k in names if not k.startswith("Autocast")]
        return ", ".join(kept + (["Autocast*"] if len(kept) < len(names) else []))
    return f"included ({one(keys[0])}), excluded ({one(keys[1])})"


@dataclass(frozen=True)
class About:
    """What tensor a check read (see Mismatch): placed on each mismatch the check makes."""

    role: str = ""
    subject: str = ""
    inner: tuple[str, ...] = ()


NOTHING_IN_PARTICULAR = About()


# What a reproducer reads to observe a check (its family): `tensor`, the tensor `t` alone; `leaf`, a gradient's leaf
# (`t.grad`); `before`, `t` against its version or storage before the call (`v0`, `s0`); `inputs`, `t` among the
# call's input tensors (`tensors`); `peers`, among those and the outputs before it; `modes`, the global modes right
# after the call; `outputs`, the return value (`out`, `outs`); `raised`, what the call, its backward or a caller
# action raised; `written`, what writing through each output did (the call's later checks are read after it);
# `pass`, the graphs compiled over a pass of calls; `nothing`, what plain torch cannot show (the full reproducer).
Reads = Literal["tensor", "leaf", "before", "inputs", "peers", "modes", "outputs", "raised", "written", "pass",
                "nothing"]


@dataclass(frozen=True)
class Check:
    """One oracle check: its id, what it is about, how a script observes it (`observe`, read as `reads`
    says) and holds two sides together (`compare`), how two sides are judged, the contracts it speaks to
    (`behaviors`, ids of conformance/behaviors; none: every contract, as dtype or a non-tensor output's
    value), which `ways` a difference of it can go (its directions) and the `words` an issue draft's title
    says it in."""

    id: str
    about: str
    observe: str
    compare: Compare = "equal"
    judge: Judge = equal
    behaviors: tuple[str, ...] = ()
    reads: Reads = "tensor"
    ways: Ways = PLAIN_WAYS
    words: Words = PLAIN_WORDS

    @property
    def phase(self) -> str:
        """The phase its reading opens: the call's later checks are read in it (a mismatch's phase)."""
        return WRITE_THROUGH if self.reads == "written" else ""

    @property
    def directions(self) -> tuple[str, ...]:
        """Every way a difference of it can go (what `direction` gives)."""
        return self.ways.every

    def direction(self, actual: str, expected: str) -> str:
        """Which way compiled's `actual` differs from `expected`, each as a mismatch shows it."""
        return self.ways.of(actual.strip(), expected.strip())

    def mismatch(self, where: str, expected: str, actual: str, detail: str = "", *, source: str = "eager",
                 of: About = NOTHING_IN_PARTICULAR) -> Mismatch:
        """A difference this check found (or, with `source`, a difference from what the case expects)."""
        return Mismatch(self.id, where, expected, actual, detail, source, role=of.role, subject=of.subject,
                        inner=of.inner)

    def judged(self, where: str, actual: Any, expected: Any, tol: Tolerance = EXACT, *,
               show: Callable[[Any], str] = short, of: About = NOTHING_IN_PARTICULAR) -> Mismatch | None:
        """The mismatch where compiled's `actual` and eager's `expected` differ by this check's judge,
        each side shown by `show`; None where they agree."""
        detail = self.judge(actual, expected, tol)
        return None if detail is None else self.mismatch(where, show(expected), show(actual), detail, of=of)


# the behaviours' ids (conformance/behaviors; core imports nothing of the harness: tests/core/test_core.py)
_ME, _RW, _SW = "mutation_epilogue", "runtime_wrapper", "subclass_wrapper"
_BU, _SR = "backward_unwrap", "scalar_recompile"


class C:
    """The registry: one attribute per check, so that code names a check it means, never a string."""

    TYPE = Check("type", "the tensor's class", "f'{type(t).__module__}.{type(t).__qualname__}'", behaviors=(_SW, _BU))
    DTYPE = Check("dtype", "dtype", "t.dtype")
    DEVICE = Check("device", "device", "str(t.device)")
    LAYOUT = Check("layout", "layout (strided, sparse, jagged)", "str(t.layout)")
    CONJUGATE_BIT = Check(
        "conjugate bit",
        "whether the tensor is a lazily conjugated view (view_as_real refuses one)",
        "t.is_conj()",
        behaviors=(_RW, _SW),
        ways=FlagWays(),
    )
    NEGATIVE_BIT = Check(
        "negative bit",
        "whether the tensor is a lazily negated view (an imag of a conjugate)",
        "t.is_neg()",
        behaviors=(_RW, _SW),
        ways=FlagWays(),
    )
    INFERENCE_TENSOR = Check(
        "inference tensor",
        "whether the tensor is an inference tensor (autograd and in-place writes outside inference mode refuse one)",
        "t.is_inference()",
        behaviors=(_RW,),
        ways=FlagWays(),
    )
    SHAPE = Check(
        "shape", "sizes (a jagged dim's nested int without its number)", "dims(t.shape)", behaviors=(_ME, _SW)
    )
    STRIDE = Check(
        "stride",
        "strides of the dims longer than 1 (None for a dim of size 1: it has no layout)",
        "significant_strides(dims(t.shape), dims(t.stride()))",
        behaviors=(_ME, _SW),
    )
    STRIDE_EVERY_DIM = Check(
        "stride (every dim)",
        "strides of every dim, a size-1 dim's too (expect.strides: all, as upstream's "
        "assertEqual(out.stride(), ref.stride()))",
        "dims(t.stride())",
        behaviors=(_ME, _SW),
    )
    STORAGE_OFFSET = Check("storage_offset", "storage offset", "t.storage_offset()", behaviors=(_ME,))
    REQUIRES_GRAD = Check("requires_grad", "requires_grad", "t.requires_grad", behaviors=(_ME,), ways=FlagWays(),
                          words=present_words("{where} requires grad"))
    IS_LEAF = Check("is_leaf", "is_leaf", "t.is_leaf", behaviors=(_ME,), ways=FlagWays(),
                    words=present_words("{where} is a leaf"))
    RETAINS_GRAD = Check(
        "retains_grad", "whether a non-leaf keeps its .grad (retain_grad())", "t.retains_grad", behaviors=(_RW, _BU),
        ways=FlagWays(),
    )
    VALUES = Check(
        "values", "values, within the case's tolerance", "t.detach()", "close", close, behaviors=(_ME, _SW, _BU, _SR),
        words=Words("wrong values in {where}"),
    )
    STORAGE_SIZE = Check(
        "storage size",
        "elements in the storage the tensor lives in",
        "t.untyped_storage().nbytes() // t.element_size()",
        behaviors=(_ME,),
        words=Words("{where}'s storage has another size than eager's"),
    )
    STORAGE_CONTENTS = Check(
        "storage contents",
        "every value in the storage the tensor lives in (writes outside its geometry)",
        "torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage()).detach()",
        "close",
        close,
        behaviors=(_ME,),
        words=Words("wrong values beside {where} in its storage"),
    )
    INNER_TENSORS = Check(
        "inner tensors", "a subclass's inner tensors", "sorted(type(t).__tensor_flatten__(t)[0])", behaviors=(_SW,),
        words=Words("{where} has other inner tensors than eager's"),
    )
    VALUE = Check("value", "a non-tensor output", "t", judge=close_number,
                  words=Words("{where} (a Python number) differs from eager's"))
    VERSION_MOVED = Check(
        "_version moved",
        "whether the version counter moved during the call",
        "t._version - v0",
        "moved",
        moved,
        behaviors=(_ME,),
        reads="before",
        ways=FlagWays(),
        words=flag_words("{where}'s version counter moves where eager's stays",
                          "{where}'s version counter stays where eager's moves"),
    )
    VERSION_DELTA = Check(
        "_version delta", "how far the version counter moved during the call", "t._version - v0", behaviors=(_ME,),
        reads="before", ways=BumpWays(),
        words=Words("{where}'s version counter moves less far than eager's",
                    ((BumpWays.MORE, "{where}'s version counter moves further than eager's"),)),
    )
    STORAGE_SWAPPED = Check(
        "storage swapped (set_)",
        "whether the tensor lives in another storage after the call",
        "t.untyped_storage() is not s0",
        behaviors=(_ME,),
        reads="before",
        ways=FlagWays(),
        words=present_words("{where} ends in another storage"),
    )
    SHARES_STORAGE_WITH = Check(
        "shares storage with",
        "the other inputs and outputs living in the same storage",
        "sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None "
        "and storage_key(x) == storage_key(t))",
        behaviors=(_ME, _RW),
        reads="peers",
        words=Words("{where} shares its storage with other tensors than eager's does"),
    )
    IS_THE_INPUT_OBJECT = Check(
        "is the input object",
        "whether an output is an input object itself",
        "next((n for n, x in tensors.items() if x is t), None)",
        behaviors=(_RW,),
        reads="inputs",
        words=Words("{where} is not the same object as in eager"),
    )
    VIEW_OF = Check(
        "view of (_base)",
        "which input an output is an autograd view of",
        "None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), "
        "'<intermediate>')",
        judge=same_base,
        behaviors=(_RW,),
        reads="inputs",
        ways=ViewWays(),
        words=Words("{where} is {direction}", tuple(
            (d, "{where} is " + d.removeprefix("compiled ").replace(", eager ", " where eager gives "))
            for d in ViewWays.every)),
    )
    EXISTS = Check(
        "exists", "whether a tensor exists after the call (optimizer state)", "t is not None", behaviors=(_RW,),
        reads="nothing", ways=FlagWays(), words=present_words("{where} exists"),
    )
    GRAD = Check(
        ".grad", "whether a leaf has a gradient after the backward", "t.grad is not None", behaviors=(_BU,),
        reads="leaf", ways=PresenceWays(),
        words=Words("an input's leaf gets no .grad where eager computes one",
                    ((PresenceWays.HAS, "an input's leaf gets a .grad where eager leaves it None"),)),
    )
    GRAD_MODE = Check("grad mode", "grad mode right after the call", "modes[0]", behaviors=(_RW,), reads="modes",
                      ways=FlagWays(), words=MODE_WORDS)
    INFERENCE_MODE = Check("inference mode", "inference mode right after the call", "modes[1]", behaviors=(_RW,),
                           reads="modes", ways=FlagWays(), words=MODE_WORDS)
    AUTOCAST = Check("autocast", "autocast right after the call", "modes[2]", behaviors=(_RW,), reads="modes",
                     words=Words("the autocast state after the call differs from eager's"))
    DISPATCH_KEYS = Check(
        "dispatch keys",
        "the thread's dispatch keys (included, excluded) right after the call: one left "
        "behind breaks every later compile",
        "modes[3]",
        judge=same_keys,
        behaviors=(_RW,),
        reads="modes",
    )
    STRUCTURE = Check("structure", "the containers around the outputs", "output_structure(out)", "special",
                      behaviors=(_RW,), reads="outputs",
                      words=Words("the outputs come back in other containers than eager's"))
    NUMBER_OF_OUTPUTS = Check("number of outputs", "how many outputs", "len(outs)", behaviors=(_RW,), reads="outputs",
                              words=Words("returns another number of outputs than eager"))
    EXCEPTION = Check(
        "exception",
        "what the call (or its backward, or a caller action) raised",
        "raised",
        "special",
        one_raised,
        behaviors=(_RW, _BU),
        reads="raised",
        ways=RaiseWays(),
        words=Words("raises {kind} where eager runs",
                    ((RaiseWays.DOES_NOT, "does not raise the {kind} eager raises"),
                     (RaiseWays.OTHERWISE, "raises {kind} where eager raises otherwise")), verb="raises"),
    )
    WRITE_THROUGH = Check(
        "in-place write through outputs",
        "whether writing through each output works",
        "written",
        "special",
        behaviors=(_RW,),
        reads="written",
        words=Words("writing in place through {where} behaves otherwise than in eager"),
    )
    GRAPHS_COMPILED = Check(
        "graphs compiled", "graphs the backend compiled over the pass", "len(graphs)", "special", behaviors=(_SR,),
        reads="pass", ways=CountWays(),
        words=Words("compiles {direction} than the contract allows",
                    ((CountWays.MORE, "compiles more graphs than the contract allows"),
                     (CountWays.FEWER, "compiles fewer graphs than the contract allows")), verb="compiles"),
    )
    INTERNALS_PROBE = Check(
        "internals probe", "the generated wrapper against the reference (--strict-internals)", "", "special",
        reads="nothing",
    )


CHECKS: dict[str, Check] = {c.id: c for c in vars(C).values() if isinstance(c, Check)}


def by_id(check_id: str) -> Check | None:
    """The check a record's mismatch names by its id (None for an id no check declares: an error's)."""
    return CHECKS.get(check_id)


@dataclass(frozen=True)
class Allowance:
    """A difference that an entry point documents or intends, declared beside its check: where it
    applies, the check asks only what the contract promises there and the item passes (its record
    lists what was allowed). `entry` says where (a backend label -> bool); `accepts` takes the two
    sides as the mismatch shows them (actual, expected)."""

    id: str
    check: Check
    why: str
    link: str
    accepts: Callable[[str, str], bool]
    entry: Callable[[str], bool] = lambda backend: True

    def allows(self, m: Mismatch, backend: str) -> bool:
        return m.check == self.check.id and self.entry(backend) and self.accepts(m.actual, m.expected)


_FLAT_TUPLE = re.compile(r"tuple\((?:\*(?:, \*)*)?\)")


def _flat_tuple_as_list(actual: str, expected: str) -> bool:
    return _FLAT_TUPLE.fullmatch(expected) is not None and actual == "list" + expected.removeprefix("tuple")


def _more_bumps(actual: str, expected: str) -> bool:
    try:
        return int(actual) > int(expected) >= 1
    except ValueError:
        return False


ALLOWANCES: tuple[Allowance, ...] = (
    Allowance("aot_function flat list", C.STRUCTURE,
              "aot_function returns a program's flat tuple of outputs as the compiled function's list "
              "(PytreeThunk.unflatten skips unflattening a flat tuple/list spec)",
              "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_functorch/_aot_autograd/utils.py",
              _flat_tuple_as_list, entry=lambda backend: backend.startswith("aot_function") or backend == "aot_module"),
    Allowance("aot_module_simplified flat list", C.STRUCTURE,
              "aot_module_simplified's compiled forward returns the graph's outputs as a list (its graph must "
              "return a tuple, 'so that we can avoid pytree processing of the outputs')",
              "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_functorch/aot_autograd.py",
              _flat_tuple_as_list, entry=lambda backend: backend == "aot_module_simplified"),
    Allowance("extra version bumps", C.VERSION_DELTA,
              "a version counter that moves more than eager's where eager's moves too: 'incrementing the version "
              "counter multiple times for a single inplace operation is not problematic'",
              "https://docs.pytorch.org/docs/stable/generated/torch.autograd.graph.increment_version.html",
              _more_bumps),
)


def allowance_for(m: Mismatch, backend: str) -> Allowance | None:
    """The declared allowance that accepts this mismatch on this backend, if any."""
    return next((a for a in ALLOWANCES if a.allows(m, backend)), None)
