"""Benchmark (not a test): interpreted vs codegen per call, beside the published figures.

    python -m reference_impl.bench [--repeat 7] [--number 20000]

Rows are the seeds' tables: runtime-wrapper orchestration (aliases/mutations/args) with a
no-op compiled function and no-op epilogues, so only orchestration is timed; and the
backward unwrap over N plain saved tensors.
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import torch

from reference_impl import backward_unwrap as bu
from reference_impl import runtime_wrapper as rw

ORCHESTRATION = [((0, 0, 5), 0.35, 0.17), ((2, 0, 5), 0.41, 0.17), ((0, 2, 5), 0.74, 0.25),
                 ((3, 1, 10), 0.79, 0.25), ((5, 3, 20), 0.93, 0.32)]
UNWRAP = [(5, 0.78, 0.14), (10, 1.43, 0.15), (20, 2.70, 0.16), (50, 6.61, 0.20)]


def _time(fn: Callable[[], Any], repeat: int, number: int) -> tuple[float, float]:
    runs = [t / number * 1e6 for t in timeit.repeat(fn, repeat=repeat, number=number)]
    return statistics.median(runs), max(runs) - min(runs)


def bench_orchestration(aliases: int, mutations: int, nargs: int, repeat: int,
                        number: int) -> tuple[tuple[float, float], tuple[float, float]]:
    aliased = tuple(rw.OutputSpec(rw.AliasKind.IS_INPUT, i) for i in range(aliases))
    outputs = (*aliased, rw.OutputSpec())
    meta = rw.RuntimeWrapperMeta(num_inputs=nargs, mutated_runtime=tuple(range(mutations)),
                                 outputs=outputs)
    args = [torch.empty(0) for _ in range(nargs)]
    results = [torch.empty(0)] * meta.expected_outputs

    def apply(o: Any, u: Any) -> None:
        return None

    def replay(o: Any, f: Any) -> Any:
        return f

    compiled = rw.compile_runtime_wrapper(meta, apply_mutations=apply, replay_aliases=replay)

    def fn(a: list[Any]) -> list[Any]:
        return results

    def before() -> Any:
        return rw.run_runtime_wrapper_interpreted(meta, fn, list(args), apply_mutations=apply,
                                                  replay_aliases=replay)

    def after() -> Any:
        return compiled(fn, nullcontext, lambda: None, list(args))

    return _time(before, repeat, number), _time(after, repeat, number)


def bench_unwrap(nargs: int, repeat: int, number: int) -> tuple[tuple[float, float], ...]:
    args = [torch.empty(0) for _ in range(nargs)]
    unwrap = bu.compile_backward_unwrap(bu.BackwardUnwrapMeta((bu.SavedKind.TENSOR,) * nargs))
    return (_time(lambda: bu.unwrap_interpreted(args), repeat, number),
            _time(lambda: unwrap(args), repeat, number))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="interpreted vs codegen, µs/call")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=20000)
    ns = parser.parse_args(argv)
    print("RuntimeWrapper orchestration, µs/call: median (spread) | published")
    print(f"{'aliases/mut/args':<18}{'interpreted':>20}{'codegen':>20}{'ratio':>8}"
          f"{'pub. before':>13}{'pub. after':>12}")
    for (a, m, n), pub_b, pub_a in ORCHESTRATION:
        (bm, bs), (am, as_) = bench_orchestration(a, m, n, ns.repeat, ns.number)
        print(f"{f'{a}/{m}/{n}':<18}{f'{bm:.2f} ({bs:.2f})':>20}{f'{am:.2f} ({as_:.2f})':>20}"
              f"{bm / am:>7.1f}x{pub_b:>13.2f}{pub_a:>12.2f}")
    print("\nBackward unwrap, µs/call")
    for n, pub_b, pub_a in UNWRAP:
        (bm, bs), (am, as_) = bench_unwrap(n, ns.repeat, ns.number)
        print(f"{f'{n} args':<18}{f'{bm:.2f} ({bs:.2f})':>20}{f'{am:.2f} ({as_:.2f})':>20}"
              f"{bm / am:>7.1f}x{pub_b:>13.2f}{pub_a:>12.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
