"""A whole implementation written from the spec text, step by step, for the spec-written miniatures.

The Milvus plumbing is the reference store's, reached through
:class:`~conformance.adapters.reference.ReferenceAdapter`; everything the spec says is written here
again from its sentences. Each step is a small method, so that a variant (a freedom in
:mod:`.spec_freedoms`, a fault in :mod:`.spec_faults`) overrides exactly one of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import reference
from conformance.adapters.reference import ReferenceAdapter, store_search
from conformance.boundary._protocol import (
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

__all__ = ["HIT_FIELDS", "FromTheSpec", "Scored", "evidence_key", "hint_overlaps"]


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

    # canonicalize_label is the reference adapter's: a typed error for anything unknown.

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

    def batch_size(self, candidates: Sequence[WireCandidate]) -> int:
        """The ``n`` of the hybrid rank mapping: every candidate handed in."""
        return len(candidates)

    def score_batch(self, candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[Scored]:
        n = self.batch_size(candidates)
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
        search = request.search(category)
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
