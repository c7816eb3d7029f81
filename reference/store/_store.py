"""The reference knowledge store on Milvus: one collection, dense and BM25 fields, one search per query.

The schema is described in :mod:`reference.store._schema`. Consistency level is ``Strong`` so a search
right after an ingest sees it. Writes (a document replaced whole, or deleted) are in
:mod:`reference.store._writes`. Every engine call has the deadline ``milvus.deadline-seconds``, and a
failed call makes the next one check and load the collection, so a store outlives its engine's restart.

What the engine supports (nullable fields, BM25) is found out once, when the store creates or first
opens its collection (:mod:`reference.store._features`), and decides the schema and whether hybrid
mode is available; replies are the same on every engine that can serve them.

pymilvus is imported lazily: the pure post-processing core of :mod:`reference` must not pay for (or
require) the Milvus client.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np

from .._embed import Embedder
from .._errors import (
    InvalidLimitError,
    InvalidQueryError,
    MilvusUnavailableError,
    StoreError,
)
from .._models import Candidate
from .._settings import Settings
from . import _writes
from ._collection import create, existing_features
from ._errors import describe, engine_errors, not_loaded, redact_uri, scrub, uri_secrets
from ._features import EngineFeatures
from ._hits import candidates, current_rows, hybrid_hits
from ._ingest import Chunk
from ._schema import (
    ABSENT,
    DENSE_FIELD,
    OUTPUT_FIELDS,
    SPARSE_FIELD,
    category_filter,
)
from ._vectors import prepared_query, squared_l2

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = ["InvalidQueryError", "MilvusKnowledgeStore", "category_filter", "redact_uri"]

_T = TypeVar("_T")
SearchMode = Literal["dense", "hybrid"]
IndexType = Literal["FLAT", "HNSW"]


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
        self._fresh = False  # this store created the collection and has written nothing to it since
        self._features: EngineFeatures | None = None
        self._absent: str | None = None  # what an absent category/sourceType is stored as
        self._secrets: tuple[str, ...] = ()  # scrubbed from any engine message we pass on

    @property
    def deadline_seconds(self) -> float:
        """How long any one engine call may take (setting ``milvus.deadline-seconds``) before it raises
        :class:`EngineTimeoutError`."""
        return self.settings.deadline_seconds

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
        secrets = uri_secrets(uri, token)
        if token:
            options["token"] = token
        if db_name:
            options["db_name"] = db_name
        try:
            client = MilvusClient(**options)
        except Exception as exc:  # pymilvus raises MilvusException, grpc and OS errors alike here
            reason = scrub(describe(exc), secrets)
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
        store._secrets = secrets
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
        self._open()

    def _open(self) -> bool:
        """Create or check and load the collection; ``True`` when it was created just now."""
        existed = self._collection_exists()
        if existed:
            self._features = existing_features(self)
            with self._engine("load the collection"):
                self.client.load_collection(self.collection, timeout=self.deadline_seconds)
        else:
            self._features = create(self)
        self._absent = None if self._features.nullable else ABSENT
        self._ready = True
        self._fresh = not existed
        return not existed

    def _require_collection(self) -> None:
        # Searching must not create an empty collection as a side effect: say what is missing instead.
        if self._ready:
            return
        if not self._collection_exists():
            raise StoreError(
                f"collection {self.collection!r} does not exist; ingest chunks first "
                "(MilvusKnowledgeStore.ingest or `rag-reference ingest`), or check the collection name"
            )
        self.ensure_collection()

    def count(self) -> int:
        """Number of chunks in the collection (0 when it does not exist)."""
        if not self._ready:
            if not self._collection_exists():
                return 0
            self.ensure_collection()
        rows = self._call(
            "count chunks",
            lambda: self.client.query(
                self.collection, filter="", output_fields=["count(*)"], timeout=self.deadline_seconds
            ),
        )
        return int(rows[0]["count(*)"])

    def _collection_exists(self) -> bool:
        with self._engine("check the collection"):
            return bool(self.client.has_collection(self.collection, timeout=self.deadline_seconds))

    def _open_for_writes(self) -> bool:
        """Open the collection for an ingest; ``True`` when this store created it and has written
        nothing to it since (so no document in it has an older generation to delete)."""
        if not self._ready:
            self._open()
        fresh, self._fresh = self._fresh, False
        return fresh

    def drop(self) -> None:
        """Drop the collection and everything in it; a missing collection is not an error."""
        if self._collection_exists():
            with self._engine("drop the collection"):
                self.client.drop_collection(self.collection, timeout=self.deadline_seconds)
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
        """Replace every document the chunks belong to, and return how many chunks were written.

        A document is the unit of change: afterwards the collection holds exactly the chunks given for
        it, and a lookup at any moment answers from the version before or the version after, never a
        mix (see :mod:`reference.store._writes`). So give all of a document's chunks in one ingest.
        Chunks without a vector are embedded with ``embedder``; without one they are an error.
        ``progress`` is called with the running total after each batch of ``batch_size`` is written.

        Every chunk is checked (and embedded) before anything is written: a bad one raises
        :class:`IngestError` naming it and leaves the collection as it was. The input is held in
        memory while it is written; ingest a very large corpus in groups of whole documents.
        """
        return _writes.ingest(self, chunks, batch_size=batch_size, progress=progress, embedder=embedder)

    def delete_document(self, doc_id: str) -> int:
        """Remove every chunk of document ``doc_id``; returns how many rows were removed (0: none stored).

        A document a killed ingest left in two generations counts the rows of both."""
        return _writes.delete_document(self, doc_id)

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

        ``category`` restricts hits to chunks whose category equals it exactly. While an ingest replaces
        a document, its hits of the newer generation are left out of the reply if any of the older one
        are in it (ranks renumbered): no reply mixes two versions of a document.

        Hybrid mode on an engine without BM25 (Milvus 2.3) raises :class:`EngineFeatureError` naming
        the missing feature, before asking the engine anything; dense mode works on every engine.
        """
        if mode not in ("dense", "hybrid"):
            raise InvalidQueryError(f"search mode is {mode!r}; use 'dense' or 'hybrid'")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidLimitError("rag.retrieve-k", f"is {k!r}; search needs k of at least 1")
        if type(query_text) is not str:
            raise InvalidQueryError(f"query text is a {type(query_text).__name__}; pass the query as a str")
        if category is not None and type(category) is not str:
            raise InvalidQueryError(f"category is a {type(category).__name__}; pass a str, or None")
        vector, sent = prepared_query(query_vector, self.dim, self.collection)
        self._require_collection()
        if mode == "hybrid":
            assert self._features is not None
            self._features.require("bm25", "hybrid mode")
        expr = category_filter(category) if category is not None else ""
        if mode == "dense":
            return self._dense(sent, k, expr)
        if not query_text.isascii():  # the engine takes UTF-8 only: say which text is not, not pymilvus
            _check_utf8(query_text)
        rrf_k = self.settings.rrf_k if rrf_k is None else rrf_k
        return self._hybrid(query_text, vector, sent, k, expr, rrf_k)

    def _dense_params(self, k: int) -> dict[str, Any]:
        # HNSW needs ef >= k on the server; FLAT takes no search parameters.
        params = {"ef": max(k, 64)} if self.index_type == "HNSW" else {}
        return {"metric_type": "L2", "params": params}

    def _dense(self, sent: list[float], k: int, expr: str) -> list[Candidate]:
        result = self._call(
            "run the dense search",
            lambda: self.client.search(
                self.collection,
                data=[sent],
                anns_field=DENSE_FIELD,
                limit=k,
                filter=expr,
                output_fields=OUTPUT_FIELDS,
                search_params=self._dense_params(k),
                timeout=self.deadline_seconds,
            ),
        )
        hits = list(result[0])  # no vector asked for: reading the hits decodes scalars only
        entities = [hit["entity"] for hit in hits]
        kept = current_rows(entities)
        if kept is not None:  # a document stored in two generations: its old version answers
            hits, entities = [hits[i] for i in kept], [entities[i] for i in kept]
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
        result = self._call(
            "run the hybrid search",
            lambda: self.client.hybrid_search(
                self.collection,
                requests,
                RRFRanker(rrf_k),
                limit=k,
                output_fields=[*OUTPUT_FIELDS, DENSE_FIELD],
                timeout=self.deadline_seconds,
            ),
            feature="hybrid_search",
        )
        entities, scores, stored = hybrid_hits(result[0], self.dim)
        kept = current_rows(entities)
        if kept is not None:  # a document stored in two generations: its old version answers
            entities, scores, stored = [entities[i] for i in kept], [scores[i] for i in kept], stored[kept]
        return candidates(entities, scores, "hybrid", squared_l2(stored, vector))

    # -- errors -----------------------------------------------------------------------------------

    def _call(self, what: str, call: Callable[[], _T], *, feature: str | None = None) -> _T:
        """One engine call on the opened collection, with recovery from an engine restart.

        Any engine failure makes the next call check and load the collection again (a restarted engine
        has it released); a failure saying the collection is not loaded does that at once and runs the
        call once more. A call that succeeds costs nothing more than the call.
        """
        try:
            with self._engine(what, feature=feature):
                return call()
        except StoreError as exc:
            self._ready = False  # the engine may have restarted: check and load before the next call
            if not not_loaded(exc.__cause__):
                raise
        self._require_collection()
        with self._engine(what, feature=feature):
            return call()

    def _engine(self, what: str, *, feature: str | None = None) -> AbstractContextManager[None]:
        """Engine failures while the store does ``what`` become :class:`StoreError` (see
        :class:`~reference.store._errors.engine_errors`), a missed deadline :class:`EngineTimeoutError`."""
        return engine_errors(
            what,
            collection=self.collection,
            secrets=self._secrets,
            feature=feature,
            engine_version=lambda: self._features.version if self._features else None,
            deadline=self.deadline_seconds,
        )


def _check_utf8(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidQueryError(
            f"query text holds a lone surrogate ({exc.object[exc.start : exc.end]!r} at character "
            f"{exc.start}), which is no UTF-8 text; decode the query with errors='replace' or remove it"
        ) from None
