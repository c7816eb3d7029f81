"""The legacy pipeline of the design note (section 2) as ONE complete implementation.

This is what the spec replaced, kept runnable so that the kit can show it catches all of it at once (its
adapter is the miniature ``tests/miniatures/legacy.py``) and so that the benchmarks can compare old and
new on the same collection; it lives here so that the benchmarks never import the tests. Every
behaviour below is the design note's description of the generation before ``rag-quality-score-unify``:

1. Search (2.1, 2.2): ``mode=hybrid`` runs the engine's hybrid search (dense + BM25, RRF), then a
   parallel dense probe. A fused hit the probe also found gets its L2 distance as ``score`` and the
   label ``l2_distance``; a hit only BM25 found gets ``score = maxL2Distance`` and the label
   ``bm25_only_no_dense``. ``mode=dense`` is one dense search, labelled ``l2_distance``.
2. Post-process (2.2, 2.3): every score is read as an L2 distance, ``baseScore = 1 - clamp(L2)/maxL2``;
   ``finalScore = baseScore`` + domain 0.15 + entity 0.20 + keyword 0.10 + source_type 0.05 when the L0
   hint is contained in the chunk; candidates are re-sorted by ``finalScore``, then deduplicated and
   capped.
3. Gates (2.2, 2.3.4): ``relevance_level`` and the low-quality retry read the top block's
   ``baseScore``; PRECISE also needs hint support (a domain, entity or keyword contains-match).

Labels are first-class here: there is no canonicalization, the normalizer does not branch on them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import reference
from conformance import Block, Dropped
from reference.store._store import category_filter

__all__ = ["LEGACY_BOOSTS", "LEGACY_LABELS", "LegacyPipeline", "LegacyResult"]

LEGACY_BOOSTS = {"domain": 0.15, "entity": 0.20, "keyword": 0.10, "source_type": 0.05}
LEGACY_LABELS = ("dense", "hybrid", "l2_distance", "rrf_fused", "bm25_only_no_dense")
_DENSE_FIELD = "dense"  # the reference store's dense vector field (reference/store/_store.py)


@dataclass(frozen=True)
class LegacyResult:
    """What the legacy post-processor produced: blocks by finalScore, and gates from baseScore."""

    blocks: tuple[Block, ...]
    dropped: tuple[Dropped, ...]
    relevance_level: str
    top_base_score: float | None
    is_low_quality: bool
    final_scores: dict[str, float] = field(default_factory=dict)


class LegacyPipeline:
    """Legacy search, post-process and lookup over a prepared :class:`reference.MilvusKnowledgeStore`.

    ``store`` is only needed for :meth:`search` and :meth:`lookup`; :meth:`post_process` is pure.
    Thresholds and caps come from :class:`reference.Settings`, so old and new read the same config.
    """

    def __init__(self, store: Any = None, settings: reference.Settings | None = None) -> None:
        self.store = store
        self.settings = settings or reference.Settings()

    # -- normalizer: everything is an L2 distance ------------------------------------------------

    def normalize_l2(self, score: float | None, max_l2_distance: float | None = None) -> float:
        """``1 - clamp(L2) / maxL2`` whatever the label; a missing score counts as the farthest."""
        max_l2 = self.settings.max_l2_distance if max_l2_distance is None else max_l2_distance
        d = max_l2 if score is None else min(max(score, 0.0), max_l2)
        return 1.0 - d / max_l2

    # -- search ----------------------------------------------------------------------------------

    def search(
        self,
        query_text: str,
        query_vector: Sequence[float],
        *,
        mode: str,
        k: int,
        category: str | None = None,
        rrf_k: int | None = None,
    ) -> list[reference.Candidate]:
        """Hybrid: fused hits, L2 backfilled from a parallel dense probe. Dense: one dense search."""
        if self.store is None:
            raise RuntimeError("LegacyPipeline.search needs a prepared store")
        if mode == "dense":
            found = self.store.search(query_text, query_vector, mode="dense", k=k, category=category)
            return [c.model_copy(update={"score_label": "l2_distance"}) for c in found]
        fused = self.store.search(
            query_text, query_vector, mode="hybrid", k=k, category=category, rrf_k=rrf_k
        )
        probe = self.dense_probe(query_vector, k=k, category=category)
        hits = []
        for c in fused:
            l2 = probe.get((c.doc_id, c.chunk_index))
            if l2 is not None:
                update = {"score": l2, "score_label": "l2_distance"}
            else:
                update = {"score": self.settings.max_l2_distance, "score_label": "bm25_only_no_dense"}
            hits.append(c.model_copy(update={**update, "dense_distance": None}))
        return hits

    def dense_probe(
        self, query_vector: Sequence[float], *, k: int, category: str | None = None
    ) -> dict[tuple[str, int], float]:
        """The second engine call: a dense search with the same limit and filter, L2 by chunk id."""
        result = self.store.client.search(
            self.store.collection,
            data=[[float(x) for x in query_vector]],
            anns_field=_DENSE_FIELD,
            limit=k,
            filter=category_filter(category) if category is not None else "",
            output_fields=["doc_id", "chunk_index"],
            search_params={"metric_type": "L2", "params": {}},
        )
        return {
            (hit["entity"]["doc_id"], int(hit["entity"]["chunk_index"])): float(hit["distance"])
            for hit in result[0]
        }

    # -- post-process ----------------------------------------------------------------------------

    def boost(self, candidate: Any, hints: Any) -> float:
        """The four contains-boosts of section 2.3."""
        text = (candidate.text or "").casefold()
        total = 0.0
        if hints.domain and hints.domain.casefold() in text:
            total += LEGACY_BOOSTS["domain"]
        if any(e and e.casefold() in text for e in hints.entities):
            total += LEGACY_BOOSTS["entity"]
        if any(kw and kw.casefold() in text for kw in hints.keywords):
            total += LEGACY_BOOSTS["keyword"]
        if hints.source_type and candidate.source_type == hints.source_type:
            total += LEGACY_BOOSTS["source_type"]
        return total

    def has_hint_support(self, candidate: Any, hints: Any) -> bool:
        """``hasHintSupport``: a domain, entity or keyword contains-match (section 2.3, point 4)."""
        text = (candidate.text or "").casefold()
        terms = [*([hints.domain] if hints.domain else []), *hints.entities, *hints.keywords]
        return any(t and t.casefold() in text for t in terms)

    def post_process(self, candidates: Sequence[Any], hints: Any = None) -> LegacyResult:
        """Score as L2, boost, re-sort by finalScore, dedup and cap, gate on the top baseScore."""
        hints = hints or reference.L0Hints()
        s = self.settings
        rows = []
        for c in candidates:
            base = self.normalize_l2(c.score)
            rows.append((c, base, base + self.boost(c, hints)))
        rows.sort(key=lambda row: row[2], reverse=True)
        blocks: list[Block] = []
        dropped: list[Dropped] = []
        supported: list[bool] = []
        seen: set[str] = set()
        per_doc: Counter[str] = Counter()
        for c, base, _final in rows:
            key = f"{c.doc_id}#{c.chunk_index}"
            reason = None
            if key in seen:
                reason = "duplicate"
            elif per_doc[c.doc_id] >= s.max_chunks_per_document:
                reason = "per_document_cap"
            elif len(blocks) >= s.return_n:
                reason = "return_n"
            seen.add(key)
            if reason is not None:
                dropped.append(Dropped(evidence_key=key, original_rank=c.original_rank, reason=reason))
                continue
            per_doc[c.doc_id] += 1
            supported.append(self.has_hint_support(c, hints))
            blocks.append(
                Block(
                    evidence_key=key,
                    doc_id=c.doc_id,
                    chunk_index=c.chunk_index,
                    original_rank=c.original_rank,
                    quality_score=base,
                    score_label=c.score_label,
                )
            )
        top = blocks[0].quality_score if blocks else None
        return LegacyResult(
            blocks=tuple(blocks),
            dropped=tuple(dropped),
            relevance_level=self.relevance(top, hint_support=any(supported)),
            top_base_score=top,
            is_low_quality=top is None or top < s.reference_threshold,
            final_scores={f"{c.doc_id}#{c.chunk_index}": final for c, _base, final in rows},
        )

    def relevance(self, top: float | None, *, hint_support: bool) -> str:
        """PRECISE needs the threshold AND hint support; without support the best is RELEVANT."""
        s = self.settings
        if top is None:
            return "NONE"
        if top >= s.highly_relevant_threshold and hint_support:
            return "PRECISE"
        if top >= s.reference_threshold:
            return "RELEVANT"
        return "WEAK" if top > 0.0 else "NONE"

    # -- lookup ----------------------------------------------------------------------------------

    def lookup(
        self,
        query_text: str,
        query_vector: Sequence[float],
        *,
        mode: str = "hybrid",
        category: str | None = None,
        hints: Any = None,
    ) -> tuple[str, LegacyResult]:
        """Search and post-process; with a category, retry unfiltered when the baseScore gate says low."""
        s = self.settings

        def attempt(filter_category: str | None) -> LegacyResult:
            found = self.search(
                query_text, query_vector, mode=mode, k=s.retrieve_k, category=filter_category, rrf_k=s.rrf_k
            )
            return self.post_process(found, hints)

        if category is None:
            return "unfiltered", attempt(None)
        first = attempt(category)
        if not first.is_low_quality:
            return "filtered", first
        return "unfiltered_retry", attempt(None)
