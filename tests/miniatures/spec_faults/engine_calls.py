"""Faults a kit catches only if it inspects the engine calls an implementation makes in dense mode."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

import reference
from conformance.boundary._protocol import SearchRequest
from reference.store._schema import (
    DENSE_FIELD,
    DOC_FIELD,
    INDEX_FIELD,
    KEY_FIELD,
    OUTPUT_FIELDS,
    SPARSE_FIELD,
    TEXT_FIELD,
    category_filter,
)
from reference.store._vectors import checked_array
from tests.miniatures.from_the_spec import FromTheSpec, evidence_key

__all__ = [
    "DenseAlsoSparseSearch",
    "DenseKeywordProbe",
    "DenseSearchThenQueryByKey",
    "FilterOnDenseLegOnly",
]


# == 3. engine calls a naive kit never inspects =====================================================


def _key(row: dict[str, Any]) -> str:
    """A stored row's evidence key (the store's primary key also names the row's generation)."""
    return f"{row[DOC_FIELD]}#{row[INDEX_FIELD]}"


class DenseKeywordProbe(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only". After the ANN search, dense mode runs a
    ``query`` with ``text like "%word%"`` for the longest query word and flags exact matches on the hits
    (``exactMatch``, an extra field); ranks, scores and labels are the ANN's.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        self._exact: set[str] = set()
        words = [w for w in re.findall(r"[A-Za-z0-9]+", request.query_text) if len(w) >= 3]
        if request.mode == "dense" and words:
            store = self._prepared()
            word = max(words, key=len)
            rows = store.client.query(
                store.collection,
                filter=f'{TEXT_FIELD} like "%{word}%"',
                output_fields=[DOC_FIELD, INDEX_FIELD],
                limit=request.k,
            )
            self._exact = {_key(row) for row in rows}
        return hits

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {**super().hit(candidate), "exactMatch": evidence_key(candidate) in self._exact}


class DenseAlsoSparseSearch(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only". Dense mode also runs a BM25 search on the sparse
    field "to show the lexical score next to the distance" (``bm25``, an extra field on hits); ranks,
    scores and labels are the ANN's.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        self._bm25: dict[str, float] = {}
        if request.mode == "dense" and request.query_text.strip():
            store = self._prepared()
            found = store.client.search(
                store.collection,
                data=[request.query_text],
                anns_field=SPARSE_FIELD,
                limit=request.k,
                filter=category_filter(request.category) if request.category is not None else "",
                output_fields=[DOC_FIELD, INDEX_FIELD],
                search_params={"metric_type": "BM25"},
            )
            self._bm25 = {_key(h["entity"]): float(h["distance"]) for h in found[0]}
        return hits

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {**super().hit(candidate), "bm25": self._bm25.get(evidence_key(candidate))}


def _escaped(key: str) -> str:
    """A key as a Milvus string literal's body: backslashes, quotes and line breaks escaped."""
    return key.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


class DenseSearchThenQueryByKey(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only". The ANN search asks for primary keys only and a
    ``query`` by key fetches text and metadata (a habit from servers that return only ids). The query
    retrieves nothing the ANN did not choose: hydration, which conforms (readings 17).
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "dense":
            return super().engine_search(request)
        store = self._prepared()
        vector = checked_array(request.query_vector, store.dim, store.collection)  # the store's checks
        found = store.client.search(
            store.collection,
            data=[vector.tolist()],
            anns_field=DENSE_FIELD,
            limit=request.k,
            filter=category_filter(request.category) if request.category is not None else "",
            output_fields=[KEY_FIELD],
            search_params={"metric_type": "L2", "params": {}},
        )[0]
        keys = [h[KEY_FIELD] for h in found]
        if not keys:
            return []
        quoted = ", ".join(f'"{_escaped(k)}"' for k in keys)
        rows = store.client.query(
            store.collection, filter=f"{KEY_FIELD} in [{quoted}]", output_fields=OUTPUT_FIELDS
        )
        by_key = {row[KEY_FIELD]: row for row in rows}
        return [
            reference.Candidate(
                doc_id=by_key[key]["doc_id"],
                chunk_index=int(by_key[key]["chunk_index"]),
                text=by_key[key]["text"],
                original_rank=rank,
                score=float(h["distance"]),
                score_label="dense",
                raw_score=float(h["distance"]),
                category=by_key[key].get("category"),
                source_type=by_key[key].get("source_type"),
            )
            for rank, (key, h) in enumerate(zip(keys, found, strict=True), start=1)
        ]


class FilterOnDenseLegOnly(FromTheSpec):
    """quality-gates: the category filter of "category-filter low-quality retry decisions". The category
    filter is set on the dense sub-request only; the BM25 one searches every category, so filtered
    hybrid results hold other categories' chunks (without the category, the search conforms: the
    category's influence is the fault).
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "hybrid" or request.category is None or not request.query_text.strip():
            return super().engine_search(request)
        from pymilvus import AnnSearchRequest, RRFRanker

        store = self._prepared()
        vector = checked_array(request.query_vector, store.dim, store.collection)
        legs = [
            AnnSearchRequest(
                data=[vector.tolist()],
                anns_field=DENSE_FIELD,
                param={"metric_type": "L2", "params": {}},
                limit=request.k,
                expr=category_filter(request.category),
            ),
            AnnSearchRequest(
                data=[request.query_text],
                anns_field=SPARSE_FIELD,
                param={"metric_type": "BM25"},
                limit=request.k,
            ),
        ]
        found = store.client.hybrid_search(
            store.collection,
            legs,
            RRFRanker(request.rrf_k),
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
                    category=e.get("category"),
                    source_type=e.get("source_type"),
                )
            )
        return out
