"""Every oracle check, declared once: its id (the word a mismatch carries), what it compares, and
how a reproducer observes the same thing in plain torch code.

The judges are in compare.py and call.py (compiled against eager, a `Mismatch` per difference);
a reproducer (conformance/reproducer/short.py) renders the failing one from this table: `observe`
is a Python expression of what one side shows, in the names a reproducer has (`t`: the tensor the
mismatch's subject names; `out`: the call's return value; `outs`: it flattened; `tensors`: the
call's input tensors by name; `v0`/`s0`: the subject's version and storage before the call;
`modes`: grad mode, inference mode and autocast on the CPU and CUDA right after the call), and
`compare` how the two sides' observations are
held together: equal, close (assert_close within the case's tolerance), moved (both changed or
neither), or special (the reproducer's own code: exceptions, compile counts, the write-through).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Compare = Literal["equal", "close", "moved", "special"]


@dataclass(frozen=True)
class Check:
    id: str
    about: str
    observe: str
    compare: Compare = "equal"


CHECKS: dict[str, Check] = {c.id: c for c in (
    Check("type", "the tensor's class", "f'{type(t).__module__}.{type(t).__qualname__}'"),
    Check("dtype", "dtype", "t.dtype"),
    Check("device", "device", "str(t.device)"),
    Check("shape", "sizes", "tuple(t.shape)"),
    Check("stride", "strides", "t.stride()"),
    Check("storage_offset", "storage offset", "t.storage_offset()"),
    Check("requires_grad", "requires_grad", "t.requires_grad"),
    Check("is_leaf", "is_leaf", "t.is_leaf"),
    Check("values", "values, within the case's tolerance", "t.detach()", "close"),
    Check("storage size", "elements in the storage the tensor lives in",
          "t.untyped_storage().nbytes() // t.element_size()"),
    Check("storage contents", "every value in the storage the tensor lives in (writes outside its geometry)",
          "torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage()).detach()", "close"),
    Check("inner tensors", "a subclass's inner tensors", "sorted(type(t).__tensor_flatten__(t)[0])"),
    Check("value", "a non-tensor output", "t"),
    Check("_version moved", "whether the version counter moved during the call", "t._version - v0", "moved"),
    Check("_version delta", "how far the version counter moved during the call", "t._version - v0"),
    Check("storage swapped (set_)", "whether the tensor lives in another storage after the call",
          "t.untyped_storage() is not s0"),
    Check("shares storage with", "the other inputs and outputs living in the same storage",
          "sorted(n for n, x in tensors.items() if x is not t and storage_key(x) is not None "
          "and storage_key(x) == storage_key(t))"),
    Check("is the input object", "whether an output is an input object itself",
          "next((n for n, x in tensors.items() if x is t), None)"),
    Check("view of (_base)", "which input an output is an autograd view of",
          "None if t._base is None else next((n for n, x in tensors.items() if x is t._base or x._base is t._base), "
          "'<intermediate>')"),
    Check("exists", "whether a tensor exists after the call (optimizer state)", "t is not None"),
    Check(".grad", "whether a leaf has a gradient after the backward", "t.grad is not None"),
    Check("grad mode", "grad mode right after the call", "modes[0]"),
    Check("inference mode", "inference mode right after the call", "modes[1]"),
    Check("autocast", "autocast right after the call", "modes[2]"),
    Check("structure", "the containers around the outputs", "structure(out)", "special"),
    Check("number of outputs", "how many outputs", "len(outs)"),
    Check("exception", "what the call (or its backward, or a caller action) raised", "raised", "special"),
    Check("in-place write through outputs", "whether writing through each output works", "written", "special"),
    Check("graphs compiled", "graphs the backend compiled over the pass", "len(graphs)", "special"),
    Check("internals probe", "the generated wrapper against the reference (--strict-internals)", "", "special"),
)}
