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

from ..boundary._protocol import Hints, PostProcessConfig, WireCandidate

__all__ = ["GAPPED_RANKS", "HINT_PAIR_EXAMPLES", "LONG_HINTS", "POST_PROCESS_EXAMPLES", "SECOND_PAGE"]


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


def _dense(doc_id: str, chunk_index: int, rank: int, category: str | None) -> WireCandidate:
    distance = 0.1 * rank
    return WireCandidate(
        doc_id=doc_id,
        chunk_index=chunk_index,
        original_rank=rank,
        score=distance,
        score_label="dense",
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

POST_PROCESS_EXAMPLES: tuple[dict[str, Any], ...] = (
    {"batch": COLLIDING_IDS, "hints": Hints(), "config": _WIDE},
    {"batch": SEVERAL_CATEGORIES, "hints": Hints(), "config": _CAP_ONE},
    {"batch": NULL_FUSED_SCORES, "hints": Hints(), "config": _WIDE},
    {"batch": _CROSSING, "hints": Hints(keywords=LONG_HINTS), "config": _RETURN_TWO},
    {"batch": SECOND_PAGE, "hints": Hints(), "config": _WIDE},
    {"batch": GAPPED_RANKS, "hints": Hints(), "config": _WIDE},
)
"""Examples of ``batch``, ``hints`` and ``config``: for the properties over any candidates and hints."""

HINT_PAIR_EXAMPLES: tuple[dict[str, Any], ...] = (
    {"batch": _CROSSING, "first": Hints(keywords=LONG_HINTS), "second": Hints(), "config": _RETURN_TWO},
    {"batch": _CROSSING, "first": Hints(), "second": Hints(entities=LONG_HINTS), "config": _RETURN_TWO},
)
"""Examples of ``batch``, ``first``, ``second`` and ``config``: for the no-boost property."""
