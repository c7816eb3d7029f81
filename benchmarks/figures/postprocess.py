"""Figure 3: ``post_process`` on 100 candidates in microseconds per call, and at larger batches.

The reference's ``post_process`` is timed beside its old, tuned version (``benchmarks.figures.old_reference``,
before issue 25 rewrote it as the spec's steps), the two alternating loop by loop, so the cost of
readability is a figure of this run.

Candidates look like a hybrid search's: ranks 1..n, a fused score, a denseDistance, a few documents
holding several chunks (so dedup and the per-document cap have work) and one duplicate in twenty.
"""

from __future__ import annotations

import time
import timeit
from typing import Any

from benchmarks._targets import POSTPROCESS_US
from benchmarks.figures.old_reference import OLD_COMMIT
from benchmarks.figures.old_reference import post_process as old_post_process
from benchmarks.instruments.profile import profile_calls
from benchmarks.instruments.progress import say
from reference import Candidate, L0Hints, Settings, post_process

__all__ = ["POSTPROCESS_TARGETS_US", "POSTPROCESS_TARGET_US", "candidates", "run_postprocess"]

POSTPROCESS_TARGETS_US = {int(n): us for n, us in POSTPROCESS_US.items()}
POSTPROCESS_TARGET_US = POSTPROCESS_TARGETS_US[100]
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


def _per_call_us(
    batch: list[Candidate], settings: Settings, hints: L0Hints, budget_s: float
) -> tuple[float, float]:
    """Microseconds per call of the new and the old post_process: the median of 5 loops each, sized to
    take about ``budget_s / 10`` seconds a loop, the two alternating loop by loop."""
    new = timeit.Timer(lambda: post_process(batch, settings, hints=hints))
    old = timeit.Timer(lambda: old_post_process(batch, settings, hints=hints))
    number, elapsed = 1, 0.0
    while elapsed < budget_s / 50:  # calibrate: a loop long enough for the clock, short enough to repeat
        elapsed = new.timeit(number)
        if elapsed < budget_s / 50:
            number *= 4
    runs: dict[str, list[float]] = {"new": [], "old": []}
    for _ in range(5):
        runs["new"].append(new.timeit(number))
        runs["old"].append(old.timeit(number))
    return sorted(runs["new"])[2] / number * 1e6, sorted(runs["old"])[2] / number * 1e6


def run_postprocess(sizes: list[int], *, budget_s: float, profile_calls_n: int) -> dict[str, Any]:
    """Microseconds per call at each size, growth relative to 100, and a profile if 100 misses."""
    settings = Settings()
    hints = L0Hints(domain="billing", keywords=("refunds", "portal"))
    started = time.perf_counter()
    per_call, old_per_call = {}, {}
    for n in sizes:
        new_us, old_us = _per_call_us(candidates(n), settings, hints, budget_s)
        per_call[n], old_per_call[n] = round(new_us, 2), round(old_us, 2)
        say(f"[post-process] {n:>6} candidates: {new_us:,.1f} us per call (old: {old_us:,.1f} us)")
    base = per_call.get(_TARGET_SIZE)
    figures: dict[str, Any] = {
        "us_per_call": {str(n): us for n, us in per_call.items()},
        "us_per_candidate": {str(n): round(us / n, 3) for n, us in per_call.items()},
        "growth_vs_100": {str(n): round(us / base, 2) for n, us in per_call.items()} if base else {},
        "old": {
            "commit": OLD_COMMIT,
            "us_per_call": {str(n): us for n, us in old_per_call.items()},
            "new_vs_old": {str(n): round(per_call[n] / old_per_call[n], 3) for n in per_call},
        },
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
