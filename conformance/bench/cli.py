"""``torch-conformance bench``: the four per-call tables, ``compare`` and ``harness``."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.bench.document import SCHEMA_ID, BenchDocument
from conformance.bench.report import compare, markdown, read, write_outputs
from conformance.bench.timing import Settings
from conformance.data.corpus import root_of
from conformance.options import BY_NAME
from conformance.run.fingerprint import build_fingerprint

__all__ = ["add_parser", "cmd_bench"]

DEFAULT_OUT = Path("results/bench")
EXPLORE_CONFIGS = "aot_eager:inference,aot_eager:training,inductor:inference,inductor:training,none:inference"


def add_parser(sub: Any) -> None:
    """Register ``bench`` on the CLI's subparsers (``sub`` is argparse's _SubParsersAction)."""
    p: argparse.ArgumentParser = sub.add_parser(
        "bench",
        help="per-call benchmarks of the build's generated wrappers beside the published figures; "
        "`bench compare A.json B.json`; `bench harness` (the harness's own cost)",
        description="Measure, on the installed build, the four tables of the upstream change descriptions "
        "(runtime-wrapper orchestration, backward unwrap, subclass wrapper, mutation epilogue) and write "
        "OUT/bench.json, bench.md, bench.svg. Not a test: figures, with their spread.",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--only", metavar="TABLES", help="comma-separated: runtime_wrapper, backward_unwrap, "
                   "subclass_wrapper, mutation_epilogue (default: all)")
    p.add_argument("--repeat", type=int, help="repeats per form (default 21; the mutation table takes 3x)")
    p.add_argument("--target-ms", type=float, help="duration of one repeat in ms (default 20)")
    p.add_argument("--quick", action="store_true", help="tiny repeats: checks the machinery, figures meaningless")
    p.set_defaults(func=cmd_bench, bench_command=None, needs_torch=True)
    bsub = p.add_subparsers(dest="bench_command", metavar="[compare|harness|explore]")

    c = bsub.add_parser("compare", help="before/after of two bench.json files (e.g. two builds)")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--out", type=Path, help="also write the Markdown (and FILE.json with the rows) here")
    c.set_defaults(func=cmd_compare, needs_torch=False)

    h = bsub.add_parser("harness", help="the harness's own cost over the case corpus: overhead serial and "
                        "with -n, speed-up of -n, warm-cache rerun")
    h.add_argument("--cases", type=Path, default=None, help=BY_NAME["cases"].help)
    h.add_argument("--runs", default="serial,parallel,warm", help="which runs, in order (default "
                   "serial,parallel,warm)")
    h.add_argument("-n", dest="workers", type=int, default=2, help="workers of the parallel run (default 2)")
    h.add_argument("--run-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for every `torch-conformance run` (repeatable), e.g. --run-arg=--devices=cpu")
    h.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    h.set_defaults(func=cmd_harness)

    e = bsub.add_parser("explore", help="the explorer's throughput: programs per hour per core, and the share of "
                        "the time spent compiling, per entry point and mode")
    e.add_argument("--seconds", type=float, default=60.0, help="seconds per configuration (default 60)")
    e.add_argument("--configs", default=EXPLORE_CONFIGS,
                   help=f"backend:mode pairs (default {EXPLORE_CONFIGS}: both lanes, both modes, and the control)")
    e.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    e.set_defaults(func=cmd_explore_bench)


def cmd_explore_bench(args: argparse.Namespace) -> int:
    """One fixed-seed exploration per configuration, in this process (one core)."""
    from conformance.explore.engine import Explorer  # lazy: start-up

    rows = []
    for config in args.configs.split(","):
        backend, _, mode = config.partition(":")
        with tempfile.TemporaryDirectory() as tmp:
            ex = Explorer(Path(tmp), backends=(backend,), modes=(mode or "inference",), time_budget=args.seconds)
            ex.explore()
        s = ex.stats
        rows.append({"backend": backend, "mode": mode or "inference", "programs": s.programs,
                     "seconds": round(s.seconds, 1), "per_hour_per_core": s.per_hour,
                     "compile_share": round(s.compile_share, 3), "torch_share": round(s.torch_share, 3),
                     "valid_share": round(s.valid_share, 3)})
        print(f"{backend:>10} {mode or 'inference':<9} {rows[-1]['per_hour_per_core']:>9} programs/hour/core  "
              f"in torch {rows[-1]['torch_share']:.0%} of the time (compiling {rows[-1]['compile_share']:.0%})  "
              f"valid {rows[-1]['valid_share']:.0%}  "
              f"({s.programs} programs in {s.seconds:.0f} s)", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"fingerprint": build_fingerprint(), "rows": rows}
    (args.out / "explore.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    print(f"wrote {args.out / 'explore.json'}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from conformance.bench.suites import TABLE_IDS, run_tables  # lazy: start-up

    settings = Settings.quick() if args.quick else Settings()
    if args.repeat:
        settings = Settings(args.repeat, settings.target_s, settings.warmup_s, settings.min_warmup,
                            settings.max_number)
    if args.target_ms:
        settings = Settings(settings.repeat, args.target_ms / 1000, settings.warmup_s, settings.min_warmup,
                            settings.max_number)
    only = [t.strip() for t in args.only.split(",")] if args.only else None
    unknown = [t for t in only or () if t not in TABLE_IDS]
    if unknown:
        print(f"--only: unknown table(s) {', '.join(unknown)}; choose from {', '.join(TABLE_IDS)}", file=sys.stderr)
        return 2
    import torch  # lazy: start-up

    started = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    t0 = time.perf_counter()
    tables = run_tables(settings, only, progress=lambda s: print(s, file=sys.stderr, flush=True))
    doc = BenchDocument(
        schema=SCHEMA_ID,
        fingerprint=build_fingerprint(),
        settings={"repeat": settings.repeat, "target_s": settings.target_s, "warmup_s": settings.warmup_s,
                  "quick": bool(args.quick), "torch_threads": torch.get_num_threads()},
        started=started,
        elapsed_s=time.perf_counter() - t0,
        tables=[t.to_json() for t in tables],
    )
    paths = write_outputs(doc, args.out)
    sys.stdout.write(markdown(doc))
    print(f"\nwrote {', '.join(str(p) for p in paths.values())}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    try:
        a, b = read(args.before), read(args.after)
    except (OSError, ValueError) as exc:
        print(f"bench compare: {exc}", file=sys.stderr)
        return 2
    text, rows = compare(a, b)
    sys.stdout.write(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        data = {"rows": [r.model_dump(mode="json", exclude_unset=True) for r in rows]}
        args.out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


def cmd_harness(args: argparse.Namespace) -> int:
    from conformance.bench.harness import harness_markdown, measure_harness  # lazy: start-up

    args.cases = root_of(args.cases)
    if not args.cases.is_dir():
        print(f"--cases {args.cases}: no such folder", file=sys.stderr)
        return 2
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    summary = measure_harness(args.cases, args.out, runs=runs, workers=args.workers, extra=args.run_arg,
                              say=lambda s: print(s, file=sys.stderr, flush=True))
    sys.stdout.write(harness_markdown(summary))
    return 0
