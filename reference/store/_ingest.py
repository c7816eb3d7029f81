"""What goes into the store: :class:`Chunk`, and reading chunks from JSON Lines files.

A JSONL file holds one chunk per line, in the spec's camelCase names::

    {"docId": "faq-7", "chunkIndex": 0, "text": "...", "category": "billing", "sourceType": "faq"}

``vector`` is optional; lines without one are embedded at ingest by the store's embedder. Blank lines
are skipped. Every problem is an :class:`IngestError` naming ``FILE:LINE``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError, model_validator

from .._embed import Embedder
from .._errors import EmptyIngestError, IngestError, VectorDimensionError
from .._models import _Model, evidence_key

__all__ = [
    "MAX_CATEGORY_BYTES",
    "MAX_DOC_ID_BYTES",
    "MAX_TEXT_BYTES",
    "Chunk",
    "read_jsonl",
    "sample_path",
    "vector_batches",
    "write_rows",
]

# Schema limits of the store's VARCHAR fields (Milvus counts UTF-8 bytes). Checked here so a bad chunk
# fails with its name instead of as an opaque engine error in the middle of a batch.
MAX_DOC_ID_BYTES = 1024
MAX_TEXT_BYTES = 65_535
MAX_CATEGORY_BYTES = 256


class Chunk(_Model):
    """One chunk of a document: identity, text, optional vector and metadata.

    ``vector`` may be left out when the store is given an embedder at ingest. ``category`` and
    ``source_type`` are optional; absent means null in the store (never the empty string), and they
    may not hold a NUL character (an engine without nullable fields stores "absent" as one).
    """

    doc_id: str
    chunk_index: int
    text: str
    vector: tuple[float, ...] | None = None
    category: str | None = None
    source_type: str | None = None

    @property
    def evidence_key(self) -> str:
        """``docId#chunkIndex``: the store's primary key, so re-ingesting a chunk replaces it."""
        return evidence_key(self.doc_id, self.chunk_index)

    @model_validator(mode="after")
    def _check(self) -> Chunk:
        who = f"chunk {self.doc_id!r}#{self.chunk_index}"
        if not self.doc_id:
            raise IngestError(f"{who}: docId is empty; every chunk needs its document id")
        if self.chunk_index < 0:
            raise IngestError(f"{who}: chunkIndex is {self.chunk_index}; chunk indexes start at 0")
        if not self.text.strip():
            raise IngestError(f"{who}: text is empty; an empty chunk can never be found, leave it out")
        for name, value, limit in (
            ("docId", self.doc_id, MAX_DOC_ID_BYTES),
            ("text", self.text, MAX_TEXT_BYTES),
            ("category", self.category, MAX_CATEGORY_BYTES),
            ("sourceType", self.source_type, MAX_CATEGORY_BYTES),
        ):
            if value is not None and len(value.encode("utf-8")) > limit:
                raise IngestError(f"{who}: {name} is longer than {limit} UTF-8 bytes; split or shorten it")
        for name, value in (("category", self.category), ("sourceType", self.source_type)):
            if value is not None and "\x00" in value:
                # NUL marks "absent" on engines without nullable fields (reference.store._schema.ABSENT).
                raise IngestError(f"{who}: {name} holds a NUL character; remove it, or leave {name} out")
        if self.vector is not None:
            if not self.vector:
                raise VectorDimensionError(f"{who}: vector is empty; leave it out to have the text embedded")
            if not all(math.isfinite(x) for x in self.vector):
                raise IngestError(f"{who}: vector holds NaN or infinity; every component must be finite")
        return self


def read_jsonl(path: str | os.PathLike[str], *, dim: int | None = None) -> Iterator[Chunk]:
    """Open a JSON Lines file and yield its chunks lazily, one per non-blank line.

    The file is opened at once, so a missing file fails before anything else happens. With ``dim``, a
    vector of another dimension fails naming its line, rather than later in the store. A file without
    any chunk raises :class:`EmptyIngestError` once it has been read through.
    """
    source = str(path)
    try:
        # Opened here, closed by the generator: a missing file must fail before any Milvus work.
        handle = Path(path).open("rb")  # noqa: SIM115
    except OSError as exc:
        raise IngestError(f"cannot open the file: {exc.strerror or exc}", source=source) from None
    return _read(handle, source=source, dim=dim)


def _read(handle: BinaryIO, *, source: str, dim: int | None) -> Iterator[Chunk]:
    count = 0
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                # utf-8-sig on the first line: editors on Windows like to start files with a BOM.
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                raise IngestError(
                    "not UTF-8 text; save the file as UTF-8", source=source, line=number
                ) from None
            if not line.strip():
                continue
            chunk = _parse_line(line, source=source, number=number)
            if dim is not None and chunk.vector is not None and len(chunk.vector) != dim:
                raise VectorDimensionError(
                    f"chunk {chunk.evidence_key} has a vector of dimension {len(chunk.vector)}, the "
                    f"collection expects {dim}; re-embed it, or drop 'vector' to embed the text at ingest",
                    source=source,
                    line=number,
                )
            count += 1
            yield chunk
    if count == 0:
        raise EmptyIngestError("the file holds no chunks; write one JSON object per line", source=source)


def _parse_line(line: str, *, source: str, number: int) -> Chunk:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"not valid JSON ({exc.msg}, column {exc.colno})", source=source, line=number
        ) from None
    if not isinstance(data, dict):
        raise IngestError(
            "each line must be a JSON object with docId, chunkIndex and text", source=source, line=number
        )
    try:
        return Chunk.model_validate(data)
    except ValidationError as exc:
        raise IngestError(_explain(exc), source=source, line=number) from None
    except IngestError as exc:
        # Re-raise with the location; keep the subclass (VectorDimensionError stays one).
        raise type(exc)(str(exc), source=source, line=number) from None


def _explain(exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(part) for part in err["loc"]) or "line"
    if err["type"] == "missing":
        return f"missing field {field!r}; every line needs docId, chunkIndex and text"
    if err["type"] == "extra_forbidden":
        return (
            f"unknown field {field!r}; the fields are docId, chunkIndex, text, vector, category, sourceType"
        )
    return f"field {field!r}: {err['msg']}"


def vector_batches(
    chunks: Iterable[Chunk | Mapping[str, Any]],
    *,
    dim: int,
    size: int,
    embedder: Embedder | None = None,
) -> Iterator[list[tuple[Chunk, Sequence[float]]]]:
    """Validate chunks and group them into batches of ``(chunk, vector)``, embedding missing vectors.

    Lazy: each batch is checked and embedded (one ``embed`` call per batch) only when it is asked for,
    so a large input is never held in memory whole.
    """
    if embedder is not None and embedder.dim != dim:
        raise VectorDimensionError(
            f"the embedder makes {embedder.dim}-dimensional vectors, the collection holds {dim}; "
            f"use an embedder of dimension {dim}"
        )
    seen: set[str] = set()
    pending: list[Chunk] = []
    for item in chunks:
        chunk = item if isinstance(item, Chunk) else Chunk.model_validate(item)
        key = chunk.evidence_key
        if key in seen:
            # Within one ingest a repeated key is ambiguous (which text wins?), so refuse it.
            raise IngestError(f"chunk {key} appears twice in this ingest; keep one copy")
        seen.add(key)
        if chunk.vector is None and embedder is None:
            raise IngestError(
                f"chunk {key} has no vector; give every chunk a {dim}-dimensional vector, "
                "or pass embedder= to embed the text"
            )
        if chunk.vector is not None:
            _check_dim(key, chunk.vector, dim)
        pending.append(chunk)
        if len(pending) >= size:
            yield _with_vectors(pending, dim, embedder)
            pending = []
    if pending:
        yield _with_vectors(pending, dim, embedder)


def _with_vectors(
    chunks: list[Chunk], dim: int, embedder: Embedder | None
) -> list[tuple[Chunk, Sequence[float]]]:
    todo = [c for c in chunks if c.vector is None]
    made = iter(embedder.embed([c.text for c in todo]) if embedder is not None and todo else [])
    out: list[tuple[Chunk, Sequence[float]]] = []
    for chunk in chunks:
        vector = chunk.vector if chunk.vector is not None else next(made)
        _check_dim(chunk.evidence_key, vector, dim)  # the embedder's output too
        out.append((chunk, vector))
    return out


def _check_dim(key: str, vector: Sequence[float], dim: int) -> None:
    if len(vector) != dim:
        raise VectorDimensionError(
            f"chunk {key} has a vector of dimension {len(vector)}, the collection expects {dim}; "
            f"re-embed it with a {dim}-dimensional model"
        )


def sample_path() -> Path:
    """The bundled sample: 32 English chunks over four categories, without vectors (embedded at ingest)."""
    return Path(str(resources.files("reference") / "data" / "sample.jsonl"))


def write_rows(client: Any, collection: str, rows: list[dict[str, Any]], key: str) -> None:
    """Upsert ``rows`` (keyed by the field ``key``); on a server without Upsert (Milvus before 2.3
    answers UNIMPLEMENTED), delete the keys and insert instead: the same rows, just as idempotent."""
    try:
        client.upsert(collection, rows)
        return
    except Exception as exc:
        if "UNIMPLEMENTED" not in str(exc) and "unknown method Upsert" not in str(exc):
            raise
    client.delete(collection, ids=[row[key] for row in rows])
    client.insert(collection, rows)
