"""Conforming variants: implementations that differ from the reference where the spec leaves room.

A kit that failed any of these would over-specify: it would test the reference's choices, not the
spec. Each docstring names the spec text (and the reading in features/spec/readings.md) that allows the
difference. They must pass every applicable scenario.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.boundary._protocol import Block, Hints, WireCandidate

from ._miniature import Miniature, Scored, evidence_key

__all__ = [
    "BatchAfterDedup",
    "EvidenceKeyTieBreak",
    "ExponentialDecayRank",
    "ExtraHitReasons",
    "FirstBlockTopQuality",
    "HighlyRelevantLevel",
    "ReciprocalRank",
]


class ReciprocalRank(Miniature):
    """Hybrid rank mapping ``1 / r``.

    Allowed by R3 "Hybrid quality from rank": monotone non-increasing, rank 1 -> 1.0, no dense L2 and no
    RRF magnitude (readings 4: "Any such mapping conforms").
    """

    def rank_quality(self, rank: int, batch_size: int) -> float:
        return 1.0 / rank


class ExponentialDecayRank(Miniature):
    """Hybrid rank mapping ``0.5 ** (r - 1)``: steeper than linear, never reaching 0.

    Allowed by R3 "Hybrid quality from rank" (readings 4).
    """

    def rank_quality(self, rank: int, batch_size: int) -> float:
        return 0.5 ** (rank - 1)


class BatchAfterDedup(Miniature):
    """Counts the rank mapping's batch ``n`` after dedup (distinct chunks), not every candidate handed in.

    Allowed by R3 "within a candidate batch of size `n`" (readings 4: "Batch may be the candidates
    before or after dedup").
    """

    def batch_size(self, batch: Sequence[WireCandidate]) -> int:
        return len({evidence_key(c) for c in batch})


class HighlyRelevantLevel(Miniature):
    """Assigns ``HIGHLY_RELEVANT`` where the reference assigns ``PRECISE``.

    Allowed by R5 "PRECISE does not require hint support": "the system MAY assign `PRECISE` or
    `HIGHLY_RELEVANT`" (readings 6).
    """

    def high_level(self) -> str:
        return "HIGHLY_RELEVANT"


class EvidenceKeyTieBreak(Miniature):
    """Breaks ties of equal ``originalRank`` by evidence key instead of input order.

    Allowed by R4: "order candidates by `originalRank` ascending (stable tie-break allowed)"
    (readings 10: "any stable order among ties conforms"). The order is a pure function of the
    candidates, so it is deterministic for any input order.
    """

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        return sorted(scored, key=lambda s: (s.candidate.original_rank, evidence_key(s.candidate)))


class ExtraHitReasons(Miniature):
    """Adds its own zero-weight explanations to ``hitReasons`` (label, attached dense distance).

    Allowed by the design note 5.5: L0 and other signals may explain hits in ``hitReasons``; the spec
    constrains order, quality and gates, not the explanation vocabulary.
    """

    def hit_reasons(self, candidate: WireCandidate, hints: Hints) -> tuple[str, ...]:
        extra = [f"label_{self.canonicalize_label(candidate.score_label)}"]
        if candidate.dense_distance is not None:
            extra.append("dense_distance_attached")
        return (*super().hit_reasons(candidate, hints), *extra)


class FirstBlockTopQuality(Miniature):
    """Reads "top qualityScore" as the quality of the first accepted block (rank order), not the highest.

    Allowed by R5 "Low quality uses top qualityScore" (readings 3: either reading; the kit checks
    only fixtures where they coincide).
    """

    def top_quality(self, blocks: Sequence[Block]) -> float | None:
        return blocks[0].quality_score if blocks else None
