"""The common ground of every miniature: the reference, re-expressed as small steps that can be swapped.

A miniature breaks (or, in :mod:`tests.miniatures.conforming`, varies) exactly ONE thing. To make that
possible, :class:`Miniature` spells the reference's behaviour out as named steps (the normalizer's two
branches, the order, dedup, caps, the gates, the search and the retry decision), each a method that a
subclass overrides. Every other step stays the reference's, so whatever the kit catches is caused by
the one override. The reference itself still does the work underneath: its normalizer formulas, its
settings validation and its Milvus store.

The steps call each other through ``self`` (post-process asks ``self.quality_score``, lookup asks
``self.post_process`` and ``self.search_candidates``), as one implementation would: a broken normalizer
is broken everywhere it is used, not in one operation only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import reference
from conformance.adapters.reference import ReferenceAdapter, store_search
from conformance.boundary._protocol import (
    BASE_CAPABILITIES,
    Block,
    Dropped,
    Hints,
    Hit,
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

__all__ = ["Miniature", "Scored", "hint_support"]


@dataclass(frozen=True)
class Scored:
    """A candidate and the qualityScore the normalizer gave it, in the order post-process handles them."""

    candidate: WireCandidate
    quality: float


def evidence_key(candidate: WireCandidate) -> str:
    """The spec's chunk identity ``docId#chunkIndex``."""
    return f"{candidate.doc_id}#{candidate.chunk_index}"


def hint_support(candidate: WireCandidate, hints: Hints) -> dict[str, bool]:
    """Which L0 hints a candidate matches by plain string contains (the legacy notion of "support")."""
    text = candidate.text.casefold()
    return {
        "domain": bool(hints.domain) and hints.domain.casefold() in text,  # type: ignore[union-attr]
        "entity": any(e and e.casefold() in text for e in hints.entities),
        "keyword": any(k and k.casefold() in text for k in hints.keywords),
        "source_type": bool(hints.source_type) and candidate.source_type == hints.source_type,
    }


class Miniature(ReferenceAdapter):
    """The reference behaviour, one overridable method per step. On its own it conforms."""

    def describe(self) -> ImplementationInfo:
        # The class name is the miniature's name in reports and in the mutation matrix.
        return ImplementationInfo(
            name=type(self).__name__, version="0", language="python", capabilities=BASE_CAPABILITIES
        )

    # -- the single normalizer -------------------------------------------------------------------

    def quality_score(self, request: QualityRequest) -> float:
        """Branches only on this implementation's canonical label, as the spec asks."""
        label = self.canonicalize_label(request.score_label)
        if label == "dense":
            return self.dense_quality(request.score, request.max_l2_distance)
        if label == "hybrid":
            if request.dense_distance is not None:
                return self.dense_quality(request.dense_distance, request.max_l2_distance)
            return self.hybrid_quality(request)
        raise ValueError(f"no quality branch for label {label!r} (from {request.score_label!r})")

    def dense_quality(self, distance: float | None, max_l2_distance: float) -> float:
        """The spec's L2 formula, by the reference (null distance -> 0)."""
        return reference.to_quality_score(
            "dense", distance, rank=1, batch_size=1, max_l2_distance=max_l2_distance
        )

    def hybrid_quality(self, request: QualityRequest) -> float:
        """Hybrid quality without denseDistance: the rank mapping, never the fused score."""
        return self.rank_quality(request.original_rank, request.batch_size)

    def rank_quality(self, rank: int, batch_size: int) -> float:
        """The reference's linear mapping ``max(0, 1 - (r - 1) / n)``."""
        return reference.rank_to_quality(rank, batch_size)

    # -- post-process ----------------------------------------------------------------------------

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        config, hints = request.config, request.hints
        batch = list(request.candidates)
        size = self.batch_size(batch)
        scored = [Scored(c, self.candidate_quality(c, size, config)) for c in batch]
        accepted, dropped = self.arrange(scored, hints, config)
        blocks = tuple(self.block(s, hints) for s in accepted)
        top = self.top_quality(blocks)
        return PostProcessReply(
            blocks=blocks,
            dropped=tuple(dropped),
            relevance_level=self.relevance(top, config, hints, accepted),
            top_quality_score=top,
            is_low_quality=self.low_quality(top, config, hints, accepted),
        )

    def batch_size(self, batch: Sequence[WireCandidate]) -> int:
        """The ``n`` of the rank mapping: every candidate handed in, before dedup (the reference's)."""
        return len(batch)

    def candidate_quality(
        self, candidate: WireCandidate, batch_size: int, config: PostProcessConfig
    ) -> float:
        """The one call site of the normalizer in post-process."""
        return self.quality_score(
            QualityRequest(
                score_label=candidate.score_label,
                score=candidate.score,
                original_rank=candidate.original_rank,
                batch_size=max(batch_size, 1),
                max_l2_distance=config.max_l2_distance,
                dense_distance=candidate.dense_distance,
            )
        )

    def arrange(
        self, scored: list[Scored], hints: Hints, config: PostProcessConfig
    ) -> tuple[list[Scored], list[Dropped]]:
        """Order, then dedup and caps: the accepted candidates and the dropped ones."""
        return self.select(self.order(scored, hints), config)

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        """``originalRank`` ascending; ``sorted`` is stable, so ties keep their input order."""
        return sorted(scored, key=lambda s: s.candidate.original_rank)

    def dedup_key(self, candidate: WireCandidate) -> str:
        return evidence_key(candidate)

    def return_n(self, config: PostProcessConfig) -> int:
        return config.return_n

    def select(
        self, ordered: list[Scored], config: PostProcessConfig, *, return_n: int | None = None
    ) -> tuple[list[Scored], list[Dropped]]:
        """Dedup, per-document cap, return-n, in that order, each reason naming the first step to drop."""
        limit = self.return_n(config) if return_n is None else return_n
        accepted: list[Scored] = []
        dropped: list[Dropped] = []
        seen: set[str] = set()
        per_doc: Counter[str] = Counter()
        for s in ordered:
            c = s.candidate
            reason = None
            if self.dedup_key(c) in seen:
                reason = "duplicate"
            elif per_doc[c.doc_id] >= config.max_chunks_per_document:
                reason = "per_document_cap"
            elif len(accepted) >= limit:
                reason = "return_n"
            if reason != "duplicate":
                seen.add(self.dedup_key(c))
            if reason in (None, "return_n"):
                per_doc[c.doc_id] += 1
            if reason is None:
                accepted.append(s)
            else:
                dropped.append(
                    Dropped(evidence_key=evidence_key(c), original_rank=c.original_rank, reason=reason)
                )
        return accepted, dropped

    def block(self, scored: Scored, hints: Hints) -> Block:
        c = scored.candidate
        return Block(
            evidence_key=evidence_key(c),
            doc_id=c.doc_id,
            chunk_index=c.chunk_index,
            original_rank=c.original_rank,
            quality_score=scored.quality,
            score_label=self.canonicalize_label(c.score_label),
            hit_reasons=self.hit_reasons(c, hints),
        )

    def hit_reasons(self, candidate: WireCandidate, hints: Hints) -> tuple[str, ...]:
        """Explanations worth zero points, as in the reference."""
        support = hint_support(candidate, hints)
        names = {"domain": "l0_domain_overlap", "entity": "l0_entity_overlap"}
        names |= {"keyword": "l0_keyword_overlap", "source_type": "l0_source_type_match"}
        return ("retrieval_rank", *(names[k] for k, hit in support.items() if hit))

    # -- gates -----------------------------------------------------------------------------------

    def top_quality(self, blocks: Sequence[Block]) -> float | None:
        """The reference's reading of "top qualityScore": the highest among accepted blocks."""
        return max((b.quality_score for b in blocks), default=None)

    def relevance(
        self, top: float | None, config: PostProcessConfig, hints: Hints, accepted: Sequence[Scored]
    ) -> str:
        if top is None:
            return "NONE"
        if top >= config.highly_relevant_threshold:
            return self.high_level()
        if top >= config.reference_threshold:
            return "RELEVANT"
        return "WEAK" if top > 0.0 else "NONE"

    def high_level(self) -> str:
        """The level at or above the highly-relevant threshold (the spec allows either name)."""
        return "PRECISE"

    def low_quality(
        self, top: float | None, config: PostProcessConfig, hints: Hints, accepted: Sequence[Scored]
    ) -> bool:
        return top is None or top < config.reference_threshold

    # -- search and lookup -----------------------------------------------------------------------

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        """The reference store's one engine search, as wire candidates (with text, for hitReasons)."""
        found = store_search(self._prepared(), request)
        return [WireCandidate.model_validate(c.model_dump()) for c in found]

    def search(self, request: SearchRequest) -> SearchReply:
        fields = set(Hit.model_fields)
        hits = [Hit(**c.model_dump(include=fields)) for c in self.search_candidates(request)]
        return SearchReply(hits=tuple(hits))

    def lookup(self, request: LookupRequest) -> LookupReply:
        def attempt(category: str | None) -> tuple[tuple[WireCandidate, ...], PostProcessReply]:
            search = request.search(category)
            candidates = tuple(self.search_candidates(search))
            reply = self.post_process(
                PostProcessRequest(candidates=candidates, hints=request.hints, config=request.config)
            )
            return candidates, reply

        if request.category is None:
            return _lookup_reply(attempt(None)[1], "unfiltered")
        candidates, first = attempt(request.category)
        if not self.needs_retry(first, candidates, request.config):
            return _lookup_reply(first, "filtered")
        return _lookup_reply(attempt(None)[1], "unfiltered_retry")

    def needs_retry(
        self, filtered: PostProcessReply, candidates: Sequence[WireCandidate], config: PostProcessConfig
    ) -> bool:
        """The category retry runs exactly when the filtered result is low quality."""
        return filtered.is_low_quality


def _lookup_reply(reply: PostProcessReply, path: Any) -> LookupReply:
    return LookupReply(**reply.model_dump(), path=path)
