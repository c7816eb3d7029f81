"""The scenario corpus keeps its promises: the facts it advertises hold when computed from scratch.

Everything here is numpy and plain Python; the Milvus side is checked in ``test_oracle.py``.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

import numpy as np
import pytest

from conformance import Corpus
from conformance.corpus._scenario_corpus import (
    DIM,
    RRF_K,
    ScenarioCorpus,
    ScenarioQuery,
    build_corpus,
    key_of,
)
from conformance.judging._oracle import brute_force_l2, rrf_fuse

MAX_L2 = 2.0  # the wire default of maxL2Distance
REFERENCE_THRESHOLD = 0.5  # the wire default reference threshold
# A union of common English stop lists (Lucene, NLTK excerpts): none may appear, so analyzers agree.
_STOP_TEXT = """
a an and are as at be but by for if in into is it no not of on or such that the their then there these
they this to was will with across among between through during before after above below up down out
off over under again further once here when where why how all any both each few more most other some
only own same so than too very can just should now until while per onto within
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


@pytest.fixture(scope="module")
def corpus() -> ScenarioCorpus:
    return build_corpus()


def _distances(corpus: ScenarioCorpus, query: ScenarioQuery) -> dict[tuple[str, int], float]:
    chunks = corpus.corpus.chunks
    values = brute_force_l2(query.vector, [c.vector for c in chunks])
    return {key_of(c): float(d) for c, d in zip(chunks, values, strict=True)}


def _term_counts(corpus: ScenarioCorpus, query: ScenarioQuery) -> dict[tuple[str, int], int]:
    terms = query.text.split()
    counts = {key_of(c): sum(c.text.split().count(t) for t in terms) for c in corpus.corpus.chunks}
    return {k: n for k, n in counts.items() if n}


def _quality(distance: float) -> float:
    return max(0.0, 1.0 - min(distance, MAX_L2) / MAX_L2)


def test_the_corpus_is_the_same_value_every_time(corpus: ScenarioCorpus) -> None:
    assert build_corpus() == corpus
    assert Corpus.model_validate_json(corpus.corpus.model_dump_json()) == corpus.corpus


def test_vectors_are_unit_length_and_distinct(corpus: ScenarioCorpus) -> None:
    matrix = np.asarray([c.vector for c in corpus.corpus.chunks], dtype=np.float64)
    assert matrix.shape[1] == corpus.corpus.dim == DIM
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-9)
    assert len({c.vector for c in corpus.corpus.chunks}) == len(corpus.corpus.chunks)
    for query in corpus.queries.values():
        assert np.linalg.norm(query.vector) == pytest.approx(1.0)


def test_texts_are_analyzer_friendly(corpus: ScenarioCorpus) -> None:
    for chunk in corpus.corpus.chunks:
        words = chunk.text.split()
        assert len(words) == 8, chunk.text  # equal lengths: BM25 length normalization cannot reorder
        assert all(re.fullmatch(r"[a-z]+", w) for w in words), chunk.text
        assert not STOP_WORDS & set(words), chunk.text
    keys = [key_of(c) for c in corpus.corpus.chunks]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("name", ["failover", "snapshot", "compliance", "replication"])
def test_dense_order_is_the_brute_force_order_without_ties(corpus: ScenarioCorpus, name: str) -> None:
    query = corpus.query(name)
    distances = _distances(corpus, query)
    assert query.dense_order == tuple(sorted(distances, key=distances.__getitem__))
    gaps = np.diff([distances[k] for k in query.dense_order])
    assert gaps.min() > 1e-3  # far above float32 noise: no engine can tie or swap them


@pytest.mark.parametrize("name", ["failover", "snapshot", "compliance", "replication"])
def test_bm25_order_follows_distinct_term_counts(corpus: ScenarioCorpus, name: str) -> None:
    query = corpus.query(name)
    counts = _term_counts(corpus, query)
    assert len(set(counts.values())) == len(counts)  # distinct counts: no BM25 ties
    assert query.bm25_order == tuple(sorted(counts, key=lambda k: -counts[k]))
    assert len(query.bm25_order) <= query.k  # every BM25 match fits any sub-search limit >= k


@pytest.mark.parametrize("name", ["failover", "snapshot", "compliance", "replication"])
def test_rrf_order_has_no_ties_and_ignores_the_sub_search_limit(corpus: ScenarioCorpus, name: str) -> None:
    query = corpus.query(name)
    everything = len(corpus.corpus.chunks)
    for sub_limit in range(query.k, everything + 1):
        fused = rrf_fuse((query.dense_order[:sub_limit], query.bm25_order), rrf_k=RRF_K, limit=everything)
        assert tuple(r.key for r in fused[: query.k]) == query.rrf_order, sub_limit
        scores = [r.score for r in fused]
        assert min(a - b for a, b in itertools.pairwise(scores)) > 1e-6, sub_limit


def test_failover_separates_hybrid_from_dense(corpus: ScenarioCorpus) -> None:
    query = corpus.query("failover")
    distances = _distances(corpus, query)
    # R7: the hybrid hits in distance order are not the hybrid order.
    assert list(query.rrf_order) != sorted(query.rrf_order, key=distances.__getitem__)
    # R2/R6: one hit only BM25 finds, and BM25 ranks it first.
    assert query.bm25_only == (("ops-failover-runbook", 0),)
    assert query.bm25_first_outside_dense == ("ops-failover-runbook", 0)
    # R2: every fused score differs from that hit's L2 distance.
    fused = rrf_fuse((query.dense_top_k, query.bm25_order), limit=query.k)
    assert all(abs(r.score - distances[r.key]) > 0.05 for r in fused)
    # The BM25-only chunk has a true L2 quality well above the placeholder's 0.
    assert _quality(distances[query.bm25_only[0]]) > 0.3


def test_replication_makes_rrf_k_and_the_per_document_cap_matter(corpus: ScenarioCorpus) -> None:
    query = corpus.query("replication")
    everything = len(corpus.corpus.chunks)
    orders = {}
    for rrf_k in (1, RRF_K):
        for sub_limit in range(query.k, everything + 1):
            fused = rrf_fuse((query.dense_order[:sub_limit], query.bm25_order), rrf_k=rrf_k, limit=everything)
            top = tuple(r.key for r in fused[: query.k])
            assert orders.setdefault(rrf_k, top) == top, (rrf_k, sub_limit)  # no sub-search limit changes it
            scores = [r.score for r in fused]
            assert min(a - b for a, b in itertools.pairwise(scores)) > 1e-6
    assert orders[RRF_K] == query.rrf_order
    assert orders[1] != orders[RRF_K]  # an implementation that ignores the requested k is seen
    assert query.bm25_only == (("ops-replication-checklist", 0),)
    for order in (*orders.values(), query.dense_top_k):
        assert sum(doc == "db-replication-guide" for doc, _ in order) == 3  # a cap of 2 binds
    distances = _distances(corpus, query)
    assert list(query.rrf_order) != sorted(query.rrf_order, key=distances.__getitem__)


def test_categories_make_the_retry_decisions_clear(corpus: ScenarioCorpus) -> None:
    snapshot = corpus.query("snapshot")
    distances = _distances(corpus, snapshot)

    def best(category: str | None) -> float:
        return _quality(distances[corpus.in_category(snapshot.dense_order, category)[0]])

    assert "legal" not in corpus.categories  # a filtered lookup with no evidence at all
    assert best("billing") < REFERENCE_THRESHOLD - 0.1  # low quality by the dense formula
    assert best(None) > REFERENCE_THRESHOLD + 0.1  # the unfiltered retry finds good evidence
    assert best("storage") > REFERENCE_THRESHOLD + 0.1  # a good filtered lookup: no retry
    storage_dense = corpus.in_category(snapshot.dense_order, "storage")
    storage_bm25 = corpus.in_category(snapshot.bm25_order, "storage")
    fused = rrf_fuse((storage_dense[: snapshot.k], storage_bm25), limit=snapshot.k)
    assert fused[0].key == storage_dense[0] == storage_bm25[0]  # rank 1 in every mode
    compliance = corpus.query("compliance")
    far = _distances(corpus, compliance)
    assert _quality(far[compliance.dense_order[0]]) < REFERENCE_THRESHOLD - 0.1
    assert compliance.bm25_order == ()


def test_query_lookup_names_what_is_missing(corpus: ScenarioCorpus) -> None:
    with pytest.raises(KeyError, match="known"):
        corpus.query("nope")
    assert Counter(c.category for c in corpus.corpus.chunks)["storage"] == 3
