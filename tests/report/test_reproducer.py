"""Reproducers: the standalone builders match conformance.inputs bit for bit on the whole corpus,
and a generated script, run with plain `python`, prints the mismatch and exits 1, or exits 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from conformance import inputs as harness
from conformance.loader import LoadedCase, load_all
from conformance.report import standalone
from conformance.reproducer import case_data

ROOT = Path(__file__).parents[2]
CORPUS, _ = load_all([ROOT / "cases", ROOT / "tests" / "resources" / "cases" / "valid"], ROOT / "cases")


def _storage_bytes(t: torch.Tensor) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage())


def _same_tensor(where: str, a: torch.Tensor, b: torch.Tensor) -> None:
    assert type(a) is type(b), where
    facts = lambda t: (t.dtype, t.device, t.shape, t.requires_grad, t.is_leaf, type(t.grad_fn).__name__,  # noqa: E731
                       t._base is not None)
    assert facts(a) == facts(b), where
    if hasattr(type(a), "__tensor_flatten__") and type(a) is not torch.Tensor:
        names, _ = type(a).__tensor_flatten__(a)
        for n in names:
            _same_tensor(f"{where}.{n}", getattr(a, n), getattr(b, n))
        return
    assert (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset()), where
    assert torch.equal(_storage_bytes(a), _storage_bytes(b)), f"{where}: storage bytes differ"


def _aliasing(named: dict[str, Any]) -> list[list[str]]:
    groups: dict[int, list[str]] = {}
    for name, t in harness.tensors_of(named).items():
        if type(t) is torch.Tensor:
            groups.setdefault(t.untyped_storage().data_ptr(), []).append(name)
    return sorted(groups.values())


def _cpu_buildable(lc: LoadedCase) -> bool:
    return "device:" not in lc.case.model_dump_json() or '"device":null' in lc.case.model_dump_json()


@pytest.mark.parametrize("lc", [c for c in CORPUS if _cpu_buildable(c)], ids=lambda c: c.id)
def test_standalone_builders_match_the_harness_bit_for_bit(lc: LoadedCase) -> None:
    data = case_data(lc)
    points = harness.call_points(lc.case)
    mine = standalone.call_points(data)
    assert [p.label for p in points] == [p[2] for p in mine]
    for mode in lc.case.modes:
        for point, my_point in zip(points, mine, strict=True):
            try:
                ref = harness.build_inputs(lc.case, "cpu", mode, point)
            except Exception as exc:  # the harness cannot build it either: the copy must fail alike
                with pytest.raises(type(exc)):
                    standalone.build_inputs(data, "cpu", mode, my_point)
                continue
            got = standalone.build_inputs(data, "cpu", mode, my_point)
            assert list(ref.named) == list(got.named)
            for name, value in ref.named.items():
                other = got.named[name]
                if isinstance(value, torch.nn.Module):
                    assert isinstance(other, torch.nn.Module)
                    for (pn, p), (qn, q) in zip((*value.named_parameters(), *value.named_buffers()),
                                                (*other.named_parameters(), *other.named_buffers()), strict=True):
                        assert pn == qn
                        _same_tensor(f"{mode} {point.label} {name}.{pn}", p, q)
                elif isinstance(value, torch.Tensor):
                    _same_tensor(f"{mode} {point.label} {name}", value, other)
                else:
                    assert (type(value), value) == (type(other), other)
            assert [list(ref.named).index(next(n for n, v in ref.named.items() if v is a)) for a in ref.args] == [
                list(got.named).index(next(n for n, v in got.named.items() if v is a)) for a in got.args]
            assert _aliasing(ref.named) == _aliasing(got.named)
            assert list(ref.grad_leaves) == list(got.grad_leaves)
            assert ref.dynamic_dims == got.dynamic_dims
