"""Advice beside the verdict: choices the spec allows that defeat its purpose. Never a failure.

The judge shows every question and reply to :class:`Advisor` (``observe``); at the end of the run it says
what it saw, in the report's ``advice`` and under the table. Today:

- a hybrid rank mapping that gives every rank 1.0: allowed (rank 1 -> 1.0, never increasing), but then
  a hybrid result without denseDistance is never low quality, and the category retry never runs. The
  design note (5.3) reports exactly that failure of its first slice ("rank1 恒高会杀死 L0 filter
  fallback").
- hybrid hits that never carry denseDistance, with a rank mapping: a weak filtered hybrid result still
  has a top qualityScore of 1.0, so the retry runs only when the filter finds nothing (the same 5.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..boundary._protocol import (
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
)
from ._spec_model import canonical

__all__ = ["Advisor"]

_ENOUGH = 3  # observations before a pattern is worth saying


@dataclass
class Advisor:
    """Collects what the run's replies show; :meth:`advice` says what of it is worth saying."""

    constant_ranks: int = 0  # hybrid answers of 1.0 at a rank below the first
    falling_ranks: int = 0  # hybrid answers below 1.0 at a rank below the first
    hybrid_searches: int = 0
    hybrid_searches_with_distance: int = 0
    _said: list[str] = field(default_factory=list)

    def observe(self, operation: str, request: Any, reply: Any) -> None:
        """Called by the judge with every question it asks and the reply it got."""
        if operation == "quality_score" and isinstance(request, QualityRequest):
            self._quality(request, float(reply))
        elif operation == "post_process" and isinstance(request, PostProcessRequest):
            self._post_process(request, reply)
        elif operation == "search" and isinstance(request, SearchRequest) and isinstance(reply, SearchReply):
            self._search(request, reply)

    def _search(self, request: SearchRequest, reply: SearchReply) -> None:
        if request.mode == "hybrid" and reply.hits:
            self.hybrid_searches += 1
            self.hybrid_searches_with_distance += any(h.dense_distance is not None for h in reply.hits)

    def _quality(self, request: QualityRequest, answer: float) -> None:
        if canonical(request.score_label) != "hybrid" or request.dense_distance is not None:
            return
        if request.original_rank > 1 and request.batch_size > 1:
            if answer >= 1.0:
                self.constant_ranks += 1
            else:
                self.falling_ranks += 1

    def _post_process(self, request: PostProcessRequest, reply: PostProcessReply) -> None:
        if any(
            canonical(c.score_label) != "hybrid" or c.dense_distance is not None for c in request.candidates
        ):
            return
        for block in reply.blocks:
            if block.original_rank > 1:
                if block.quality_score >= 1.0:
                    self.constant_ranks += 1
                else:
                    self.falling_ranks += 1

    def advice(self) -> list[str]:
        """What to tell the team, in words that say why it matters."""
        out = []
        if self.constant_ranks >= _ENOUGH and self.falling_ranks == 0:
            out.append(
                "hybrid-rank-constant: your hybrid rank mapping gives every rank 1.0. The spec allows it "
                "(rank 1 -> 1.0, never increasing), but a hybrid result without denseDistance is then never "
                "low quality, so the category retry never runs on a weak filtered result (design note 5.3). "
                "A mapping that falls with rank, or a gate on attached denseDistance, keeps the retry alive"
            )
        if self.hybrid_searches >= _ENOUGH and self.hybrid_searches_with_distance == 0:
            out.append(
                "hybrid-without-distance: your hybrid hits never carry denseDistance. That conforms (R7 says "
                "MAY), but with a rank mapping the best hybrid hit always scores 1.0, so a weak filtered "
                "hybrid result is never low quality and the category retry runs only when the filter finds "
                "nothing (design note 5.3). Attaching each hit's dense L2 distance lets the gate see it"
            )
        return out
