"""The project's JSON Lines format: a corpus file and a queries file (``evaluation/data/README.md``).

The corpus is the reference's ingest format, one chunk per line::

    {"docId": "billing-refunds", "chunkIndex": 0, "text": "...", "category": "billing",
     "sourceType": "policy"}

The queries file holds one object per line::

    {"id": "q017", "query": "when will my refund arrive", "kind": "standard", "category": "billing",
     "relevant": {"billing-refunds#0": 2, "billing-refunds#1": 1}, "note": "optional, free text"}

``relevant`` maps evidence keys (``docId#chunkIndex``) to grades: 1 related, 2 answers the query,
3 the best possible answer. An empty ``relevant`` means nothing in the corpus answers the query: it
must then have ``kind`` ``unanswerable`` (the default when ``kind`` is left out). Every problem is a
:class:`LabelledSetError` naming ``FILE:LINE`` and what to change.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .._errors import LabelledSetError
from ._bundled import bundled_jsonl_paths
from ._validate import (
    Fail,
    check_chunk,
    check_grades,
    check_known_fields,
    check_query,
    check_unique,
    decode_line,
    validate_set,
)
from ._values import LabelledChunk, LabelledQuery, LabelledSet

__all__ = ["load_jsonl_set", "read_corpus", "read_queries"]

_QUERY_FIELDS = ("id", "query", "kind", "category", "relevant", "note")
_CHUNK_FIELDS = ("docId", "chunkIndex", "text", "vector", "category", "sourceType")


def load_jsonl_set(
    corpus: str | os.PathLike[str] | None = None, queries: str | os.PathLike[str] | None = None
) -> LabelledSet:
    """Read and cross-check a corpus and its queries; either left out means the bundled one."""
    default_corpus, default_queries = bundled_jsonl_paths()
    corpus_path = Path(corpus) if corpus is not None else default_corpus
    queries_path = Path(queries) if queries is not None else default_queries
    chunks = read_corpus(corpus_path)
    categories = {c.category for c in chunks if c.category is not None}
    read = read_queries(queries_path, chunk_keys={c.evidence_key for c in chunks}, categories=categories)
    return validate_set(
        LabelledSet(
            corpus=tuple(chunks),
            queries=tuple(read),
            corpus_source=str(corpus_path),
            queries_source=str(queries_path),
            name=corpus_path.parent.name if corpus is not None else "bundled set",
        )
    )


def _objects(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any], Fail]]:
    """Each non-blank line of ``path`` as a JSON object, with its number and its ``fail``."""
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LabelledSetError(f"cannot open the file: {exc.strerror or exc}", source=source) from None
    for number, chunk in enumerate(raw.splitlines(), start=1):

        def fail(message: str, *, item_id: str | None = None, number: int = number) -> LabelledSetError:
            return LabelledSetError(message, source=source, line=number, item_id=item_id)

        line = decode_line(chunk, number == 1, fail)
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise fail(f"not valid JSON ({exc.msg}, column {exc.colno})") from None
        if not isinstance(data, dict):
            raise fail(f"each line must be a JSON object with {what}")
        yield number, data, fail


def read_corpus(path: str | os.PathLike[str]) -> list[LabelledChunk]:
    """Read a corpus file in the ingest format; every docId#chunkIndex once."""
    chunks: list[LabelledChunk] = []
    seen: dict[str, int] = {}
    for number, data, fail in _objects(Path(path), "docId, chunkIndex and text"):
        check_known_fields(data, _CHUNK_FIELDS, fail)
        missing = [f for f in ("docId", "chunkIndex", "text") if f not in data]
        if missing:
            raise fail(f"missing field {missing[0]!r}; every line needs docId, chunkIndex and text")
        chunk = check_chunk(
            data["docId"],
            data["chunkIndex"],
            data["text"],
            category=data.get("category"),
            source_type=data.get("sourceType"),
            fail=fail,
        )
        vector = data.get("vector")
        if vector is not None:
            if not isinstance(vector, list) or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in vector
            ):
                raise fail("'vector' must be a list of numbers")
            chunk = chunk.model_copy(update={"vector": tuple(float(x) for x in vector)})
        check_unique(seen, chunk.evidence_key, "chunk", number, fail)
        chunks.append(chunk)
    if not chunks:
        raise LabelledSetError("the file holds no chunks; write one JSON object per line", source=str(path))
    return chunks


def read_queries(
    path: str | os.PathLike[str], *, chunk_keys: Iterable[str], categories: Iterable[str]
) -> list[LabelledQuery]:
    """Read and validate a queries file against the corpus's evidence keys and categories."""
    keys, known_categories = set(chunk_keys), set(categories)
    queries: list[LabelledQuery] = []
    seen: dict[str, int] = {}
    for number, data, fail in _objects(Path(path), "at least query and relevant"):
        check_known_fields(data, _QUERY_FIELDS, fail)
        qid = data.get("id", f"line-{number}")
        if not isinstance(qid, str) or not qid.strip():
            raise fail("'id' must be a non-empty string")
        check_unique(seen, qid, "query id", number, fail)
        if "query" in data and not isinstance(data["query"], str):
            raise fail(f"query {qid!r}: 'query' must be a string, the query's text", item_id=qid)
        relevant = check_grades(data.get("relevant"), keys, fail, qid=qid)
        query = check_query(
            qid, data.get("query"), relevant, fields=data, categories=known_categories, fail=fail
        )
        queries.append(query)
    if not queries:
        raise LabelledSetError("the file holds no queries; write one JSON object per line", source=str(path))
    return queries
