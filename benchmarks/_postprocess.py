"""Figure 3: ``post_process`` on 100 candidates in microseconds per call, and at larger batches.

Candidates look like a hybrid search's: ranks 1..n, a fused score, a denseDistance, a few documents
holding several chunks (so dedup and the per-document cap have work) and one duplicate in twenty.
"""

from __future__ import annotations

import time
import timeit
from typing import Any

from reference import Candidate, L0Hints, Settings, post_process

from ._profile import profile_calls
from ._progress import say

__all__ = ["POSTPROCESS_TARGETS_US", "POSTPROCESS_TARGET_US", "candidates", "run_postprocess"]

POSTPROCESS_TARGET_US = 100.0  # 100 candidates
POSTPROCESS_TARGETS_US = {100: POSTPROCESS_TARGET_US, 1000: 1000.0}
_TARGET_SIZE = 100


def candidates(n: int) -> list[Candidate]:
    """``n`` hybrid candidates in engine order, deterministic."""
    out = []
    for rank in range(1, n + 1):
        doc = rank // 20 if rank % 20 == 0 else rank // 3  # every 20th repeats an earlier chunk
        out.append(
            Candidate(
                doc_id=f"doc{doc:06d}",
                chunk_index=rank % 3,
                text=f"chunk {rank} about refunds, shipping and the account portal " * 4,
                original_rank=rank,
                score=1.0 / (60 + rank),
                score_label="hybrid",
                raw_score=1.0 / (60 + rank),
                dense_distance=0.4 + (rank % 17) / 10.0,
                category="billing",
                source_type="faq",
            )
        )
    return out


def _per_call_us(batch: list[Candidate], settings: Settings, hints: L0Hints, budget_s: float) -> float:
    """Median of 5 repeats of a loop sized to take about ``budget_s / 5`` seconds each."""
    timer = timeit.Timer(lambda: post_process(batch, settings, hints=hints))
    number, elapsed = 1, 0.0
    while elapsed < budget_s / 25:  # calibrate: a loop long enough for the clock, short enough to repeat
        elapsed = timer.timeit(number)
        if elapsed < budget_s / 25:
            number *= 4
    runs = timer.repeat(repeat=5, number=number)
    return sorted(runs)[2] / number * 1e6


def run_postprocess(sizes: list[int], *, budget_s: float, profile_calls_n: int) -> dict[str, Any]:
    """Microseconds per call at each size, growth relative to 100, and a profile if 100 misses."""
    settings = Settings()
    hints = L0Hints(domain="billing", keywords=("refunds", "portal"))
    started = time.perf_counter()
    per_call = {}
    for n in sizes:
        per_call[n] = round(_per_call_us(candidates(n), settings, hints, budget_s), 2)
        say(f"[post-process] {n:>6} candidates: {per_call[n]:,.1f} us per call")
    base = per_call.get(_TARGET_SIZE)
    figures: dict[str, Any] = {
        "us_per_call": {str(n): us for n, us in per_call.items()},
        "us_per_candidate": {str(n): round(us / n, 3) for n, us in per_call.items()},
        "growth_vs_100": {str(n): round(us / base, 2) for n, us in per_call.items()} if base else {},
        "target_us": POSTPROCESS_TARGET_US,
        "targets_us": {str(n): us for n, us in POSTPROCESS_TARGETS_US.items()},
        "settings": {
            "return_n": settings.return_n,
            "max_chunks_per_document": settings.max_chunks_per_document,
        },
    }
    if base is not None and base > POSTPROCESS_TARGET_US and profile_calls_n:
        batch = candidates(_TARGET_SIZE)
        say(f"[post-process] profiling {profile_calls_n} calls at 100 candidates (target missed)")
        figures["profile"] = profile_calls(
            lambda _: post_process(batch, settings, hints=hints), range(profile_calls_n)
        )
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures
