"""Faults that only inputs of one class show, and a conforming cache (issue 33's escapes).

Each fault passed the kit while its input class was drawn only by some seeds, or never: ids that collide
when concatenated, exact dense ties watched at the engine, a retry that is low quality too, canonical
labels handed to ``canonicalize_label``, hints that match nothing on a good filtered result, a hint list
long enough to cross ranks, a document over several categories under a cap, hybrid candidates without a
fused score, a retry whose hits overlap the filtered walk, ranks above the batch's count (the category
filters are in :mod:`.category_filters`). Every run now draws each class in its explicit part
(``features/spec/input-model.md``). Each class here is a
:class:`~tests.miniatures.from_the_spec.FromTheSpec` with one step replaced; its docstring quotes the
spec's words it breaks. :class:`CachedSearch` conforms: answering an identical request again from memory
is not another kind of engine call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np

import reference
from conformance.boundary._protocol import (
    Hints,
    LookupReply,
    LookupRequest,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)
from reference.store._schema import (
    KEY_FIELD,
    SPARSE_FIELD,
)
from tests.miniatures.from_the_spec import FromTheSpec, Scored, evidence_key, hint_overlaps
from tests.miniatures.real_data import hybrid_candidates
from tests.miniatures.spec_freedoms import HybridDenseProbeDistance

__all__ = [
    "CachedSearch",
    "CanonicalizeRaisesOnCanonical",
    "CapPerCategoryAndDocument",
    "DeclinesRankPastBatch",
    "DenseFromMemory",
    "DropsNullFusedScores",
    "KeyWithoutSeparator",
    "LookupGlueL2Backfill",
    "MergedRetryFilteredFirst",
    "RankOnHighestRank",
    "RetryDedupsAgainstFilteredWalk",
    "RetryOnHintsWithoutMatch",
    "ThirdAttemptFromDense",
    "TieBreakBoostCrossesRanks",
    "TieBrokenByKeywordSearch",
    "UnclampedRankOnCount",
]


class CachedSearch(FromTheSpec):
    """Conforms. Memoizes every engine search on the whole request, and drops the memory on each prepare:
    an identical request is answered again without reaching Milvus, with the dense search's own answer.

    Freedom: "mode dense SHALL call dense ANN only" forbids other kinds of calls (hybrid, keyword, a scalar
    query for other rows); an answer that equals the dense search's, repeated from memory, makes none.
    """

    def __init__(self) -> None:
        super().__init__()
        self._memory: dict[str, list[Any]] = {}

    def prepare(self, endpoint: Any, corpus: Any) -> None:
        self._memory.clear()
        super().prepare(endpoint, corpus)

    def cache_key(self, request: SearchRequest) -> str:
        """The memory's key: the whole request (a cache keyed without a field is a fault, field_pairs)."""
        return request.model_dump_json()

    def engine_search(self, request: SearchRequest) -> list[Any]:
        key = self.cache_key(request)
        if key not in self._memory:
            self._memory[key] = super().engine_search(request)
        return list(self._memory[key])


class DenseFromMemory(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only" ("a same-collection baseline that runs dense
    ANN only"). Dense mode never asks Milvus: it keeps the corpus handed to ``prepare`` and ranks it by
    squared L2 in numpy (float32), the category filter applied in memory. Its answers equal the engine's;
    no dense ANN search is ever made, not even the first time a request is asked.
    """

    def prepare(self, endpoint: Any, corpus: Any) -> None:
        super().prepare(endpoint, corpus)
        self._chunks = list(corpus.chunks)
        self._vectors = np.asarray([c.vector for c in corpus.chunks], dtype=np.float32)

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "dense":
            return super().engine_search(request)
        query = np.asarray(request.query_vector, dtype=np.float32)
        distances = ((self._vectors - query) ** 2).sum(axis=1, dtype=np.float32)
        order = [
            int(i)
            for i in np.argsort(distances, kind="stable")
            if request.category is None or self._chunks[int(i)].category == request.category
        ][: request.k]
        return [
            reference.Candidate(
                doc_id=self._chunks[i].doc_id,
                chunk_index=self._chunks[i].chunk_index,
                text=self._chunks[i].text,
                original_rank=rank,
                score=float(distances[i]),
                score_label="dense",
                raw_score=float(distances[i]),
                category=self._chunks[i].category,
                source_type=self._chunks[i].source_type,
            )
            for rank, i in enumerate(order, start=1)
        ]


# -- post-process: colliding ids, several categories, null fused scores, long hint lists ------------------


class KeyWithoutSeparator(FromTheSpec):
    """rank-order: "(subject only to dedup/caps removing one of them)": dedup is by chunk (docId and
    chunkIndex). The dedup key is ``docId + str(chunkIndex)`` without a separator, so ``doc1``/11 and
    ``doc11``/1 are one chunk, and the second is dropped as a duplicate.
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        seen: set[str] = set()
        kept, dropped = [], []
        for s in ordered:
            key = f"{s.candidate.doc_id}{s.candidate.chunk_index}"
            if key in seen:
                dropped.append((s, "duplicate"))
                continue
            seen.add(key)
            kept.append(s)
        accepted, later = super().select(kept, config)
        return accepted, dropped + later


class CapPerCategoryAndDocument(FromTheSpec):
    """rank-order: "more than `rag.max-chunks-per-document` chunks share a docId ... only the best-ranked
    (lowest `originalRank`) up to the cap SHALL remain". The cap counts chunks per (category, docId): a
    document whose chunks carry several categories keeps the cap's worth in each.
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        accepted: list[Scored] = []
        dropped: list[tuple[Scored, str]] = []
        seen: set[str] = set()
        per_doc: Counter[tuple[str | None, str]] = Counter()
        for s in ordered:
            key, group = evidence_key(s.candidate), (s.candidate.category, s.candidate.doc_id)
            if key in seen:
                dropped.append((s, "duplicate"))
                continue
            seen.add(key)
            if per_doc[group] >= config.max_chunks_per_document:
                dropped.append((s, "per_document_cap"))
                continue
            per_doc[group] += 1
            if len(accepted) >= config.return_n:
                dropped.append((s, "return_n"))
                continue
            accepted.append(s)
        return accepted, dropped


class DropsNullFusedScores(FromTheSpec):
    """rank-order: "only the best-ranked (lowest `originalRank`) ... SHALL remain": only dedup, the caps and
    return-n remove candidates. Hybrid candidates whose fused ``score`` is null are dropped silently
    before anything else, as if a missing score were a missing hit.
    """

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        kept = [
            c
            for c in request.candidates
            if not (self.canonicalize_label(c.score_label) == "hybrid" and c.score is None)
        ]
        return self.assemble(kept, request.config, request.hints)


class TieBreakBoostCrossesRanks(FromTheSpec):
    """rank-order: "It SHALL NOT re-order primarily by L0 domain/entity/keyword/source_type additive
    boosts." The legacy boost is kept "only as a tie-break": the sort key is ``originalRank - boost`` with
    a tenth of a rank per matching hint term. With a few terms it breaks ties only; a long hint list
    moves a chunk matching many terms ahead of better-ranked ones.
    """

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        def key(s: Scored) -> float:
            return s.candidate.original_rank - 0.1 * len(hint_overlaps_terms(s.candidate, hints))

        return sorted(scored, key=key)


def hint_overlaps_terms(candidate: WireCandidate, hints: Hints) -> list[str]:
    """Every hint term (domain, entities, keywords) the candidate's text contains, case-insensitively."""
    text = candidate.text.casefold()
    terms = [*(hints.entities or ()), *(hints.keywords or ()), *([hints.domain] if hints.domain else [])]
    return [t for t in terms if t and t.casefold() in text]


# -- labels --------------------------------------------------------------------------------------------


class CanonicalizeRaisesOnCanonical(FromTheSpec):
    """score-labels: "SHALL set `scoreLabel` to `dense` or `hybrid` (after any legacy alias
    canonicalization)". ``canonicalize_label`` maps the three legacy aliases and raises for anything else,
    ``dense`` and ``hybrid`` included: its table holds the aliases only. Everything else keeps its own
    labels, so search, post-process and the normalizer conform.
    """

    _ALIASES: ClassVar[dict[str, str]] = {
        "l2_distance": "dense",
        "rrf_fused": "hybrid",
        "bm25_only_no_dense": "hybrid",
    }

    def canonicalize_label(self, label: str) -> str:
        if label not in self._ALIASES:
            raise ValueError(f"unknown legacy score label {label!r}")
        return self._ALIASES[label]

    def quality(
        self,
        label: str,
        score: float | None,
        *,
        rank: int,
        batch: int,
        max_l2: float,
        dense_distance: float | None = None,
    ) -> float:
        if self._ALIASES.get(label, label) == "dense":  # its own table, not the label API
            return self.l2_quality(score, max_l2)
        if dense_distance is not None:
            return self.l2_quality(dense_distance, max_l2)
        return self.rank_quality(rank, batch)

    def block(self, s: Scored, hints: Hints) -> dict[str, Any]:
        c = s.candidate
        return {
            "evidence_key": evidence_key(c),
            "doc_id": c.doc_id,
            "chunk_index": c.chunk_index,
            "original_rank": c.original_rank,
            "quality_score": s.quality,
            "score_label": self._ALIASES.get(c.score_label, c.score_label),
            "hit_reasons": ("retrieval_rank", *hint_overlaps(c, hints)),
        }


# -- search and lookup: exact ties, the retry (category filters: category_filters.py) -------------------


class TieBrokenByKeywordSearch(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only". Dense hits at exactly the same distance are
    ordered by a BM25 search of the query text over the tied chunks (the better keyword match first); the
    ranks and scores are otherwise the ANN's. Only exact ties make the extra call.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "dense" or not any(a.score == b.score for a, b in pairwise(hits)):
            return hits
        store = self._prepared()
        text = request.query_text.strip() or "tie"
        found = store.client.search(
            store.collection,
            data=[text],
            anns_field=SPARSE_FIELD,
            limit=request.k,
            output_fields=[KEY_FIELD],
            search_params={"metric_type": "BM25"},
        )[0]
        lexical = {h["entity"][KEY_FIELD]: -float(h["distance"]) for h in found}
        ordered = sorted(hits, key=lambda c: (c.score, lexical.get(evidence_key(c), 0.0)))
        return [c.model_copy(update={"original_rank": rank}) for rank, c in enumerate(ordered, start=1)]


class RetryOnHintsWithoutMatch(FromTheSpec):
    """quality-gates: "category-filter low-quality retry decisions SHALL use the normalized `qualityScore`
    ... SHALL NOT require L0 hint contains-match to treat the result as usable when quality meets
    threshold". The filtered attempt is also retried when hints were given and no accepted block contains
    any of them, though its quality meets the threshold.
    """

    def lookup(self, request: LookupRequest) -> LookupReply:
        hinted = request.hints != Hints()
        if request.category is None or not hinted:
            return super().lookup(request)
        first = self.attempt(request, request.category)
        matched = any(len(b.hit_reasons) > 1 for b in first.blocks)
        if not first.is_low_quality and matched:
            return self.answer(first, "filtered")
        return self.after_retry(first, self.attempt(request, None), request)


class RetryAfterTheWalk(FromTheSpec):
    """A lookup whose retry sees the candidates the filtered attempt walked (:meth:`retry_after`)."""

    def lookup(self, request: LookupRequest) -> LookupReply:
        if request.category is None:
            return super().lookup(request)
        walked = self.retrieve(request, request.category)
        first = self.assemble(walked, request.config, request.hints)
        if not self.should_retry(first, request.config):
            return self.answer(first, "filtered")
        return self.retry_after(walked, request)

    def retry_after(self, walked: list[WireCandidate], request: LookupRequest) -> LookupReply:
        raise NotImplementedError


class RetryDedupsAgainstFilteredWalk(RetryAfterTheWalk):
    """quality-gates (design note §4.3): "the retry result is merged or replaces the filtered one". The
    retry skips every chunk the filtered attempt already walked, "so the agent sees new evidence": the
    category's best chunks, which the unfiltered search finds again, are lost.
    """

    def retry_after(self, walked: list[WireCandidate], request: LookupRequest) -> LookupReply:
        seen = {evidence_key(c) for c in walked}
        fresh = [c for c in self.retrieve(request, None) if evidence_key(c) not in seen]
        first = self.assemble(walked, request.config, request.hints)
        return self.after_retry(first, self.assemble(fresh, request.config, request.hints), request)


class MergedRetryFilteredFirst(RetryAfterTheWalk):
    """Conforming (readings 7): the retry merges, "合并/替换为 retry 结果": the filtered hits first, then the
    unfiltered retry's, renumbered 1..m and post-processed as one batch. When the filtered hits alone
    fill return-n, the retry's hits are all cut ("`rag.return-n` SHALL still bound total blocks")."""

    def retry_after(self, walked: list[WireCandidate], request: LookupRequest) -> LookupReply:
        merged = [*walked, *self.retrieve(request, None)]
        renumbered = [c.model_copy(update={"original_rank": i}) for i, c in enumerate(merged, start=1)]
        return self.answer(self.assemble(renumbered, request.config, request.hints), "unfiltered_retry")


class ThirdAttemptFromDense(HybridDenseProbeDistance):
    """quality-gates (design note §4.3): "filtered -> unfiltered retry when isLowQuality ... the retry
    result is merged or replaces the filtered one": two attempts. Hybrid hits carry a dense probe's
    distance (a conforming freedom, R7), so a hybrid retry can be low quality too; then a third attempt
    answers from an unfiltered dense search instead.
    """

    def after_retry(
        self, first: PostProcessReply, retry: PostProcessReply, request: LookupRequest
    ) -> LookupReply:
        if request.mode != "hybrid" or not retry.is_low_quality:
            return super().after_retry(first, retry, request)
        dense = request.model_copy(update={"mode": "dense"})
        return self.answer(self.attempt(dense, None), "unfiltered_retry")


# -- ranks above the batch's count (readings 22) ------------------------------------------------------


class UnclampedRankOnCount(FromTheSpec):
    """single-normalizer: "The pipeline SHALL compute a `qualityScore` in `[0, 1]`". The linear rank
    mapping ``1 - (r-1)/n`` on the count of candidates, never clamped: within the batch it stays above 0,
    but a second page (ranks 11 to 14 of a batch of four) maps below 0.
    """

    def rank_quality(self, rank: int, batch: int) -> float:
        return 1 - (rank - 1) / batch


class RankOnHighestRank(FromTheSpec):
    """Conforming: the rank mapping's ``n`` is the highest rank handed in (the search's page end), not the
    count; with ranks 1 to m the two agree."""

    def batch_size(self, candidates: Sequence[WireCandidate]) -> int:
        return max((c.original_rank for c in candidates), default=1)


class DeclinesRankPastBatch(RankOnHighestRank):
    """Conforming: its normalizer rejects a rank above the batch size, which the spec's "`originalRank` is
    `r` within a candidate batch of size `n`" leaves undefined; its post-process never asks one."""

    def quality_score(self, request: QualityRequest) -> float:
        if request.original_rank > request.batch_size:
            past = f"originalRank {request.original_rank} is past the batch of {request.batch_size}"
            raise ValueError(past)
        return super().quality_score(request)


# -- attribution: the L2 backfill in the lookup glue -------------------------------------------------


class LookupGlueL2Backfill(FromTheSpec):
    """no-l2-overwrite: "SHALL NOT replace hybrid hit scores with a parallel dense L2 map" and
    "post-process input scores SHALL NOT be forced to dense L2 solely for threshold compatibility". Search
    and post-process conform; the lookup glue rewrites each hybrid hit before post-process: score = its
    dense L2 distance, label ``l2_distance`` (the legacy backfill), so the evidence is dense-labelled with
    the dense formula's qualities.
    """

    def retrieve(self, request: LookupRequest, category: str | None) -> list[WireCandidate]:
        if request.mode != "hybrid":
            return super().retrieve(request, category)
        hits = [
            WireCandidate.model_validate(h.model_dump())
            for h in hybrid_candidates(self, request.search(category))
        ]
        backfill = {"score_label": "l2_distance", "dense_distance": None}
        return [
            h.model_copy(update={**backfill, "score": h.dense_distance, "raw_score": h.dense_distance})
            for h in hits
        ]
