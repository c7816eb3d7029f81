"""The reference implementation behind the :class:`~conformance.Implementation` Protocol.

This is the only module of the kit that imports :mod:`reference`; it translates values, nothing more.
"""

from __future__ import annotations

from typing import Any

import reference
from conformance.boundary._protocol import (
    BASE_CAPABILITIES,
    Block,
    Corpus,
    Dropped,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    MilvusEndpoint,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
)

__all__ = ["ReferenceAdapter", "store_search"]


class ReferenceAdapter:
    """Judges the bundled reference: every capability, on the Milvus the kit provides."""

    def __init__(self) -> None:
        self._store: Any = None

    def describe(self) -> ImplementationInfo:
        """The reference, by name; a subclass is another implementation and goes by its class name."""
        from conformance._version import kit_version

        cls = type(self)
        return ImplementationInfo(
            name="reference" if cls is ReferenceAdapter else cls.__name__,
            version=kit_version(),
            language="python",
            homepage=None,
            capabilities=BASE_CAPABILITIES,
        )

    def canonicalize_label(self, label: str) -> str:
        return reference.canonicalize_label(label)

    def quality_score(self, request: QualityRequest) -> float:
        return reference.to_quality_score(
            request.score_label,
            request.score,
            rank=request.original_rank,
            batch_size=request.batch_size,
            max_l2_distance=request.max_l2_distance,
            dense_distance=request.dense_distance,
        )

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        candidates = [reference.Candidate.model_validate(c.model_dump()) for c in request.candidates]
        result = reference.post_process(
            candidates,
            _settings(request.config),
            hints=reference.L0Hints.model_validate(request.hints.model_dump()),
        )
        return _reply(result)

    def prepare(self, endpoint: MilvusEndpoint, corpus: Corpus) -> None:
        store = reference.MilvusKnowledgeStore.connect(
            endpoint.uri,
            token=endpoint.token.get_secret_value() if endpoint.token else None,
            db_name=endpoint.db_name,
            collection=f"{endpoint.collection_prefix}reference_{corpus.name}",
            dim=corpus.dim,
        )
        store.ensure_collection()
        store.ingest(reference.Chunk.model_validate(chunk.model_dump()) for chunk in corpus.chunks)
        self.close()
        self._store = store

    def search(self, request: SearchRequest) -> SearchReply:
        candidates = store_search(self._prepared(), request)
        return SearchReply.model_validate({"hits": [_hit(c) for c in candidates]})

    def lookup(self, request: LookupRequest) -> LookupReply:
        settings = _settings(request.config, retrieve_k=request.retrieve_k, rrf_k=request.rrf_k)
        outcome = reference.lookup_knowledge(
            self._prepared(),
            request.query_text,
            request.query_vector,
            settings=settings,
            category=request.category,
            hints=reference.L0Hints.model_validate(request.hints.model_dump()),
            mode=request.mode,
        )
        reply = _reply(outcome.result)
        return LookupReply(**reply.model_dump(), path=outcome.path)

    def close(self) -> None:
        if self._store is not None:
            store, self._store = self._store, None
            try:
                store.drop()
            finally:
                store.close()

    def _prepared(self) -> Any:
        if self._store is None:
            raise RuntimeError("search/lookup before prepare(): the kit hands the corpus over first")
        return self._store


def store_search(store: Any, request: SearchRequest) -> list[Any]:
    """Ask ``store`` (anything with the reference store's ``search`` signature) one search request."""
    return store.search(
        request.query_text,
        request.query_vector,
        mode=request.mode,
        k=request.k,
        category=request.category,
        rrf_k=request.rrf_k,
    )


def _settings(config: PostProcessConfig, **extra: Any) -> reference.Settings:
    return reference.Settings(
        max_l2_distance=config.max_l2_distance,
        highly_relevant_threshold=config.highly_relevant_threshold,
        reference_threshold=config.reference_threshold,
        return_n=config.return_n,
        max_chunks_per_document=config.max_chunks_per_document,
        **extra,
    )


def _hit(candidate: Any) -> dict[str, Any]:
    keys = ("doc_id", "chunk_index", "original_rank", "score", "score_label", "raw_score", "dense_distance")
    return {key: getattr(candidate, key) for key in keys}


def _reply(result: Any) -> PostProcessReply:
    return PostProcessReply(
        blocks=tuple(
            Block(
                evidence_key=b.evidence_key,
                doc_id=b.doc_id,
                chunk_index=b.chunk_index,
                original_rank=b.original_rank,
                quality_score=b.quality_score,
                score_label=b.score_label,
                hit_reasons=b.hit_reasons,
            )
            for b in result.blocks
        ),
        dropped=tuple(
            Dropped(evidence_key=d.evidence_key, original_rank=d.original_rank, reason=d.reason)
            for d in result.dropped
        ),
        relevance_level=str(result.relevance_level),
        top_quality_score=result.top_quality_score,
        is_low_quality=result.is_low_quality,
    )
