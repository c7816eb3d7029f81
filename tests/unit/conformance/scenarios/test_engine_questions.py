"""The WeightedRanker scenario's check, on scores Milvus Lite 3.2.2 gave (measured) and on made-up engines:
it names the normalizations that explain the fused scores, and finds none for an engine that fuses
otherwise, so a broken ranker fails the scenario."""

from __future__ import annotations

import math

from conformance.scenarios.steps._engine_kit import Hit
from conformance.scenarios.steps.engine_questions import normalizations_that_fit

DENSE = {1: 0.0, 2: 1.0, 3: 5.0, 4: 25.0, 5: 36.0}  # squared L2 of the engine documents from 0, 0, 0, 0
BM25 = {2: -2.227203, 5: -0.933404}  # "refund invoice" on Lite 3.2.2: negated BM25 scores


def _hits(fused: dict[int, float]) -> list[Hit]:
    return [Hit(pk, score, {}) for pk, score in sorted(fused.items(), key=lambda item: -item[1])]


def test_lite_3_2_2_by_default_normalizes_both_by_arctan() -> None:
    measured = {2: 0.615668, 1: 0.5, 5: 0.24788, 3: 0.062833, 4: 0.012726}
    fits = normalizations_that_fit(_hits(measured), [DENSE, BM25], (0.5, 0.5))
    assert fits == [("1 - 2 atan(s)/pi", "2 atan(|s|)/pi")]


def test_lite_3_2_2_without_norm_score_keeps_bm25_raw() -> None:
    measured = {2: 1.363602, 1: 0.5, 5: 0.475542, 3: 0.062833, 4: 0.012726}
    fits = normalizations_that_fit(_hits(measured), [DENSE, BM25], (0.5, 0.5))
    assert fits == [("1 - 2 atan(s)/pi", "raw, sign dropped")]


def test_an_engine_that_sums_raw_scores_is_named_so() -> None:
    raw = {pk: 0.3 * DENSE[pk] + 0.7 * BM25.get(pk, 0.0) for pk in DENSE}
    assert ("raw", "raw") in normalizations_that_fit(_hits(raw), [DENSE, BM25], (0.3, 0.7))


def test_an_engine_that_fuses_otherwise_fits_nothing() -> None:
    # RRF-like scores, or weights applied the other way round: no normalization explains them.
    rrf = {pk: 1 / (60 + rank) for rank, pk in enumerate(DENSE, start=1)}
    assert normalizations_that_fit(_hits(rrf), [DENSE, BM25], (0.5, 0.5)) == []
    swapped = {pk: 0.7 * (1 - 2 * math.atan(DENSE[pk]) / math.pi) for pk in DENSE}
    assert normalizations_that_fit(_hits(swapped), [DENSE, {}], (0.3, 0.7)) == []
