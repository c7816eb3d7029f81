"""Writes to the store: a document is the unit of change.

An ingest replaces every document it holds, in three steps:

1. **check**: every chunk is validated and embedded first (the dimension, finite in float32, text the
   engine can store, no key twice); a bad chunk is refused by its id before anything is written;
2. **write**: the chunks go in under a new *generation* (the ingest's start in nanoseconds), so no row
   of the stored version is touched;
3. **commit**: per group of documents (up to 1,024), one delete removes the rows of every other
   generation; on Milvus Lite the written rows are then sealed (a flush), so searches use built indexes.

Until step 3 reaches a document, its old version is stored whole next to the new rows written so far,
and a search keeps, per document, only the oldest generation it sees
(:func:`reference.store._hits.current_rows`): a lookup answers from the old version or (after the
commit) from the new one, never from both, and never from neither. The collection's consistency level
is ``Strong``, so every search sees each write and delete acknowledged before it started; "any moment"
means any such point between two engine calls of the ingest.

A failure (an engine error, a kill -9) leaves the old version answering: an engine error removes the
rows the ingest wrote (best effort), a killed process leaves them unanswered until the next ingest of
the same documents deletes them. Ingesting the same input again repairs every state.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .._embed import Embedder
from .._errors import EmptyIngestError, IngestError, StoreError
from ._ingest import Chunk, vector_batches
from ._parts import StoreParts
from ._schema import (
    CATEGORY_FIELD,
    DENSE_FIELD,
    DOC_FIELD,
    GEN_FIELD,
    INDEX_FIELD,
    KEY_FIELD,
    SOURCE_FIELD,
    TEXT_FIELD,
    doc_filter,
)

__all__ = ["delete_document", "ingest"]

# One commit delete, `doc_id in [...] and generation != G`, names at most this many documents and this
# many bytes of docIds: each delete scans the collection (Lite 3 spends about 0.15 s of CPU on 2,000
# rows), so few large ones beat many small ones.
_COMMIT_GROUP = 1024
_COMMIT_BYTES = 32_768
# Called after each step with its name ("written N", "committed N"); tests set it to stop the process
# at a chosen point. Never set in production.
_after_step: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if _after_step is not None:
        _after_step(name)


def ingest(
    store: StoreParts,
    chunks: Iterable[Chunk],
    *,
    batch_size: int,
    progress: Callable[[int], None] | None,
    embedder: Embedder | None,
) -> int:
    """Check everything, write a new generation, then delete the older ones; see the module's doc."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise IngestError(f"batch_size is {batch_size!r}; it must be an integer of at least 1")
    staged = list(vector_batches(chunks, dim=store.dim, size=batch_size, embedder=embedder))
    if not staged:
        raise EmptyIngestError("nothing to ingest: the input holds no chunks")
    created = store._open_for_writes()  # only now: an empty or bad input must not create a collection
    generation = time.time_ns()
    absent = store._absent
    documents: dict[str, None] = {}  # in first-seen order
    written = 0
    try:
        for batch in staged:
            rows = [_row(chunk, vector, absent, generation) for chunk, vector in batch]
            store._call(
                f"write {len(rows)} chunks",
                lambda rows=rows: store.client.insert(store.collection, rows, timeout=store.deadline_seconds),
            )
            documents.update((chunk.doc_id, None) for chunk, _ in batch)
            written += len(rows)
            _step(f"written {written}")
            if progress is not None:
                progress(written)
    except Exception:
        _discard(store, generation)
        raise
    if not created:  # a collection this store just made holds no other generation
        _commit(store, list(documents), generation)
    _seal(store)
    return written


def _seal(store: StoreParts) -> None:
    """On Milvus Lite, seal the rows just written, so that searches use built indexes
    (:attr:`~reference.store._features.EngineFeatures.keeps_writes_in_memory`).

    Lite 3 computes BM25 statistics per sealed segment: each ingest's rows form a segment of their own
    until Lite merges four of a size, so ingest a corpus in one call where its BM25 ranking matters.
    """
    if store._features is not None and store._features.keeps_writes_in_memory:
        store._call(
            f"seal the chunks written to collection {store.collection!r}",
            lambda: store.client.flush(store.collection, timeout=store.deadline_seconds),
        )


def _commit(store: StoreParts, documents: Sequence[str], generation: int) -> None:
    done = 0
    for group in _groups(documents):
        expr = doc_filter(group, except_generation=generation)
        store._call(
            f"remove the replaced versions of {len(group)} documents",
            lambda expr=expr: _delete(store, expr),
        )
        done += len(group)
        _step(f"committed {done}")


def _groups(documents: Sequence[str]) -> Iterator[list[str]]:
    """The documents in groups of at most ``_COMMIT_GROUP`` and about ``_COMMIT_BYTES`` of docIds."""
    group: list[str] = []
    size = 0
    for doc in documents:
        length = len(doc.encode("utf-8")) + 4  # quotes, comma, space
        if group and (len(group) >= _COMMIT_GROUP or size + length > _COMMIT_BYTES):
            yield group
            group, size = [], 0
        group.append(doc)
        size += length
    if group:
        yield group


def _discard(store: StoreParts, generation: int) -> None:
    """Best effort after a failed write: remove this ingest's rows; if that fails too, they stay
    unanswered (the old versions win) until the documents are ingested again."""
    with contextlib.suppress(StoreError):
        store._call(
            "remove the chunks of the failed ingest",
            lambda: _delete(store, f"{GEN_FIELD} == {generation}"),
        )


def delete_document(store: StoreParts, doc_id: str) -> int:
    """Remove every chunk of document ``doc_id``; returns how many rows went (0: no such document)."""
    if not isinstance(doc_id, str) or not doc_id:
        raise StoreError(f"docId is {doc_id!r}; name the document to delete by its non-empty docId")
    if not store._collection_exists():
        return 0
    expr = doc_filter([doc_id])
    rows = store._call(
        f"count the chunks of document {doc_id!r}",
        lambda: store.client.query(
            store.collection, filter=expr, output_fields=["count(*)"], timeout=store.deadline_seconds
        ),
    )
    found = int(rows[0]["count(*)"]) if rows else 0
    if found:
        store._call(
            f"delete document {doc_id!r}",
            lambda: _delete(store, expr),
        )
    return found


def _delete(store: StoreParts, expr: str) -> Any:
    return store.client.delete(store.collection, filter=expr, timeout=store.deadline_seconds)


def _row_key(chunk: Chunk, generation: int) -> str:
    """The row's primary key: ``sha256(docId)#chunkIndex@generation``, never a quote or backslash.

    Milvus Lite 2.5.1 fetches a hybrid search's output fields with an expression it builds from the
    hits' keys, ``row_key in ['<key>', ...]``, quotes unescaped: a key holding ``'`` or ``\\``
    (a docId ``O'Reilly's``) makes it fail to parse and the server die of SIGSEGV. No key is ever read
    back (replies carry ``doc_id``), so the docId's hex digest keys the row as well as the docId would.
    """
    digest = hashlib.sha256(chunk.doc_id.encode()).hexdigest()
    return f"{digest}#{chunk.chunk_index}@{generation}"


def _row(chunk: Chunk, vector: Sequence[float], absent: str | None, generation: int) -> dict[str, Any]:
    return {
        KEY_FIELD: _row_key(chunk, generation),
        DOC_FIELD: chunk.doc_id,
        INDEX_FIELD: chunk.chunk_index,
        GEN_FIELD: generation,
        TEXT_FIELD: chunk.text,
        DENSE_FIELD: [float(x) for x in vector],
        CATEGORY_FIELD: absent if chunk.category is None else chunk.category,
        SOURCE_FIELD: absent if chunk.source_type is None else chunk.source_type,
    }
