"""Hand-made candidates, blocks and replies for the tests of the executable model."""

from __future__ import annotations

from conformance.boundary._protocol import Block, PostProcessConfig, PostProcessReply, WireCandidate
from conformance.judging import _spec_model as model

__all__ = ["CONFIG", "block", "cand", "dq", "reply", "rules"]

CONFIG = PostProcessConfig()


def cand(
    doc: str, rank: int, score: float | None, *, label: str = "dense", chunk: int = 0, dd: float | None = None
):
    return WireCandidate(
        doc_id=doc, chunk_index=chunk, original_rank=rank, score=score, score_label=label, dense_distance=dd
    )


def block(c: WireCandidate, quality: float, label: str | None = None) -> Block:
    return Block(
        evidence_key=f"{c.doc_id}#{c.chunk_index}",
        doc_id=c.doc_id,
        chunk_index=c.chunk_index,
        original_rank=c.original_rank,
        quality_score=quality,
        score_label=label or model.canonical(c.score_label) or c.score_label,
    )


def reply(
    blocks: list[Block], *, low: bool | None = None, top: float | None = None, **extra
) -> PostProcessReply:
    qualities = [b.quality_score for b in blocks]
    best = max(qualities) if qualities else None
    return PostProcessReply(
        blocks=tuple(blocks),
        relevance_level="X",
        top_quality_score=best if top is None else top,
        is_low_quality=(best is None or best < CONFIG.reference_threshold) if low is None else low,
        **extra,
    )


def rules(found: list[model.Violation]) -> set[str]:
    return {v.rule.id for v in found}


def dq(d: float | None, m: float = 2.0) -> float:
    return model.dense_quality(d, m)
