"""Figure 6: per-message overhead of the stdio adapter protocol against an in-process call.

Both sides answer ``canonicalize_label("rrf_fused")``. Calls are timed in blocks of ``per_block`` (an
in-process call takes about a microsecond, below what one clock read resolves well), and the blocks
of the variants are interleaved.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.instruments.progress import progress_bar
from benchmarks.instruments.stats import Samples, interleave
from conformance.adapters.reference import ReferenceAdapter
from conformance.stdio import StdioAdapter
from reference import canonicalize_label

__all__ = ["run_stdio"]

TINY = Path(__file__).resolve().parents[1] / "children" / "tiny_stdio.py"


def _per_call_us(samples: Samples, per_block: int) -> dict[str, float]:
    per_call = sorted(wall / per_block * 1e6 for wall in samples.wall)
    median = per_call[len(per_call) // 2]
    return {
        "us_per_call_p50": round(median, 3),
        "us_per_call_p95": round(per_call[int(0.95 * (len(per_call) - 1))], 3),
        "round_trips_per_s": round(1e6 / median, 1),
    }


def run_stdio(*, blocks: int, per_block: int, warmup: int) -> dict[str, Any]:
    """Round trips per second through the stdio adapter (plain and ``validate``) vs in-process."""
    started = time.perf_counter()
    command = [sys.executable, str(TINY)]
    plain, strict = StdioAdapter(command), StdioAdapter(command, validate=True)
    in_process = ReferenceAdapter()
    try:
        plain.describe(), strict.describe()  # start both children before timing anything

        def block(call: Any) -> Any:
            def run(_: int) -> None:
                for _ in range(per_block):
                    call("rrf_fused")

            return run

        variants = {
            "in_process_function": block(canonicalize_label),
            "in_process_adapter": block(in_process.canonicalize_label),
            "stdio": block(plain.canonicalize_label),
            "stdio_validate": block(strict.canonicalize_label),
        }
        with progress_bar("[stdio] blocks", warmup + blocks, unit="block") as bar:
            samples = interleave(variants, range(warmup + blocks), warmup=warmup, on_item=bar.update)
    finally:
        plain.close()
        strict.close()
        in_process.close()
    figures: dict[str, Any] = {name: _per_call_us(s, per_block) for name, s in samples.items()}
    base = figures["in_process_adapter"]["us_per_call_p50"]
    figures["overhead_us_per_message"] = round(figures["stdio"]["us_per_call_p50"] - base, 2)
    figures["stdio_vs_in_process_adapter"] = round(figures["stdio"]["us_per_call_p50"] / base, 1)
    figures["calls"] = {"blocks": blocks, "per_block": per_block, "warmup_blocks": warmup}
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures
