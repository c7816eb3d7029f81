"""Conforming miniatures written from the spec's sentences: each uses one freedom the spec leaves open.

:class:`FromTheSpec` is a whole implementation written from the spec text (the Milvus plumbing is the
reference store's, reached through :class:`~conformance.adapters.reference.ReferenceAdapter`). Its steps
are small methods so that a variant, here or in :mod:`.spec_faults`, overrides exactly one of them. The
kit must pass every class in this module; a failure means a scenario forbids something the spec allows.

Freedoms, and where the spec (or ``spec-readings``) grants them, are in each class docstring.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

import reference
from conformance._protocol import (
    BASE_CAPABILITIES,
    Hints,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
    WireCandidate,
)
from conformance.adapters.reference import ReferenceAdapter, store_search

__all__ = [
    "DenseHitsCarryDenseDistance",
    "DistinctChunkBatch",
    "ExtraReplyFields",
    "Float32Qualities",
    "FromTheSpec",
    "HighLevelName",
    "HybridDenseProbeDistance",
    "HybridScoresRescaled",
    "HybridWithoutDenseDistance",
    "MergedRetry",
    "NoDroppedList",
    "SteepRankMapping",
    "TwoNamesAboveThreshold",
]


class Scored(NamedTuple):
    """A candidate and the quality the normalizer gave it."""

    candidate: WireCandidate
    quality: float


HIT_FIELDS = ("doc_id", "chunk_index", "original_rank", "score", "score_label", "raw_score", "dense_distance")
Order = Callable[[list[Scored], Hints], list[Scored]]


def evidence_key(candidate: Any) -> str:
    return f"{candidate.doc_id}#{candidate.chunk_index}"


def hint_overlaps(candidate: WireCandidate, hints: Hints) -> tuple[str, ...]:
    """Which L0 hints the chunk mentions (explanations only)."""
    text = candidate.text.casefold()
    found = []
    if hints.domain and hints.domain.casefold() in text:
        found.append("l0_domain_overlap")
    if any(e and e.casefold() in text for e in hints.entities):
        found.append("l0_entity_overlap")
    if any(k and k.casefold() in text for k in hints.keywords):
        found.append("l0_keyword_overlap")
    if hints.source_type and candidate.source_type == hints.source_type:
        found.append("l0_source_type_match")
    return tuple(found)


class FromTheSpec(ReferenceAdapter):
    """The spec, sentence by sentence; every step a method a variant can replace.

    - Labels: ``dense``/``hybrid`` and the three legacy aliases (R1).
    - One normalizer branching on the canonical label: the dense formula, ``denseDistance`` for hybrid
      hits that carry one (R7's MAY), otherwise the linear rank mapping ``max(0, 1 - (r-1)/n)`` (R3).
    - Post-process: stable sort by ``originalRank``, dedup by ``docId#chunkIndex``, per-document cap,
      return-n, every removed candidate listed with the step that removed it (R4).
    - Gates from the highest accepted ``qualityScore`` against the configured thresholds (R5).
    - Lookup: one search per attempt; a low-quality filtered attempt is replaced by one unfiltered retry.
    """

    def describe(self) -> ImplementationInfo:
        return ImplementationInfo(name=type(self).__name__, version="0", capabilities=BASE_CAPABILITIES)

    # -- labels and the normalizer ------------------------------------------------------------------

    def canonicalize_label(self, label: str) -> str:
        return reference.canonicalize_label(label)  # typed error for anything unknown

    def quality_score(self, request: QualityRequest) -> float:
        return self.quality(
            request.score_label,
            request.score,
            rank=request.original_rank,
            batch=request.batch_size,
            max_l2=request.max_l2_distance,
            dense_distance=request.dense_distance,
        )

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
        if self.canonicalize_label(label) == "dense":
            return self.l2_quality(score, max_l2)
        if dense_distance is not None:
            return self.l2_quality(dense_distance, max_l2)
        return self.rank_quality(rank, batch)

    def l2_quality(self, distance: float | None, max_l2: float) -> float:
        """``max(0, 1 - min(d, maxL2)/maxL2)``, null -> 0; the reference checks the inputs (typed errors)."""
        return reference.to_quality_score("dense", distance, rank=1, batch_size=1, max_l2_distance=max_l2)

    def rank_quality(self, rank: int, batch: int) -> float:
        return reference.rank_to_quality(rank, batch)

    # -- post-process ---------------------------------------------------------------------------------

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        return self.assemble(request.candidates, request.config, request.hints)

    def assemble(
        self,
        candidates: Sequence[WireCandidate],
        config: PostProcessConfig,
        hints: Hints,
        *,
        order: Order | None = None,
    ) -> PostProcessReply:
        scored = self.score_batch(candidates, config)
        ordered = (order or self.order)(scored, hints)
        accepted, dropped = self.select(ordered, config)
        top = self.top_quality(accepted, scored)
        return self.reply(accepted, dropped, top, config, hints)

    def score_batch(self, candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[Scored]:
        n = len(candidates)
        return [
            Scored(
                c,
                self.quality(
                    c.score_label,
                    c.score,
                    rank=c.original_rank,
                    batch=n,
                    max_l2=config.max_l2_distance,
                    dense_distance=c.dense_distance,
                ),
            )
            for c in candidates
        ]

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        return sorted(scored, key=lambda s: s.candidate.original_rank)  # sorted() is stable

    def select(
        self, ordered: list[Scored], config: PostProcessConfig
    ) -> tuple[list[Scored], list[tuple[Scored, str]]]:
        """Dedup, cap, return-n. A drop names the first step that removes the candidate."""
        accepted: list[Scored] = []
        dropped: list[tuple[Scored, str]] = []
        seen: set[str] = set()
        per_doc: Counter[str] = Counter()
        for s in ordered:
            key, doc = evidence_key(s.candidate), s.candidate.doc_id
            if key in seen:
                dropped.append((s, "duplicate"))
                continue
            seen.add(key)
            if per_doc[doc] >= config.max_chunks_per_document:
                dropped.append((s, "per_document_cap"))
                continue
            per_doc[doc] += 1  # a chunk cut by return-n still passed the cap: it counts there
            if len(accepted) >= config.return_n:
                dropped.append((s, "return_n"))
                continue
            accepted.append(s)
        return accepted, dropped

    def top_quality(self, accepted: list[Scored], scored: list[Scored]) -> float | None:
        return max((s.quality for s in accepted), default=None)

    def level(self, top: float | None, config: PostProcessConfig, hints: Hints) -> str:
        if top is None:
            return "NONE"
        if top >= config.highly_relevant_threshold:
            return "PRECISE"
        if top >= config.reference_threshold:
            return "RELEVANT"
        return "WEAK" if top > 0 else "NONE"

    def low_quality(
        self, top: float | None, config: PostProcessConfig, hints: Hints, accepted: list[Scored]
    ) -> bool:
        return top is None or top < config.reference_threshold

    def block(self, s: Scored, hints: Hints) -> dict[str, Any]:
        c = s.candidate
        return {
            "evidence_key": evidence_key(c),
            "doc_id": c.doc_id,
            "chunk_index": c.chunk_index,
            "original_rank": c.original_rank,
            "quality_score": s.quality,
            "score_label": self.canonicalize_label(c.score_label),
            "hit_reasons": ("retrieval_rank", *hint_overlaps(c, hints)),
        }

    def reply(
        self,
        accepted: list[Scored],
        dropped: list[tuple[Scored, str]],
        top: float | None,
        config: PostProcessConfig,
        hints: Hints,
    ) -> PostProcessReply:
        return PostProcessReply.model_validate(
            {
                "blocks": [self.block(s, hints) for s in accepted],
                "dropped": [
                    {
                        "evidence_key": evidence_key(s.candidate),
                        "original_rank": s.candidate.original_rank,
                        "reason": reason,
                    }
                    for s, reason in dropped
                ],
                "relevance_level": self.level(top, config, hints),
                "top_quality_score": top,
                "is_low_quality": self.low_quality(top, config, hints, accepted),
            }
        )

    # -- search and lookup ----------------------------------------------------------------------------

    def engine_search(self, request: SearchRequest) -> list[Any]:
        """Candidates (reference models) in engine order; search and lookup both come through here."""
        return store_search(self._prepared(), request)

    def search(self, request: SearchRequest) -> SearchReply:
        return SearchReply.model_validate({"hits": [self.hit(c) for c in self.engine_search(request)]})

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {key: getattr(candidate, key) for key in HIT_FIELDS}

    def retrieve(self, request: LookupRequest, category: str | None) -> list[WireCandidate]:
        search = SearchRequest(
            query_text=request.query_text,
            query_vector=request.query_vector,
            mode=request.mode,
            k=request.retrieve_k,
            category=category,
            rrf_k=request.rrf_k,
        )
        return [WireCandidate.model_validate(c.model_dump()) for c in self.engine_search(search)]

    def attempt(self, request: LookupRequest, category: str | None) -> PostProcessReply:
        return self.assemble(self.retrieve(request, category), request.config, request.hints)

    def lookup(self, request: LookupRequest) -> LookupReply:
        if request.category is None:
            return self.answer(self.attempt(request, None), "unfiltered")
        first = self.attempt(request, request.category)
        if not self.should_retry(first, request.config):
            return self.answer(first, "filtered")
        return self.after_retry(first, self.attempt(request, None), request)

    def should_retry(self, first: PostProcessReply, config: PostProcessConfig) -> bool:
        return first.is_low_quality

    def after_retry(
        self, first: PostProcessReply, retry: PostProcessReply, request: LookupRequest
    ) -> LookupReply:
        return self.answer(retry, "unfiltered_retry")

    def answer(self, reply: PostProcessReply, path: str) -> LookupReply:
        return LookupReply(**reply.model_dump(), path=path)


# -- numbers -----------------------------------------------------------------------------------------


class Float32Qualities(FromTheSpec):
    """Qualities computed in float32 and returned as ``numpy.float32``; ranks as ``numpy.int64``.

    Freedom: readings 11 (the formula is the spec's, the precision is not) and the protocol's one
    number rule (numpy scalars are numbers). A Java or Go implementation computes exactly this.
    """

    def l2_quality(self, distance: float | None, max_l2: float) -> Any:
        super().l2_quality(distance, max_l2)  # the same input checks, typed errors
        if distance is None:
            return np.float32(0.0)
        d, m = np.float32(max(distance, 0.0)), np.float32(max_l2)
        return np.maximum(np.float32(0.0), np.float32(1.0) - np.minimum(d, m) / m)

    def rank_quality(self, rank: int, batch: int) -> Any:
        super().rank_quality(rank, batch)
        r, n = np.float32(rank), np.float32(batch)
        return np.maximum(np.float32(0.0), np.float32(1.0) - (r - np.float32(1.0)) / n)

    def block(self, s: Scored, hints: Hints) -> dict[str, Any]:
        out = super().block(s, hints)
        out["original_rank"] = np.int64(out["original_rank"])
        out["chunk_index"] = np.int64(out["chunk_index"])
        return out


# -- gates -------------------------------------------------------------------------------------------


class HighLevelName(FromTheSpec):
    """Its own level names: ``HIGH`` at and above the highly-relevant threshold, ``MEDIUM``/``LOW`` below.

    Freedom: R5 "MAY assign PRECISE or HIGHLY_RELEVANT" permits, it does not oblige (readings 6
    and 12); the level is the same with and without hints.
    """

    def level(self, top: float | None, config: PostProcessConfig, hints: Hints) -> str:
        if top is None:
            return "EMPTY"
        if top >= config.highly_relevant_threshold:
            return "HIGH"
        return "MEDIUM" if top >= config.reference_threshold else "LOW"


class TwoNamesAboveThreshold(FromTheSpec):
    """``HIGHLY_RELEVANT`` from the highly-relevant threshold up, ``PRECISE`` from 0.9 up; hints play no part.

    Freedom: R5 "the system MAY assign PRECISE or HIGHLY_RELEVANT": either name at or above the
    threshold, here chosen by the top quality alone (readings 12).
    """

    def level(self, top: float | None, config: PostProcessConfig, hints: Hints) -> str:
        name = super().level(top, config, hints)
        if name == "PRECISE" and top is not None and top < max(0.9, config.highly_relevant_threshold):
            return "HIGHLY_RELEVANT"
        return name


class ExtraReplyFields(FromTheSpec):
    """Replies carry fields the protocol does not define: a completeness hint and debug information.

    Freedom: R5 names "completeness hints"; readings 13 (unknown optional reply fields are
    reported, never failed).
    """

    def block(self, s: Scored, hints: Hints) -> dict[str, Any]:
        out = super().block(s, hints)
        out["excerpt"] = s.candidate.text[:80]
        out["debug"] = {"rawScore": s.candidate.score, "denseDistance": s.candidate.dense_distance}
        return out

    def reply(self, accepted, dropped, top, config, hints):  # type: ignore[no-untyped-def]
        base = super().reply(accepted, dropped, top, config, hints)
        if top is not None and top >= config.highly_relevant_threshold:
            completeness = "SUFFICIENT"
        elif top is not None and top >= config.reference_threshold:
            completeness = "PARTIAL"
        else:
            completeness = "INSUFFICIENT"
        extra = {"completeness": completeness, "debug": {"candidates": len(accepted) + len(dropped)}}
        return PostProcessReply.model_validate({**base.model_dump(), **extra})

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {**super().hit(candidate), "text": candidate.text, "category": candidate.category}


class NoDroppedList(FromTheSpec):
    """Replies list no removed candidates at all.

    Freedom: the protocol's ``dropped`` is optional ("optionally every removed candidate, then all of
    them"); the spec itself never names a dropped list.
    """

    def reply(self, accepted, dropped, top, config, hints):  # type: ignore[no-untyped-def]
        return super().reply(accepted, [], top, config, hints)


# -- hybrid rank mapping -----------------------------------------------------------------------------


class SteepRankMapping(FromTheSpec):
    """Hybrid rank mapping ``max(0, 1 - (r-1)/3)``: 1.0, 0.67, 0.33, then 0 from rank 4 on.

    Freedom: R3 fixes only rank 1 -> 1.0 and monotone non-increasing without raw magnitudes
    (readings 4); a 0 from an allowed mapping is not a placeholder (readings 14).
    """

    def rank_quality(self, rank: int, batch: int) -> float:
        super().rank_quality(rank, batch)  # input checks
        return max(0.0, 1.0 - (rank - 1) / 3)


class DistinctChunkBatch(FromTheSpec):
    """The hybrid rank mapping's batch size ``n`` counts distinct chunks (after dedup), not candidates.

    Freedom: readings 4 ("Batch" may be the candidates before or after dedup).
    """

    def score_batch(self, candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[Scored]:
        n = len({evidence_key(c) for c in candidates}) or 1
        return [
            Scored(
                c,
                self.quality(
                    c.score_label,
                    c.score,
                    rank=c.original_rank,
                    batch=n,
                    max_l2=config.max_l2_distance,
                    dense_distance=c.dense_distance,
                ),
            )
            for c in candidates
        ]


# -- lookup retry ------------------------------------------------------------------------------------


class MergedRetry(FromTheSpec):
    """After a low-quality filtered attempt, the evidence merges both attempts instead of replacing.

    Order (its definition): the unfiltered retry's blocks in their rank order, then the filtered
    attempt's blocks not already present, in theirs; the per-document cap and return-n apply to the
    merged list; gates read the merged blocks. No dropped list (two batches, no single one to account
    for). Freedom: the design note's "合并/替换为 retry 结果" and readings 7.
    """

    def after_retry(
        self, first: PostProcessReply, retry: PostProcessReply, request: LookupRequest
    ) -> LookupReply:
        config = request.config
        merged, seen, per_doc = [], set(), Counter()
        for b in (*retry.blocks, *first.blocks):
            if b.evidence_key in seen or per_doc[b.doc_id] >= config.max_chunks_per_document:
                continue
            if len(merged) >= config.return_n:
                break
            seen.add(b.evidence_key)
            per_doc[b.doc_id] += 1
            merged.append(b)
        top = max((b.quality_score for b in merged), default=None)
        reply = PostProcessReply(
            blocks=tuple(merged),
            relevance_level=self.level(top, config, request.hints),
            top_quality_score=top,
            is_low_quality=top is None or top < config.reference_threshold,
        )
        return self.answer(reply, "unfiltered_retry")


# -- hybrid hits -------------------------------------------------------------------------------------


class HybridWithoutDenseDistance(FromTheSpec):
    """Hybrid search attaches no ``denseDistance``: hybrid quality and gates come from rank alone.

    Freedom: R7 "MAY use that distance"; without it R3's rank mapping applies.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        return [h.model_copy(update={"dense_distance": None}) for h in hits]


class HybridScoresRescaled(FromTheSpec):
    """Hybrid hit ``score`` is the fused score divided by the best one (rank 1 -> 1.0); no ``rawScore``.

    Freedom: the design note lets the hybrid score be the engine's fused score "on its own scale; order
    does not read its magnitude"; the order of the scores is the RRF order. Not a dense L2 (R2).
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid" or not hits:
            return hits
        best = max(h.score for h in hits) or 1.0
        return [h.model_copy(update={"score": h.score / best, "raw_score": None}) for h in hits]


class DenseHitsCarryDenseDistance(FromTheSpec):
    """Dense hits also carry ``denseDistance``, equal to their ``score`` (the same L2 distance).

    Freedom: ``denseDistance`` is optional information; on a dense hit it can only be its score, and the
    dense formula reads the score.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "dense":
            return hits
        return [h.model_copy(update={"dense_distance": h.score}) for h in hits]


class HybridDenseProbeDistance(FromTheSpec):
    """``denseDistance`` comes from a second, dense-only search with the same limit and filter.

    Hits the dense probe did not return get no ``denseDistance`` (they fall back to the rank mapping);
    score, label and order stay the hybrid search's. Freedom: R7, and readings 9 ("Issuing an extra
    dense search is not itself forbidden ... it must not change score, label or order").
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid":
            return hits
        probe = store_search(self._prepared(), request.model_copy(update={"mode": "dense"}))
        distance = {evidence_key(p): p.score for p in probe}
        return [h.model_copy(update={"dense_distance": distance.get(evidence_key(h))}) for h in hits]
