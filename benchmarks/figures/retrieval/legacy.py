"""The legacy pipeline of the design note, reused from :mod:`benchmarks.subjects.legacy` unchanged.

``LegacyPipeline.search`` there runs the dense probe AFTER the hybrid search. The design note
(section 2.2) calls it a PARALLEL probe, so the benchmark also times a variant that starts the probe
on a worker thread while the hybrid search runs. It overrides only *when* the probe runs: the fused
hits, the L2 backfill, the boosts and the gates are the miniature's own code.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from benchmarks.subjects.legacy import LegacyPipeline, LegacyResult

__all__ = ["LegacyPipeline", "LegacyResult", "ParallelProbeLegacy"]


class ParallelProbeLegacy(LegacyPipeline):
    """:class:`LegacyPipeline` whose dense probe overlaps the hybrid search (one worker thread)."""

    def __init__(self, store: Any, settings: Any, executor: ThreadPoolExecutor) -> None:
        super().__init__(store, settings)
        self._executor = executor
        self._pending: Future[dict[tuple[str, int], float]] | None = None

    def search(
        self,
        query_text: str,
        query_vector: Sequence[float],
        *,
        mode: str,
        k: int,
        category: str | None = None,
        rrf_k: int | None = None,
    ) -> list[Any]:
        """Start the probe, then let the miniature's search run the hybrid and collect the probe."""
        if mode == "hybrid":
            self._pending = self._executor.submit(
                LegacyPipeline.dense_probe, self, query_vector, k=k, category=category
            )
        try:
            return super().search(query_text, query_vector, mode=mode, k=k, category=category, rrf_k=rrf_k)
        finally:
            self._pending = None

    def dense_probe(
        self, query_vector: Sequence[float], *, k: int, category: str | None = None
    ) -> dict[tuple[str, int], float]:
        """The probe started in :meth:`search` (same vector, limit and filter), or a fresh one."""
        if self._pending is not None:
            return self._pending.result()
        return super().dense_probe(query_vector, k=k, category=category)
