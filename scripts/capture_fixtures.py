"""Regenerate tests/resources/captured/<torch version>/ from the installed torch.

    python scripts/capture_fixtures.py [--out tests/resources/captured]

Each program is compiled on CPU with ``aot_eager`` (``dynamic=True`` where marked, or
``aot_function`` with nop compilers for metadata mutations) under
:func:`conformance.probe.capture.capture_generated_sources`; one file per captured artifact:
``<program>__<artifact>__<n>.py``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from functorch.compile import aot_function, nop
from torch.testing._internal.two_tensor import TwoTensor

from conformance.probe.capture import capture_generated_sources


def _mutation_2(a: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    a.mul_(2)
    c.add_(1)
    return a + c


def _metadata_mutation(x: torch.Tensor) -> torch.Tensor:
    x.t_()
    return x * 2


def _leaf_detach(x: torch.Tensor) -> torch.Tensor:
    x.detach().mul_(2)
    return x * 3


def _graph_order(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    # dynamo orders graph inputs by first use: [a, c, b]
    a.mul_(2)
    c.add_(b)
    return a + c


def _subclass_dynamic(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # with dynamic=True, graph inputs are [s0, s1, x, y] and x's sizes are passed as symints
    return x * y, y.sum()


PROGRAMS: dict[str, tuple[Callable[..., Any], Callable[[], list[Any]], str]] = {
    "mutation_2": (
        _mutation_2,
        lambda: [
            torch.ones(3, requires_grad=True).clone(),
            torch.ones(3, requires_grad=True).clone(),
        ],
        "compile",
    ),
    "output_alias": (
        lambda x: (x.view(-1), x * 2),
        lambda: [torch.ones(2, 3, requires_grad=True)],
        "compile",
    ),
    "output_alias_second": (
        lambda x: (x * 2, x.view(-1)),
        lambda: [torch.ones(2, 3, requires_grad=True)],
        "compile",
    ),
    "leaf_detach_mutation": (_leaf_detach, lambda: [torch.ones(3, requires_grad=True)], "compile"),
    "metadata_mutation_aot_function": (
        _metadata_mutation,
        lambda: [torch.ones(2, 3, requires_grad=True).clone()],
        "aot",
    ),
    "subclass_twotensor": (
        lambda x: (x.sin() * 2).sum(),
        lambda: [TwoTensor(torch.ones(3), torch.ones(3)).requires_grad_()],
        "compile",
    ),
    "mutation_graph_order": (
        _graph_order,
        lambda: [
            torch.ones(4, requires_grad=True).clone(),
            torch.ones(4, requires_grad=True),
            torch.ones(4, requires_grad=True).clone(),
        ],
        "compile",
    ),
    "subclass_dynamic": (
        _subclass_dynamic,
        lambda: [TwoTensor(torch.ones(4, 3), torch.ones(4, 3)), torch.ones(4, 3)],
        "compile-dynamic",
    ),
}
KEEP = (
    "mutation_epilogue",
    "runtime_wrapper_orchestration",
    "output_alias_wrapper",
    "subclass_wrapper",
    "backward_subclass_unwrap",
)


def regenerate(root: Path) -> Iterator[Path]:
    out_dir = root / torch.__version__.split("+")[0]
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (program, make_args, entry) in PROGRAMS.items():
        torch._dynamo.reset()
        with capture_generated_sources() as cap:
            if entry == "aot":
                fn = aot_function(program, nop, nop)
            else:
                fn = torch.compile(program, backend="aot_eager", dynamic=entry == "compile-dynamic")
            out = fn(*make_args())
            first = out[0] if isinstance(out, tuple) else out
            if first.requires_grad:
                first.sum().backward()
        counts: dict[str, int] = {}
        for art in cap.artifacts:
            if art.name not in KEEP:
                continue
            counts[art.name] = counts.get(art.name, 0) + 1
            path = out_dir / f"{name}__{art.name}__{counts[art.name]}.py"
            path.write_text(art.source, encoding="utf-8")
            yield path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/resources/captured"))
    for path in regenerate(parser.parse_args().out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
