"""Post-process inputs every run asks first, whatever its seed: the classes that decide verdicts.

Hypothesis draws colliding ids, a document over several categories, hybrid candidates without a fused
score or a hint list long enough to cross ranks only by luck, if ever; a fault that only those inputs
show must not be caught only by a lucky seed. Each example here is one such class (its name says
which; ``features/spec/input-model.md`` lists them), asked before any random draw. Every value is one
the spec defines an answer for (distances non-negative, the canonical labels; ranks above the batch's
count only where every reading of n gives an answer, readings 22), and a property judges it as it
judges a random draw: nothing here is a reading of its own. Ids,
categories and null hybrid scores go beyond the strategies' small vocabulary on purpose: those are the
classes the strategies miss.
"""

from __future__ import annotations

from typing import Any

from ..boundary._protocol import Hints, PostProcessConfig, QualityRequest, WireCandidate
from ..corpus._explicit_requests import one_field_pairs
from ._hostile_examples import HOSTILE_POST_PROCESS, HOSTILE_QUALITY

__all__ = [
    "GAPPED_RANKS",
    "HINT_PAIR_EXAMPLES",
    "LONG_HINTS",
    "MIXED_LABELS",
    "POST_PROCESS_EXAMPLES",
    "POST_PROCESS_PAIRS",
    "QUALITY_EXAMPLES",
    "SECOND_PAGE",
    "ZERO_THRESHOLD",
]


def _hybrid(
    doc_id: str, chunk_index: int, rank: int, *, score: float | None = 1.0, text: str = ""
) -> WireCandidate:
    return WireCandidate(
        doc_id=doc_id,
        chunk_index=chunk_index,
        text=text,
        original_rank=rank,
        score=score,
        score_label="hybrid",
        raw_score=score,
    )


def _dense(
    doc_id: str,
    chunk_index: int,
    rank: int,
    category: str | None = None,
    *,
    distance: float | None = None,
    label: str = "dense",
    text: str = "",
) -> WireCandidate:
    distance = 0.1 * rank if distance is None else distance
    return WireCandidate(
        doc_id=doc_id,
        chunk_index=chunk_index,
        text=text,
        original_rank=rank,
        score=distance,
        score_label=label,
        raw_score=distance,
        category=category,
    )


_WIDE = PostProcessConfig(return_n=8, max_chunks_per_document=4)

# Ids that collide when docId and chunkIndex are concatenated without a separator: doc1/11, doc11/1 and
# doc/111 are three chunks, all "doc111" to a key built as docId + chunkIndex; and ids holding the
# separator itself (page#1 chunk 2 and page chunk 12 are page#1#2 and page#12, not one chunk).
COLLIDING_IDS = (
    _hybrid("doc1", 11, 1),
    _hybrid("doc11", 1, 2),
    _hybrid("doc", 111, 3),
    _hybrid("page#1", 2, 4),
    _hybrid("page", 12, 5),
)

# One document whose chunks carry three categories, under a cap of one chunk per document: the cap is
# per docId ("more than rag.max-chunks-per-document chunks share a docId"), whatever the categories.
SEVERAL_CATEGORIES = (
    _dense("manual", 0, 1, "billing"),
    _dense("manual", 1, 2, "shipping"),
    _dense("manual", 2, 3, None),
    _dense("faq", 0, 4, "billing"),
)
_CAP_ONE = PostProcessConfig(return_n=4, max_chunks_per_document=1)

# Hybrid candidates the engine gave no fused score (null score): ranked, and as good as their rank.
NULL_FUSED_SCORES = (
    _hybrid("a", 0, 1),
    _hybrid("b", 0, 2, score=None),
    _hybrid("c", 0, 3, score=None),
    _hybrid("d", 0, 4),
)

# A hint list long enough that a boost kept "only as a tie-break" (a fraction of a rank per matching
# term) crosses ranks: the worst-ranked candidate contains every one of the forty terms.
LONG_HINTS = tuple(f"term{i:02d}" for i in range(40))
_CROSSING = (
    _hybrid("a", 0, 1, text="first"),
    _hybrid("b", 0, 2, text="second"),
    _hybrid("c", 0, 3, text="third"),
    _hybrid("d", 0, 4, text="fourth"),
    _hybrid("e", 0, 5, text=" ".join(LONG_HINTS)),
)
_RETURN_TWO = PostProcessConfig(return_n=2, max_chunks_per_document=2)

# Ranks above the batch's count: a second page of a search (ranks 11 to 14 of a batch of four), and a
# batch whose ranks have gaps (hits removed before post-process). Every qualityScore stays in [0, 1]
# ("the pipeline SHALL compute a qualityScore in [0, 1]"), whatever n the normalizer counts: a linear
# mapping on the count, unclamped, goes below 0 here and nowhere else (readings 22).
SECOND_PAGE = tuple(_hybrid(f"page-two-{r}", 0, r) for r in range(11, 15))
GAPPED_RANKS = (_hybrid("kept", 0, 1), _hybrid("kept", 1, 4), _hybrid("also kept", 0, 9))

# Labels mixed in one batch (a merged retry, a caller's own list): dense and hybrid candidates, and their
# legacy aliases, each with its mode's score shape (L2 distances, small fused scores), ranks alternating.
# The spec's post-process takes any candidate list and orders it by originalRank: a sort by label group
# first, or by raw score, puts them out of rank order, here and in no single-label batch.
MIXED_LABELS = (
    _hybrid("mixed-a", 0, 1, score=0.0325),
    _dense("mixed-b", 0, 2, distance=0.9),
    _hybrid("mixed-c", 0, 3, score=0.0318).model_copy(update={"score_label": "rrf_fused"}),
    _dense("mixed-d", 0, 4, distance=0.2, label="l2_distance"),
    _hybrid("mixed-e", 0, 5, score=0.0161),
    _dense("mixed-f", 0, 6, distance=0.0),
)

# Falsy settings crossed with the decision they change. A reference threshold of 0.0 with a top quality
# below the default 0.5 (dense distances 1.4 to 1.8 of maxL2Distance 2.0: qualities 0.3 to 0.1): the
# result is not low quality, and only here does `threshold or 0.5` (a 0.0 read as "unset") say it is.
ZERO_THRESHOLD = tuple(_dense("faint", i, i + 1, distance=d) for i, d in enumerate((1.4, 1.5, 1.8)))
_THRESHOLD_ZERO = PostProcessConfig(reference_threshold=0.0, highly_relevant_threshold=0.9)
_BOTH_ZERO = PostProcessConfig(reference_threshold=0.0, highly_relevant_threshold=0.0)
# A dense distance of exactly 0.0 is quality 1.0; `score or None` (0.0 read as missing) makes it 0.
_AT_ZERO_DISTANCE = (_dense("exact", 0, 1, distance=0.0), _dense("exact", 1, 2, distance=0.5))


def _at_quality(q: float, rank: int = 1) -> WireCandidate:
    """A dense candidate of quality exactly ``q`` under maxL2Distance 2.0 (binary fractions: no rounding)."""
    return _dense(f"gate-{q}", 0, rank, distance=2.0 * (1.0 - q))


# Each gate's boundary crossed with the top quality on both sides (2**-10 away, beyond any float32
# rounding) and exactly at it (readings 11: within the tolerance either side conforms), at the default
# thresholds and at the bounds 0 and 1.
_STEP = 2.0**-10
_GATE_CROSSINGS: tuple[dict[str, Any], ...] = tuple(
    {"batch": (_at_quality(top),), "hints": Hints(), "config": config}
    for config, edge in (
        (PostProcessConfig(), 0.5),
        (PostProcessConfig(), 0.75),
        (PostProcessConfig(reference_threshold=0.25, highly_relevant_threshold=1.0), 0.25),
        (PostProcessConfig(reference_threshold=1.0, highly_relevant_threshold=1.0), 1.0),
    )
    for top in (edge - _STEP, edge, edge + _STEP)
    if 0.0 <= top <= 1.0
)


# One field at a time, for post-process: a base question and one variant per field of the request, each
# variant's answer differing from the base's (qualities 0.9 to 0.4, two chunks of one document).
_PAIR_BATCH = (
    _dense("pair-a", 0, 1, distance=0.2, text="refund window"),
    _dense("pair-a", 1, 2, distance=0.5),
    _dense("pair-b", 0, 3, distance=0.8),
    _dense("pair-c", 0, 4, distance=1.2),
)
_PAIR_CONFIG = PostProcessConfig(return_n=3, max_chunks_per_document=2, highly_relevant_threshold=1.0)
_PAIR_BASE: dict[str, Any] = {"batch": _PAIR_BATCH, "hints": Hints(), "config": _PAIR_CONFIG}


def _varied(**change: Any) -> dict[str, Any]:
    config = {k: v for k, v in change.items() if k in PostProcessConfig.model_fields}
    rest = {k: v for k, v in change.items() if k not in config}
    return {**_PAIR_BASE, **rest, "config": _PAIR_CONFIG.model_copy(update=config)}


POST_PROCESS_PAIRS: tuple[dict[str, Any], ...] = tuple(
    one_field_pairs(
        _PAIR_BASE,
        [
            _varied(
                batch=(_PAIR_BATCH[0].model_copy(update={"score": 1.0, "raw_score": 1.0}), *_PAIR_BATCH[1:])
            ),
            _varied(hints=Hints(keywords=("refund",))),
            _varied(return_n=1),
            _varied(max_chunks_per_document=1),
            _varied(max_l2_distance=4.0),
            _varied(reference_threshold=0.95),
            _varied(highly_relevant_threshold=0.5),
        ],
    )
)
"""The post-process questions of one field at a time, in the order they are asked."""

POST_PROCESS_EXAMPLES: tuple[dict[str, Any], ...] = (
    {"batch": COLLIDING_IDS, "hints": Hints(), "config": _WIDE},
    {"batch": SEVERAL_CATEGORIES, "hints": Hints(), "config": _CAP_ONE},
    {"batch": NULL_FUSED_SCORES, "hints": Hints(), "config": _WIDE},
    {"batch": _CROSSING, "hints": Hints(keywords=LONG_HINTS), "config": _RETURN_TWO},
    {"batch": SECOND_PAGE, "hints": Hints(), "config": _WIDE},
    {"batch": GAPPED_RANKS, "hints": Hints(), "config": _WIDE},
    {"batch": MIXED_LABELS, "hints": Hints(), "config": _WIDE},
    {"batch": MIXED_LABELS, "hints": Hints(), "config": _RETURN_TWO},
    {"batch": ZERO_THRESHOLD, "hints": Hints(), "config": _THRESHOLD_ZERO},
    {"batch": ZERO_THRESHOLD, "hints": Hints(), "config": _BOTH_ZERO},
    {"batch": _AT_ZERO_DISTANCE, "hints": Hints(), "config": _WIDE},
    *_GATE_CROSSINGS,
    *POST_PROCESS_PAIRS,
    *HOSTILE_POST_PROCESS,  # the hostile catalogue, every class of every field (issue 51)
)
"""Examples of ``batch``, ``hints`` and ``config``: for the properties over any candidates and hints."""

HINT_PAIR_EXAMPLES: tuple[dict[str, Any], ...] = (
    {"batch": _CROSSING, "first": Hints(keywords=LONG_HINTS), "second": Hints(), "config": _RETURN_TWO},
    {"batch": _CROSSING, "first": Hints(), "second": Hints(entities=LONG_HINTS), "config": _RETURN_TWO},
)
"""Examples of ``batch``, ``first``, ``second`` and ``config``: for the no-boost property."""

# One field at a time, for the normalizer: a dense and a hybrid base, and a variant per field whose answer
# the spec fixes differently (the dense formula, rank 1 -> 1.0); and a distance of exactly 0.0 (quality
# 1.0: `score or None` reads it as missing, quality 0). Asked by the range property, whose judge checks
# each answer against the formula.
_DENSE_Q = QualityRequest(score_label="dense", score=0.5, max_l2_distance=2.0)
_HYBRID_Q = QualityRequest(score_label="hybrid", score=0.03, original_rank=1, batch_size=4)
QUALITY_EXAMPLES: tuple[dict[str, Any], ...] = tuple(
    {"request": r}
    for r in (
        *one_field_pairs(
            _DENSE_Q,
            [
                _DENSE_Q.model_copy(update={"score": 1.5}),
                _DENSE_Q.model_copy(update={"max_l2_distance": 1.0}),
                _DENSE_Q.model_copy(update={"score_label": "hybrid"}),
                _DENSE_Q.model_copy(update={"score": 0.0}),
            ],
        ),
        # Rank 1 asked after rank 3: a memo keyed without the rank answers it with rank 3's quality.
        *one_field_pairs(_HYBRID_Q.model_copy(update={"original_rank": 3}), [_HYBRID_Q]),
        *HOSTILE_QUALITY,  # the hostile catalogue, every class of every field (issue 51)
    )
)
"""Examples of ``request``: for the range property (every answer judged whole)."""
