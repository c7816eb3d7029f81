"""Faults that only a hostile value shows: the ten classes of issue 51's sixth fresh set.

Each passed the kit while no run sent the value that decides it; every run now draws every class of
every field (:mod:`conformance.corpus._hostile`). Each class here is a
:class:`~tests.miniatures.from_the_spec.FromTheSpec` with one step replaced, its docstring quoting the
spec's words it breaks. The tenth, a per-document counter in a plain JavaScript object, is a Node.js
program (:mod:`.hostile_node`, ``tests/miniatures/node/plain_object_counter.js``).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from typing import Any

import numpy as np

from conformance.boundary._protocol import PostProcessConfig, SearchRequest
from reference.store._vectors import prepared_query
from tests.miniatures.from_the_spec import FromTheSpec, Scored, evidence_key
from tests.miniatures.spec_freedoms import HybridDenseProbeDistance

__all__ = [
    "CaseFoldedDocIds",
    "DenseDistanceAgainstUnitVectors",
    "DenseQualityFromRawScore",
    "MaxL2FlooredAtAConstant",
    "NfkcRequestedCategory",
    "QuoteDoubledFilter",
    "RoundedDenseResort",
    "TextEqualsQuestionAtZero",
    "TopQualityAsText",
    "TrimmedDocIds",
]


class MaxL2FlooredAtAConstant(FromTheSpec):
    """single-normalizer: "`qualityScore` SHALL equal `max(0, 1 - min(d, maxL2Distance) / maxL2Distance)`".
    The normalizer floors ``maxL2Distance`` at 0.05 (a guard against a division by a tiny setting): only
    a setting below 0.05 shows it."""

    def l2_quality(self, distance: float | None, max_l2: float) -> float:
        return super().l2_quality(distance, max(max_l2, 0.05))


class DenseQualityFromRawScore(FromTheSpec):
    """single-normalizer: "WHEN label is `dense` and score is L2 distance `d` ... `qualityScore` SHALL
    equal ...". Post-process reads a dense candidate's distance from ``rawScore`` when it has one (the
    engine's own number), ``score`` otherwise: only a rawScore that differs from the score shows it."""

    def score_batch(self, candidates: Any, config: PostProcessConfig) -> list[Scored]:
        read = [
            c.model_copy(update={"score": c.raw_score})
            if c.raw_score is not None and self.canonicalize_label(c.score_label) == "dense"
            else c
            for c in candidates
        ]
        scored = super().score_batch(read, config)
        return [Scored(c, s.quality) for c, s in zip(candidates, scored, strict=True)]


class CaseFoldedDocIds(FromTheSpec):
    """rank-order: "WHEN more than `rag.max-chunks-per-document` chunks share a docId THEN only the
    best-ranked ... up to the cap SHALL remain", and each chunk (``docId#chunkIndex``) once. Dedup and
    the cap key on the case-folded docId (ids "are case-insensitive" in the team's store): only two ids
    that differ in case alone show it."""

    def select(
        self, ordered: list[Scored], config: PostProcessConfig
    ) -> tuple[list[Scored], list[tuple[Scored, str]]]:
        accepted: list[Scored] = []
        dropped: list[tuple[Scored, str]] = []
        seen: set[str] = set()
        per_doc: Counter[str] = Counter()
        for s in ordered:
            doc = s.candidate.doc_id.casefold()
            key = f"{doc}#{s.candidate.chunk_index}"
            if key in seen:
                dropped.append((s, "duplicate"))
                continue
            seen.add(key)
            if per_doc[doc] >= config.max_chunks_per_document:
                dropped.append((s, "per_document_cap"))
                continue
            per_doc[doc] += 1
            if len(accepted) >= config.return_n:
                dropped.append((s, "return_n"))
                continue
            accepted.append(s)
        return accepted, dropped


class TopQualityAsText(FromTheSpec):
    """quality-gates: "low-quality detection SHALL compare the top `qualityScore` to the configured
    reference threshold". The top is picked by comparing the qualities as text (they went through a
    string-keyed map): ``"5e-07" > "0.9"``, so only a quality small enough to print in exponent form
    beside a larger one shows it."""

    def top_quality(self, accepted: list[Scored], scored: list[Scored]) -> float | None:
        if not accepted:
            return None
        return float(max(repr(s.quality) for s in accepted))


class _Filtered(FromTheSpec):
    """A search whose filter expression is written by :meth:`expression` (None: the store's own)."""

    def expression(self, category: str) -> str | None:
        return None

    def engine_search(self, request: SearchRequest) -> list[Any]:
        expr = None if request.category is None else self.expression(request.category)
        if expr is None:
            return super().engine_search(request)
        store = self._prepared()
        vector, sent = prepared_query(request.query_vector, store.dim, store.collection)
        try:
            if request.mode == "dense":
                return store._dense(sent, request.k, expr)
            return store._hybrid(request.query_text, vector, sent, request.k, expr, request.rrf_k)
        except Exception:
            return []  # "the filter matched nothing"


class QuoteDoubledFilter(_Filtered):
    """quality-gates (category-filter, readings 18): the filtered attempt searches the category only. The
    filter literal doubles a double quote, SQL style (``say "cheese"`` is written ``"say ""cheese"" "``
    without the space), which Milvus reads as another string or refuses; the refusal is read as "no
    chunk matches". Only a category holding ``"``
    shows it."""

    def expression(self, category: str) -> str | None:
        if '"' not in category:
            return None
        literal = category.replace("\\", "\\\\").replace('"', '""')
        return f'category == "{literal}"'


class NfkcRequestedCategory(_Filtered):
    """quality-gates (category-filter, readings 18): the requested category is NFKC-normalized (a
    "cleaned" user input), the stored ones are not: ``Ｋｂ ① № ﬁles`` asks for ``Kb 1 No files``, which
    no chunk carries. Only a category with compatibility characters shows it."""

    def expression(self, category: str) -> str | None:
        cleaned = unicodedata.normalize("NFKC", category)
        if cleaned == category:
            return None
        literal = cleaned.replace("\\", "\\\\").replace('"', '\\"')
        return f'category == "{literal}"'


class RoundedDenseResort(FromTheSpec):
    """dense-baseline (dense-hits): "a same-collection baseline that runs dense ANN only", its hits the
    nearest chunks in the engine's order. Dense hits are re-sorted by their distance rounded to 4
    decimals, docId breaking the ties (a "deterministic" order): only distances closer than 1e-4 (and
    further apart than the judge's dense tie, 1e-5) whose docIds disagree show it."""

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "dense":
            return hits
        ordered = sorted(hits, key=lambda h: (round(h.score, 4), h.doc_id))
        return [h.model_copy(update={"original_rank": r}) for r, h in enumerate(ordered, start=1)]


class TextEqualsQuestionAtZero(HybridDenseProbeDistance):
    """dense-distance-gates (R7 lets gates use "that distance", the hit's dense L2 distance): a hybrid hit
    whose text equals the question is given ``denseDistance`` 0.0 ("an exact match"), whatever its
    vector. Only a question that repeats one chunk's text with another chunk's vector shows it."""

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid":
            return hits
        question = request.query_text.strip()
        return [
            h.model_copy(update={"dense_distance": 0.0}) if h.text.strip() == question else h for h in hits
        ]


class DenseDistanceAgainstUnitVectors(HybridDenseProbeDistance):
    """dense-distance-gates: a hybrid hit's ``denseDistance`` is computed against its stored vector scaled
    to unit length (the program "normalizes embeddings" for its own dense math), not the vector stored.
    Only stored vectors of another length than 1 show it."""

    def prepare(self, endpoint: Any, corpus: Any) -> None:
        super().prepare(endpoint, corpus)
        self._unit = {
            evidence_key(c): np.asarray(c.vector, dtype=np.float32) / np.linalg.norm(c.vector)
            for c in corpus.chunks
        }

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid":
            return hits
        q = np.asarray(request.query_vector, dtype=np.float32)
        return [
            h.model_copy(update={"dense_distance": float(((self._unit[evidence_key(h)] - q) ** 2).sum())})
            if h.dense_distance is not None
            else h
            for h in hits
        ]


class TrimmedDocIds(FromTheSpec):
    """score-labels and dense-baseline (hybrid-order, dense-hits): hits name the chunks the engine found.
    Every hit's docId is trimmed of edge spaces on the way out (a "clean" step), so ``  spaced out ``
    comes back as another document. Issue 51 item 4: in a filtered search, the failure is the hit's, not
    the category filter's, though the same search without the category, at the same k, may not reach
    that chunk: the kit asks the unfiltered question for every chunk before it blames the filter."""

    def engine_search(self, request: SearchRequest) -> list[Any]:
        return [h.model_copy(update={"doc_id": h.doc_id.strip()}) for h in super().engine_search(request)]
