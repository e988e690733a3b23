"""What `validate` checks with torch at hand, beyond the schema: the classes block runs, every
class a case names resolves to the right kind of class, every backend is registered here.

The schema (conformance/schema) checks what the file says; these checks what the build makes of
it, so they run only where torch imports, and report like the schema: `path:line: field: message`.
A run makes the same checks (but for backends: a backend this build lacks is a skip there, with
its reason) when it collects the case, so that a wrong class is a line error, not a failed item.
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.core.build import load_classes, resolve_class
from conformance.core.entry import AOT_FUNCTION
from conformance.core.mismatch import CaseBroken
from conformance.loader import CaseError, LoadedCase, field_name
from conformance.schema.case import class_refs


def torch_problems(lc: LoadedCase, *, backends: bool) -> list[CaseError]:
    import torch

    errors: list[CaseError] = []
    try:
        classes = load_classes(lc.classes_source, lc.classes_filename)
    except CaseBroken as exc:
        return [CaseError(lc.display_path, exc.line or lc.line_of("classes"), "classes", str(exc))]
    bases: dict[str, tuple[type, str]] = {
        "subclass": (torch.Tensor, "subclass"), "module": (torch.nn.Module, "module"),
        "optimizer": (torch.optim.Optimizer, "optimizer"),
    }
    for loc, ref in class_refs(lc.case):
        kind = str(loc[-2])
        base, what = bases.get(kind, bases["subclass"])  # subclass specs nest under args/a/b/parameters
        try:
            resolve_class(ref, classes, base, what)
        except CaseBroken as exc:
            errors.append(CaseError(lc.display_path, lc.line_of(*loc), field_name(loc), str(exc)))
    if backends:
        from conformance.selection import registered_backends

        known = registered_backends()
        for i, name in enumerate(lc.case.backends):
            if name != AOT_FUNCTION and name not in known:
                errors.append(CaseError(lc.display_path, lc.line_of("backends", i), f"backends[{i}]",
                                        f"{name!r} is not a torch.compile backend registered on this build "
                                        f"(registered: {', '.join(known)}); a run skips it with this reason"))
    return errors


def checker(*, backends: bool) -> Callable[[LoadedCase], list[CaseError]]:
    def check(lc: LoadedCase) -> list[CaseError]:
        return torch_problems(lc, backends=backends)

    return check
