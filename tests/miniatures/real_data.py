"""Faults only real data shows: each one passes the hand-made scenario corpus and breaks on a knowledge base
like a real team's (the one every run generates, :mod:`conformance.corpus._knowledge_base`).

They were seen among the escapes of the kit before it generated such data: a blank hybrid query that
falls back to dense, a category value with a space that the filter splits, evidence blocks that echo a
legacy alias, the retry's evidence re-sorted by quality. Each is a :class:`FromTheSpec` with one step
replaced; its docstring quotes the spec text it breaks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import reference
from conformance.boundary._protocol import LookupReply, LookupRequest, PostProcessReply, SearchRequest
from reference.store._schema import DENSE_FIELD, OUTPUT_FIELDS, SPARSE_FIELD, category_filter
from reference.store._vectors import checked_array
from tests.miniatures.from_the_spec import FromTheSpec, Scored

__all__ = [
    "BlankQueryFallsBackToDense",
    "CategorySplitOnSpace",
    "EvidenceEchoesAlias",
    "QuotedCategoryUnescaped",
    "RetryResortedByQuality",
    "hybrid_candidates",
]


def hybrid_candidates(
    miniature: FromTheSpec,
    request: SearchRequest,
    *,
    sub_limit: int | None = None,
    dense_filter: str | None = None,
    sparse_filter: str | None = None,
    rrf_k: int | None = None,
) -> list[Any]:
    """A hybrid search on the reference store's collection with the given sub-search limit and filters
    (default: the request's), as reference candidates with their dense distances."""
    from pymilvus import AnnSearchRequest, RRFRanker

    store = miniature._prepared()
    vector = checked_array(request.query_vector, store.dim, store.collection)
    expr = category_filter(request.category) if request.category is not None else ""
    limit = sub_limit or request.k
    legs = [
        AnnSearchRequest(
            data=[vector.tolist()],
            anns_field=DENSE_FIELD,
            param={"metric_type": "L2", "params": {}},
            limit=limit,
            expr=expr if dense_filter is None else dense_filter,
        )
    ]
    if request.query_text.strip():
        legs.append(
            AnnSearchRequest(
                data=[request.query_text],
                anns_field=SPARSE_FIELD,
                param={"metric_type": "BM25"},
                limit=limit,
                expr=expr if sparse_filter is None else sparse_filter,
            )
        )
    found = store.client.hybrid_search(
        store.collection,
        legs,
        RRFRanker(request.rrf_k if rrf_k is None else rrf_k),
        limit=request.k,
        output_fields=[*OUTPUT_FIELDS, DENSE_FIELD],
    )[0]
    out = []
    for rank, h in enumerate(found, start=1):
        e = h["entity"]
        diff = np.asarray(e[DENSE_FIELD], dtype=np.float32) - vector
        out.append(
            reference.Candidate(
                doc_id=e["doc_id"],
                chunk_index=int(e["chunk_index"]),
                text=e["text"],
                original_rank=rank,
                score=float(h["distance"]),
                score_label="hybrid",
                raw_score=float(h["distance"]),
                dense_distance=float(np.sum(diff * diff, dtype=np.float32)),
                category=e.get("category") or None,
                source_type=e.get("source_type") or None,
            )
        )
    return out


class BlankQueryFallsBackToDense(FromTheSpec):
    """score-labels: "WHEN `retrieval.search.mode` is `hybrid` and search returns hits THEN each hit SHALL
    have `scoreLabel` canonicalizing to `hybrid`". A hybrid search whose query text is blank (no term for
    BM25) runs the dense search instead, and its hits come back as the dense search labels them: `dense`,
    with their L2 distance as score.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode == "hybrid" and not request.query_text.strip():
            return super().engine_search(request.model_copy(update={"mode": "dense"}))
        return super().engine_search(request)


class CategorySplitOnSpace(FromTheSpec):
    """quality-gates: "category-filter low-quality retry decisions SHALL use the normalized
    `qualityScore`" of the category's result. The filter is built from the category's first word, as if
    categories never held a space: "Customer Support" searches "Customer" (which no chunk has), so the
    filtered attempt is empty and retries, or "FAQ archive" searches nothing of its own.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.category is not None and " " in request.category.strip():
            request = request.model_copy(update={"category": request.category.split()[0]})
        return super().engine_search(request)


class QuotedCategoryUnescaped(FromTheSpec):
    """quality-gates: a category filter of the category's result. Quotes in the category value are
    dropped instead of escaped in the filter expression (``O'Reilly Media`` becomes ``OReilly Media``,
    ``say "cheese"`` becomes ``say cheese``), so the filter matches no chunk of that category.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.category is not None and any(q in request.category for q in "'\""):
            stripped = request.category.replace("'", "").replace('"', "")
            request = request.model_copy(update={"category": stripped})
        return super().engine_search(request)


class EvidenceEchoesAlias(FromTheSpec):
    """score-labels: "SHALL set `scoreLabel` to `dense` or `hybrid` (after any legacy alias
    canonicalization)" and "SHALL NOT treat `bm25_only_no_dense`, `rrf_fused`, or `l2_distance` as
    distinct first-class labels in new emissions". Evidence blocks carry their candidate's label as it
    came in: a candidate labelled ``rrf_fused`` gives a block labelled ``rrf_fused`` (its quality is the
    canonical label's).
    """

    def block(self, s: Scored, hints: Any) -> dict[str, Any]:
        return {**super().block(s, hints), "score_label": s.candidate.score_label}


class RetryResortedByQuality(FromTheSpec):
    """rank-order: "Evidence post-processing SHALL order candidates by `originalRank` ascending". After a
    low-quality filtered attempt, the retry's evidence is re-sorted by qualityScore, best first, "so the
    agent sees the strongest evidence first". In dense mode that is the rank order anyway; in hybrid mode
    with denseDistance it is not.
    """

    def after_retry(
        self, first: PostProcessReply, retry: PostProcessReply, request: LookupRequest
    ) -> LookupReply:
        blocks: Sequence[Any] = sorted(retry.blocks, key=lambda b: -b.quality_score)
        return self.answer(retry.model_copy(update={"blocks": tuple(blocks)}), "unfiltered_retry")
