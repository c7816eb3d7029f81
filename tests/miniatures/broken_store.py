"""Broken miniatures of the Milvus-backed operations: search labels, scores and order, and the retry.

Each breaks exactly one thing of :class:`~tests.miniatures._miniature.Miniature`, whose search is the
reference store's one engine search. Extra engine calls (a dense probe, a BM25 search) go through the
reference store's own client and collection, the way a legacy store would have made them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.boundary._protocol import (
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    SearchRequest,
    WireCandidate,
)
from reference.store._store import category_filter

from ._miniature import Miniature

__all__ = [
    "Bm25OnlyLabel",
    "Bm25OnlyMaxL2Placeholder",
    "DenseDistanceRelabels",
    "DenseDistanceReordersSearch",
    "DenseMergesBm25",
    "DenseRunsHybrid",
    "HybridScoreIsDenseL2",
    "RetriesWithoutCategory",
    "RetryOnRawScore",
    "SilentBm25Probe",
]

# The reference store's schema (see reference/store/_store.py): the fields an extra search reads.
DENSE_FIELD, SPARSE_FIELD = "dense", "sparse"
OUTPUT_FIELDS = ["doc_id", "chunk_index", "text", "category", "source_type"]
LEGACY_MAX_L2 = 2.0  # the legacy default maxL2Distance, "about 2 for unit vectors"


def dense_probe(store: Any, request: SearchRequest) -> set[tuple[str, int]]:
    """The chunks a separate dense search (limit ``k``, same filter) finds: the legacy "parallel probe"."""
    expr = category_filter(request.category) if request.category is not None else ""
    result = store.client.search(
        store.collection,
        data=[list(request.query_vector)],
        anns_field=DENSE_FIELD,
        limit=request.k,
        filter=expr,
        output_fields=["doc_id", "chunk_index"],
        search_params={"metric_type": "L2", "params": {}},
    )
    return {(hit["entity"]["doc_id"], int(hit["entity"]["chunk_index"])) for hit in result[0]}


def _key(candidate: WireCandidate) -> tuple[str, int]:
    return (candidate.doc_id, candidate.chunk_index)


def _hybrid(miniature: Miniature, request: SearchRequest) -> list[WireCandidate]:
    return Miniature.search_candidates(miniature, request.model_copy(update={"mode": "hybrid"}))


# -- R6 dense baseline -----------------------------------------------------------------------------


class DenseRunsHybrid(Miniature):
    """Mode ``dense`` runs the hybrid search (dense + BM25, RRF) and labels its hits ``dense``.

    Violates R6 "Mode dense still callable": "search SHALL call dense ANN only and label hits `dense`",
    and R1 "Dense mode labels hits as dense": "`score` SHALL be the dense L2 distance".
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        if request.mode != "dense":
            return super().search_candidates(request)
        fused = _hybrid(self, request)
        return [c.model_copy(update={"score_label": "dense", "dense_distance": None}) for c in fused]


class DenseMergesBm25(Miniature):
    """Mode ``dense`` appends the BM25 hits that the dense search missed, scored by their true L2 distance.

    Violates R6 "Mode dense still callable": "search SHALL call dense ANN only". Labels and scores stay
    right (``dense``, the L2 distance); only the extra keyword search is wrong.
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        dense = super().search_candidates(request)
        if request.mode != "dense" or not request.query_text.strip():
            return dense
        # Hybrid hits carry their dense L2 distance; the BM25-only ones are what a keyword search adds.
        seen = {_key(c) for c in dense}
        extra = [c for c in _hybrid(self, request) if _key(c) not in seen]
        appended = [
            c.model_copy(
                update={
                    "original_rank": len(dense) + i,
                    "score": c.dense_distance,
                    "raw_score": c.dense_distance,
                    "score_label": "dense",
                    "dense_distance": None,
                }
            )
            for i, c in enumerate(extra, start=1)
        ]
        return dense + appended


class SilentBm25Probe(Miniature):
    """Mode ``dense`` also sends a BM25 search and throws its answer away.

    Violates R6 "search SHALL call dense ANN only" while every hit, label, score and order stays
    right: only the kit's recording proxy, which sees what the implementation asks Milvus, can tell.
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        if request.mode == "dense" and request.query_text.strip():
            store = self._prepared()
            store.client.search(
                store.collection,
                data=[request.query_text],
                anns_field=SPARSE_FIELD,
                limit=request.k,
                search_params={"metric_type": "BM25"},
            )
        return super().search_candidates(request)


# -- R2 no L2 overwrite ----------------------------------------------------------------------------


class HybridScoreIsDenseL2(Miniature):
    """Hybrid hits keep label ``hybrid`` and their RRF order, but ``score`` is replaced by the dense L2.

    Violates R2 "No L2 enrichment overwrite": "post-process input scores SHALL NOT be forced to dense
    L2 solely for threshold compatibility".
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        found = super().search_candidates(request)
        if request.mode != "hybrid":
            return found
        return [c.model_copy(update={"score": c.dense_distance}) for c in found]


class Bm25OnlyLabel(Miniature):
    """Labels the hybrid hits that a parallel dense probe misses ``bm25_only_no_dense`` (scores untouched).

    Violates R2 "No L2 enrichment overwrite": "the system SHALL NOT emit `bm25_only_no_dense` as the
    primary score label on new hits". The label still canonicalizes to ``hybrid``.
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        found = super().search_candidates(request)
        if request.mode != "hybrid":
            return found
        dense = dense_probe(self._prepared(), request)
        relabel = {"score_label": "bm25_only_no_dense"}
        return [c if _key(c) in dense else c.model_copy(update=relabel) for c in found]


class Bm25OnlyMaxL2Placeholder(Miniature):
    """Gives the hybrid hits a parallel dense probe misses the weak placeholder score maxL2Distance (2.0).

    Violates R2: "SHALL NOT assign max-L2 weak placeholders" (under its label; the label stays hybrid).
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        found = super().search_candidates(request)
        if request.mode != "hybrid":
            return found
        dense = dense_probe(self._prepared(), request)
        weak = {"score": LEGACY_MAX_L2, "raw_score": LEGACY_MAX_L2}
        return [c if _key(c) in dense else c.model_copy(update=weak) for c in found]


# -- R7 optional dense distance --------------------------------------------------------------------


class DenseDistanceReordersSearch(Miniature):
    """Re-sorts hybrid hits by their attached ``denseDistance`` and renumbers ``originalRank`` 1..n.

    Violates R7: "Retrieval order SHALL remain the hybrid/RRF order", and R1 "Hybrid mode labels hits as
    hybrid": "hit order SHALL follow the hybrid/RRF result order via `originalRank`".
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        found = super().search_candidates(request)
        if request.mode != "hybrid":
            return found
        nearest = sorted(found, key=lambda c: (c.dense_distance, c.original_rank))
        return [c.model_copy(update={"original_rank": r}) for r, c in enumerate(nearest, start=1)]


class DenseDistanceRelabels(Miniature):
    """Labels a hybrid hit ``dense`` whenever it carries a ``denseDistance``.

    Violates R7 "Dense distance does not replace hybrid label": "scoreLabel SHALL still canonicalize to
    hybrid", and R1 "Hybrid mode labels hits as hybrid".
    """

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        found = super().search_candidates(request)
        if request.mode != "hybrid":
            return found
        relabel = {"score_label": "dense"}
        return [c if c.dense_distance is None else c.model_copy(update=relabel) for c in found]


# -- R5 the category retry -------------------------------------------------------------------------


class RetryOnRawScore(Miniature):
    """Decides the category retry from the top hit's raw score read as a similarity, not from quality.

    Violates R5: "category-filter low-quality retry decisions SHALL use the normalized `qualityScore`".
    A dense L2 distance is small for a good match, so an excellent filtered dense result is retried,
    and a hybrid RRF score (about 0.03) always is.
    """

    def needs_retry(
        self, filtered: PostProcessReply, candidates: Sequence[WireCandidate], config: PostProcessConfig
    ) -> bool:
        if not candidates:
            return True
        top = min(candidates, key=lambda c: c.original_rank)
        return top.score is None or top.score < config.reference_threshold


class RetriesWithoutCategory(Miniature):
    """Runs the "retry" search again when a lookup WITHOUT a category is low quality.

    Against the design note 4.3 reading of R5's "category-filter low-quality retry decisions" (the retry
    drops the category filter, so it exists only for filtered lookups), but the evidence is the same
    search's: only the path's name, the protocol's vocabulary, says "retry". Noted, not failed.
    """

    def lookup(self, request: LookupRequest) -> LookupReply:
        reply = super().lookup(request)
        if request.category is not None or not reply.is_low_quality:
            return reply
        again = super().lookup(request)  # the same unfiltered search, a second time
        return again.model_copy(update={"path": "unfiltered_retry"})
