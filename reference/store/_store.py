"""The reference knowledge store on Milvus: one collection, dense and BM25 fields, one search per query.

The schema is described in :mod:`reference.store._schema`. Consistency level is ``Strong`` so a search
right after an ingest sees it. What the engine supports (nullable fields, BM25) is found out once, when
the store creates or first opens its collection (:mod:`reference.store._features`), and decides the schema and
whether hybrid mode is available; replies are the same on every engine that can serve them.

pymilvus is imported lazily: the pure post-processing core of :mod:`reference` must not pay for (or
require) the Milvus client.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .._embed import Embedder
from .._errors import (
    EmptyIngestError,
    IngestError,
    InvalidLimitError,
    InvalidQueryError,
    MilvusUnavailableError,
    StoreError,
)
from .._models import Candidate
from .._settings import Settings
from ._errors import describe, engine_errors, redact_uri, scrub
from ._features import EngineFeatures, quiet_refusals, server_version
from ._hits import candidates, hybrid_hits
from ._ingest import Chunk, vector_batches, write_rows
from ._schema import (
    ABSENT,
    CATEGORY_FIELD,
    DENSE_FIELD,
    DOC_FIELD,
    INDEX_FIELD,
    KEY_FIELD,
    OUTPUT_FIELDS,
    SOURCE_FIELD,
    SPARSE_FIELD,
    TEXT_FIELD,
    build_schema,
    category_filter,
    check_fields,
    collection_features,
)
from ._vectors import prepared_query, squared_l2

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = ["InvalidQueryError", "MilvusKnowledgeStore", "category_filter", "redact_uri"]

SearchMode = Literal["dense", "hybrid"]
IndexType = Literal["FLAT", "HNSW"]
# Schema variants, richest first: (nullable fields, BM25). The first the engine takes and keeps wins.
_VARIANTS = ((True, True), (False, True), (True, False), (False, False))


@functools.cache
def _search_types() -> tuple[Any, Any]:
    """pymilvus's request and ranker classes, imported once (on the first hybrid search)."""
    from pymilvus import AnnSearchRequest, RRFRanker

    return AnnSearchRequest, RRFRanker


class MilvusKnowledgeStore:
    """Chunks in one Milvus collection; dense or hybrid (dense + BM25, RRF) search over them.

    The store never starts an engine: it is handed a ``MilvusClient`` (and then never closes it), or
    :meth:`connect` builds one from a URI (and :meth:`close` closes it).
    """

    def __init__(
        self,
        client: MilvusClient,
        *,
        collection: str,
        dim: int,
        settings: Settings | None = None,
        index_type: IndexType = "FLAT",
    ) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,254}", collection or ""):
            raise StoreError(
                f"collection name {collection!r} is not valid in Milvus; use letters, digits and "
                "underscores, starting with a letter or underscore"
            )
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise StoreError(f"dim is {dim!r}; a dense vector field needs an integer dimension of at least 2")
        if index_type not in ("FLAT", "HNSW"):
            raise StoreError(f"index_type is {index_type!r}; use 'FLAT' (exact, default) or 'HNSW'")
        self.client = client
        self.collection = collection
        self.dim = dim
        self.settings = settings or Settings()
        self.index_type: IndexType = index_type
        self._owns_client = False
        self._ready = False
        self._features: EngineFeatures | None = None
        self._absent: str | None = None  # what an absent category/sourceType is stored as
        self._secret: str | None = None  # scrubbed from any engine message we pass on

    @classmethod
    def connect(
        cls,
        uri: str,
        *,
        collection: str,
        dim: int,
        token: str | None = None,
        db_name: str | None = None,
        timeout: float = 10.0,
        settings: Settings | None = None,
        index_type: IndexType = "FLAT",
    ) -> MilvusKnowledgeStore:
        """Open a client on ``uri`` (a server URL, or a local ``*.db`` path for Milvus Lite).

        Raises :class:`MilvusUnavailableError` within about ``timeout`` seconds when the engine cannot be
        reached. The message names the URI (without any password in it), never the token.
        """
        from pymilvus import MilvusClient

        options: dict[str, Any] = {"uri": uri, "timeout": timeout}
        if token:
            options["token"] = token
        if db_name:
            options["db_name"] = db_name
        try:
            client = MilvusClient(**options)
        except Exception as exc:  # pymilvus raises MilvusException, grpc and OS errors alike here
            reason = scrub(describe(exc), token)
            raise MilvusUnavailableError(
                f"cannot reach Milvus at {redact_uri(uri)} (timeout {timeout:g} s): {reason}; check that the "
                "server is running and the URI, port and token are right (MILVUS_URI, MILVUS_TOKEN)"
            ) from None  # the cause may carry connection options; do not chain it
        try:
            store = cls(client, collection=collection, dim=dim, settings=settings, index_type=index_type)
        except StoreError:
            client.close()  # a bad argument must not leak the connection just opened
            raise
        store._owns_client = True
        store._secret = token
        return store

    # -- collection -------------------------------------------------------------------------------

    @property
    def features(self) -> EngineFeatures | None:
        """What the engine offers this store's collection; ``None`` until the collection is created or
        opened (:meth:`ensure_collection`, or the first ingest, search or count)."""
        return self._features

    def ensure_collection(self) -> None:
        """Create the collection with its schema and indexes if missing; otherwise check and load it.

        Creating it is where the store finds out what the engine supports: the richest schema variant
        the engine accepts and keeps (see :mod:`reference.store._features`). An existing collection's schema
        says what it was given.
        """
        with self._engine("check the collection"):
            exists = self.client.has_collection(self.collection)
        if exists:
            self._check_existing()
            with self._engine("load the collection"):
                self.client.load_collection(self.collection)
        else:
            self._create()
        assert self._features is not None
        self._absent = None if self._features.nullable else ABSENT
        self._ready = True

    def _create(self) -> None:
        version = server_version(self.client)
        refused: dict[tuple[bool, bool], str] = {}
        for nullable, bm25 in _VARIANTS:
            reason = self._try_create(nullable=nullable, bm25=bm25)
            if reason is None:
                missing = {}
                if not nullable:
                    missing["nullable"] = refused[(True, bm25)]
                if not bm25:
                    missing["bm25"] = refused[(nullable, True)]
                self._features = EngineFeatures(version, MappingProxyType(missing))
                return
            refused[(nullable, bm25)] = reason
        raise StoreError(
            f"Milvus could not create the collection (collection {self.collection!r}): "
            f"{refused[(True, True)]}; without nullable fields or BM25 it refused too "
            f"({refused[(False, False)]}); check that the engine is up and the name is free"
        )

    def _try_create(self, *, nullable: bool, bm25: bool) -> str | None:
        """Create one schema variant; ``None`` on success, else why the engine refused or dropped it."""
        schema, index = build_schema(self.client, self.dim, self.index_type, nullable=nullable, bm25=bm25)
        try:
            with quiet_refusals(), self._engine("create the collection"):
                self.client.create_collection(self.collection, schema=schema, consistency_level="Strong")
                kept = collection_features(self.client.describe_collection(self.collection))
                if kept == (nullable, bm25):
                    # The collection is empty, so there is nothing to build: not waiting (sync=False)
                    # spares pymilvus's polling, half a second per index; the load waits for the engine.
                    self.client.create_index(self.collection, index, sync=False)
                    self.client.load_collection(self.collection)
                    return None
        except StoreError as exc:
            self._drop_leftover()
            return scrub(describe(exc.__cause__ or exc), self._secret)
        # Accepted but not kept: Milvus 2.3 takes a nullable field and quietly makes it required.
        self._drop_leftover()
        named = ("nullable fields", "a BM25 Function")
        lost = [n for want, got, n in zip((nullable, bm25), kept, named, strict=True) if want and not got]
        return f"the engine accepted a schema with {' and '.join(lost)} but did not keep it"

    def _drop_leftover(self) -> None:
        # The collection may exist though its index failed (Milvus 2.3 refuses a sparse index only
        # then); it is ours, created a moment ago, and must not stay half-made.
        with contextlib.suppress(Exception), quiet_refusals():
            if self.client.has_collection(self.collection):
                self.client.drop_collection(self.collection)

    def _check_existing(self) -> None:
        with self._engine("describe the collection"):
            info = self.client.describe_collection(self.collection)
        check_fields(info, self.collection, self.dim)
        nullable, bm25 = collection_features(info)
        missing = {}
        if not nullable:
            missing["nullable"] = f"collection {self.collection!r} was created without nullable fields"
        if not bm25:
            missing["bm25"] = f"collection {self.collection!r} was created without a BM25 Function"
        self._features = EngineFeatures(server_version(self.client), MappingProxyType(missing))

    def _require_collection(self) -> None:
        # Searching must not create an empty collection as a side effect: say what is missing instead.
        if self._ready:
            return
        with self._engine("check the collection"):
            exists = self.client.has_collection(self.collection)
        if not exists:
            raise StoreError(
                f"collection {self.collection!r} does not exist; ingest chunks first "
                "(MilvusKnowledgeStore.ingest or `rag-reference ingest`), or check the collection name"
            )
        self.ensure_collection()

    def count(self) -> int:
        """Number of chunks in the collection (0 when it does not exist)."""
        if not self._ready:
            with self._engine("check the collection"):
                if not self.client.has_collection(self.collection):
                    return 0
            self.ensure_collection()
        with self._engine("count chunks"):
            rows = self.client.query(self.collection, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def drop(self) -> None:
        """Drop the collection and everything in it; a missing collection is not an error."""
        with self._engine("drop the collection"):
            if self.client.has_collection(self.collection):
                self.client.drop_collection(self.collection)
        self._ready = False
        self._features = None  # a collection made again is made on what the engine offers then

    def close(self) -> None:
        """Close the client if :meth:`connect` created it; a client handed in belongs to the caller."""
        if self._owns_client:
            with self._engine("close the connection"):
                self.client.close()
            self._owns_client = False

    def __enter__(self) -> MilvusKnowledgeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingest -----------------------------------------------------------------------------------

    def ingest(
        self,
        chunks: Iterable[Chunk],
        *,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
        embedder: Embedder | None = None,
    ) -> int:
        """Upsert chunks in batches and return how many were written.

        Chunks are keyed by ``docId#chunkIndex``, so ingesting the same chunk again replaces it and never
        duplicates it. Chunks without a vector are embedded with ``embedder``; without one they are an
        error. ``progress`` is called with the running total after each batch.

        Input is streamed: when a chunk fails validation the batches before it are already written.
        Fix the input and ingest again; upsert makes that safe.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise IngestError(f"batch_size is {batch_size!r}; it must be an integer of at least 1")
        total = 0
        for batch in vector_batches(chunks, dim=self.dim, size=batch_size, embedder=embedder):
            if not self._ready:
                self.ensure_collection()  # only now: an empty input must not create a collection
            rows = [self._row(chunk, vector, self._absent) for chunk, vector in batch]
            with self._engine(f"upsert {len(rows)} chunks"):
                write_rows(self.client, self.collection, rows, KEY_FIELD)
            total += len(rows)
            if progress is not None:
                progress(total)
        if total == 0:
            raise EmptyIngestError("nothing to ingest: the input holds no chunks")
        return total

    @staticmethod
    def _row(chunk: Chunk, vector: Sequence[float], absent: str | None) -> dict[str, Any]:
        return {
            KEY_FIELD: chunk.evidence_key,
            DOC_FIELD: chunk.doc_id,
            INDEX_FIELD: chunk.chunk_index,
            TEXT_FIELD: chunk.text,
            DENSE_FIELD: [float(x) for x in vector],
            CATEGORY_FIELD: absent if chunk.category is None else chunk.category,
            SOURCE_FIELD: absent if chunk.source_type is None else chunk.source_type,
        }

    # -- search -----------------------------------------------------------------------------------

    def search(
        self,
        query_text: str,
        query_vector: Sequence[float],
        *,
        mode: SearchMode,
        k: int,
        category: str | None = None,
        rrf_k: int | None = None,
    ) -> list[Candidate]:
        """One engine search; candidates in engine order with ``originalRank`` 1..n.

        - ``dense``: exactly one ``search`` on the dense field (L2). ``score`` and ``rawScore`` are the
          engine's squared L2 distance, label ``dense``; ``query_text`` is not used.
        - ``hybrid``: exactly one ``hybrid_search``: a dense (L2) and a BM25 sub-request on the query text,
          each with limit ``k`` and the category filter, fused by ``RRFRanker(rrf_k)`` (default: the
          settings' ``retrieval.search.rrf-k``). ``score`` and ``rawScore`` are the fused score as
          returned, label ``hybrid``. ``denseDistance`` is the squared L2 distance (float32) between the
          query vector and each hit's stored vector, computed here from the returned vector, for BM25-only
          hits too. A blank ``query_text`` has no term for BM25, which would match nothing; the BM25
          sub-request is then left out rather than sent empty (engines differ on empty BM25 queries), and
          the result is RRF over the dense list alone, still labelled ``hybrid``.

        ``category`` restricts hits to chunks whose category equals it exactly.

        Hybrid mode on an engine without BM25 (Milvus 2.3) raises :class:`EngineFeatureError` naming
        the missing feature, before asking the engine anything; dense mode works on every engine.
        """
        if mode not in ("dense", "hybrid"):
            raise InvalidQueryError(f"search mode is {mode!r}; use 'dense' or 'hybrid'")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidLimitError("rag.retrieve-k", f"is {k!r}; search needs k of at least 1")
        vector, sent = prepared_query(query_vector, self.dim, self.collection)
        self._require_collection()
        if mode == "hybrid":
            assert self._features is not None
            self._features.require("bm25", "hybrid mode")
        expr = category_filter(category) if category is not None else ""
        if mode == "dense":
            return self._dense(sent, k, expr)
        rrf_k = self.settings.rrf_k if rrf_k is None else rrf_k
        return self._hybrid(query_text, vector, sent, k, expr, rrf_k)

    def _dense_params(self, k: int) -> dict[str, Any]:
        # HNSW needs ef >= k on the server; FLAT takes no search parameters.
        params = {"ef": max(k, 64)} if self.index_type == "HNSW" else {}
        return {"metric_type": "L2", "params": params}

    def _dense(self, sent: list[float], k: int, expr: str) -> list[Candidate]:
        with self._engine("run the dense search"):
            result = self.client.search(
                self.collection,
                data=[sent],
                anns_field=DENSE_FIELD,
                limit=k,
                filter=expr,
                output_fields=OUTPUT_FIELDS,
                search_params=self._dense_params(k),
            )
        hits = list(result[0])  # no vector asked for: reading the hits decodes scalars only
        entities = [hit["entity"] for hit in hits]
        return candidates(entities, [hit["distance"] for hit in hits], "dense", None)

    def _hybrid(
        self, text: str, vector: np.ndarray, sent: list[float], k: int, expr: str, rrf_k: int
    ) -> list[Candidate]:
        AnnSearchRequest, RRFRanker = _search_types()  # noqa: N806 - classes

        requests = [
            AnnSearchRequest(
                data=[sent],
                anns_field=DENSE_FIELD,
                param=self._dense_params(k),
                limit=k,
                expr=expr,
            )
        ]
        if text.strip():
            requests.append(
                AnnSearchRequest(
                    data=[text], anns_field=SPARSE_FIELD, param={"metric_type": "BM25"}, limit=k, expr=expr
                )
            )
        with self._engine("run the hybrid search", feature="hybrid_search"):
            result = self.client.hybrid_search(
                self.collection,
                requests,
                RRFRanker(rrf_k),
                limit=k,
                output_fields=[*OUTPUT_FIELDS, DENSE_FIELD],
            )
        entities, scores, stored = hybrid_hits(result[0], self.dim)
        return candidates(entities, scores, "hybrid", squared_l2(stored, vector))

    # -- errors -----------------------------------------------------------------------------------

    def _engine(self, what: str, *, feature: str | None = None) -> AbstractContextManager[None]:
        """Engine failures while the store does ``what`` become :class:`StoreError` (see
        :class:`~reference.store._errors.engine_errors`)."""
        return engine_errors(
            what,
            collection=self.collection,
            secret=self._secret,
            feature=feature,
            engine_version=lambda: self._features.version if self._features else None,
        )
