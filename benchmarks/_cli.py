"""``python -m benchmarks run``: every figure, written to ``results.json`` and ``RESULTS.md``.

``python -m benchmarks render`` rewrites ``RESULTS.md`` from an existing ``results.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.instruments.progress import say

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = Path(__file__).resolve().parent


def _ints(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give comma-separated integers, e.g. 10000,100000"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every value must be a positive integer")
    return values


def _engine_count(text: str) -> tuple[str, int]:
    engine, sep, count = text.partition("=")
    if not sep or not engine.strip() or not count.strip().isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give ENGINE=N with N a positive integer, e.g. lite=40")
    return engine.strip(), int(count)


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one engine, e.g. lite,lite-2.5.1")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="measure everything and write results.json and RESULTS.md")
    run.add_argument("--sizes", type=_ints, default=[10_000, 100_000], help="corpus sizes (chunks)")
    run.add_argument("--queries", type=int, default=200, help="measured queries per size")
    run.add_argument("--warmup", type=int, default=10, help="warm-up queries per size, not measured")
    run.add_argument(
        "--engine-queries",
        type=_engine_count,
        action="append",
        default=[],
        metavar="ENGINE=N",
        help="measured queries for one engine instead of --queries (repeatable), e.g. lite=40: Lite 3.x "
        "is pure Python, and on a busy machine 200 queries of 5 variants at 100k take hours there",
    )
    run.add_argument(
        "--engines",
        type=_names,
        default=["lite", "lite-2.5.1"],
        help="engines measured side by side: lite (Milvus Lite 3.x of this venv), lite-2.5.1 (the C++ "
        "core, installed into the kit's engine cache); default both",
    )
    run.add_argument(
        "--milvus",
        action="append",
        default=[],
        metavar="uri:URI",
        help="also measure on this engine (repeatable)",
    )
    run.add_argument(
        "--note",
        default="",
        help="what else was running on the machine, recorded in RESULTS.md beside the load average",
    )
    run.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="let the scheduler place the client and the engine while queries are timed (default: the "
        "client on the first core, the engine on the others, as beside a remote server)",
    )
    run.add_argument(
        "--peers",
        type=_names,
        default=["langchain", "llamaindex", "haystack"],
        help="peer libraries timed on the lite-2.5.1 server beside a bare hybrid_search, each in the venv "
        "examples/peers/run builds (default all three); a venv that cannot be built is skipped, saying why",
    )
    run.add_argument("--no-peers", dest="peers", action="store_const", const=[], help="do not time the peers")
    run.add_argument("--index", choices=("HNSW", "FLAT"), default="HNSW", help="dense index type")
    run.add_argument("--seed", type=int, default=0, help="corpus and query seed")
    run.add_argument("--pp-sizes", type=_ints, default=[20, 100, 1000, 10000], help="post-process batches")
    run.add_argument("--pp-budget", type=float, default=2.0, help="seconds of timing per post-process size")
    run.add_argument("--stdio-blocks", type=int, default=200, help="interleaved blocks of stdio calls")
    run.add_argument("--stdio-per-block", type=int, default=50, help="calls per stdio block")
    run.add_argument("--conformance-select", default=None, metavar="EXPR", help="-k for the conformance run")
    run.add_argument("--profile-queries", type=int, default=30, help="queries profiled when a target misses")
    run.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where results.json and RESULTS.md go")
    render = sub.add_parser("render", help="rewrite RESULTS.md from results.json")
    render.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser


def _run(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    # Imported here so `render` and `--help` stay instant.
    from benchmarks.figures.conformance import run_conformance_bench
    from benchmarks.figures.postprocess import run_postprocess
    from benchmarks.figures.retrieval.run import run_retrieval
    from benchmarks.figures.stdio import run_stdio
    from benchmarks.instruments.machine import load_average, machine_facts

    started = time.perf_counter()
    results: dict[str, Any] = {
        "schema": 1,
        "command": shlex.join(["python", "-m", "benchmarks", *argv]),
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(ROOT),
        "config": {k: v for k, v in vars(args).items() if k not in ("out", "command")},
    }
    engines = [*args.engines, *args.milvus]
    per_engine = dict(args.engine_queries)
    # Size by size, every engine at that size before the next size: the columns of one size are
    # measured minutes apart, not an hour apart.
    results["retrieval"] = [
        run_retrieval(
            engine,
            size,
            queries=per_engine.get(engine, args.queries),
            warmup=args.warmup,
            index=args.index,
            seed=args.seed,
            pin=args.pin,
            peers=args.peers,
            # An engine given fewer queries (a slow one) gets a profile of a quarter of them.
            profile_queries=min(args.profile_queries, max(5, per_engine[engine] // 4))
            if engine in per_engine
            else args.profile_queries,
        )
        for size in args.sizes
        for engine in engines
    ]
    results["post_process"] = run_postprocess(
        args.pp_sizes, budget_s=args.pp_budget, profile_calls_n=args.profile_queries * 10
    )
    results["stdio"] = run_stdio(blocks=args.stdio_blocks, per_block=args.stdio_per_block, warmup=5)
    results["conformance"] = run_conformance_bench(
        milvus="lite", select=args.conformance_select, profile=args.profile_queries > 0
    )
    results["machine"]["load_average_end"] = load_average()
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks``."""
    from benchmarks.rendering.report import checks, render_markdown

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    out: Path = args.out
    json_path, md_path = out / "results.json", out / "RESULTS.md"
    if args.command == "render":
        results = json.loads(json_path.read_text(encoding="utf-8"))
        results["checks"] = checks(results)  # the recorded figures against today's targets
    else:
        out.mkdir(parents=True, exist_ok=True)
        results = _run(args, argv)
        results["checks"] = checks(results)
        json_path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(results), encoding="utf-8")
    say(f"wrote {md_path}" if args.command == "render" else f"wrote {json_path} and {md_path}")
    for row in results["checks"]:
        print(f"{row['figure']:<58} {row['measured']:>12}  target {row['target']:<10} {row['verdict']}")
    return 0
