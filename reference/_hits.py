"""Engine results as candidates: the reply of a Milvus search turned into the reference's
:class:`~reference._models.Candidate` list, in engine order."""

from __future__ import annotations

import functools
import math
from itertools import count, repeat
from operator import itemgetter
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from ._models import Candidate, trusted_all
from ._schema import ABSENT, CATEGORY_FIELD, DENSE_FIELD, DOC_FIELD, INDEX_FIELD, SOURCE_FIELD, TEXT_FIELD

__all__ = ["candidates", "hybrid_hits"]


def _present(value: Any) -> Any:
    """A stored category or sourceType as the reply shows it: :data:`ABSENT` is ``None``."""
    return None if value == ABSENT else value


def hybrid_hits(hits: Any, dim: int) -> tuple[list[dict[str, Any]], list[float], np.ndarray]:
    """One query's hybrid hits as (scalar fields per hit, fused scores, stored vectors as one array).

    pymilvus leaves a result's vector fields undecoded until a hit is read, then turns each vector into
    a Python list of floats: more client time than the rest of a lookup. Where the result is pymilvus's
    lazy ``HybridHits`` (a list of dict hits), the vectors come from the reply in one numpy conversion
    and the scalar fields from the undecoded hits, read as the plain list and dicts they are; any other
    result (another pymilvus) is read hit by hit, to the same values. The vectors' array is a new one,
    the caller's to change.
    """
    lazy = getattr(hits, "lazy_field_data", None)
    if isinstance(hits, list) and lazy is not None and not getattr(hits, "has_materialized", True):
        field = next((f for f in lazy if f.field_name == DENSE_FIELD), None)
        raw = list.__iter__(hits)  # the hits as stored: iterating the HybridHits would decode them
        if field is not None and not len(field.valid_data) and field.vectors.dim == dim:
            count, start = len(hits), int(hits.start)
            flat = np.array(field.vectors.float_vector.data, dtype=np.float32)
            stored = flat.reshape(-1, dim)[start : start + count]
            try:
                entities = list(map(dict.__getitem__, raw, repeat("entity")))
            except (TypeError, KeyError):
                pass  # not the dict hits this pymilvus makes: read them as any other result
            else:
                if len(stored) == count == len(entities):
                    return entities, list(hits.distances), stored
    read = list(hits)
    stored = np.asarray([hit["entity"][DENSE_FIELD] for hit in read], dtype=np.float32)
    return [hit["entity"] for hit in read], [hit["distance"] for hit in read], stored.reshape(-1, dim)


@functools.cache
def _candidate_list() -> TypeAdapter[list[Candidate]]:
    return TypeAdapter(list[Candidate])


_SCALARS = itemgetter(DOC_FIELD, INDEX_FIELD, TEXT_FIELD, CATEGORY_FIELD, SOURCE_FIELD)
_STR, _INT, _FLOAT, _OPTIONAL_STR = {str}, {int}, {float}, {str, type(None)}


def candidates(
    entities: list[dict[str, Any]], scores: list[float], label: str, distances: list[float] | None
) -> list[Candidate]:
    """Candidates in engine order (``originalRank`` 1..n).

    The store's schema fixes every field's type, so a reply normally holds only valid candidates. A few
    passes over the whole reply confirm it (every value of its type, ids not empty, chunk indexes not
    negative, scores finite) and the candidates are then made without validating each one again;
    anything else is validated candidate by candidate, and the first bad one is named.
    """
    if not entities and not scores:
        return []
    dense = [None] * len(scores) if distances is None else distances
    try:
        docs, chunks, texts, categories, sources = zip(*map(_SCALARS, entities), strict=True)
    except (KeyError, ValueError):  # a field missing from the reply: the path below names it
        pass
    else:
        if ABSENT in categories or ABSENT in sources:
            categories, sources = tuple(map(_present, categories)), tuple(map(_present, sources))
        if _all_valid(docs, chunks, texts, scores, distances, categories, sources):
            return trusted_all(
                Candidate,
                [
                    {
                        "doc_id": doc,
                        "chunk_index": chunk,
                        "text": text,
                        "original_rank": rank,
                        "score": score,
                        "score_label": label,
                        "raw_score": score,
                        "dense_distance": distance,
                        "category": category,
                        "source_type": source,
                    }
                    for rank, doc, chunk, text, score, distance, category, source in zip(
                        count(1), docs, chunks, texts, scores, dense, categories, sources
                    )
                ],
            )
    return _candidate_list().validate_python(
        [
            {
                "docId": entity[DOC_FIELD],
                "chunkIndex": int(entity[INDEX_FIELD]),
                "text": entity[TEXT_FIELD],
                "originalRank": rank,
                "score": float(score),
                "scoreLabel": label,
                "rawScore": float(score),
                "denseDistance": distance,
                "category": _present(entity.get(CATEGORY_FIELD)),
                "sourceType": _present(entity.get(SOURCE_FIELD)),
            }
            for rank, (entity, score, distance) in enumerate(
                zip(entities, scores, dense, strict=True), start=1
            )
        ]
    )


def _all_valid(
    docs: tuple[Any, ...],
    chunks: tuple[Any, ...],
    texts: tuple[Any, ...],
    scores: list[Any],
    distances: list[Any] | None,
    categories: tuple[Any, ...],
    sources: tuple[Any, ...],
) -> bool:
    """What validating each candidate would find, for the whole reply at once: nothing wrong, and
    nothing to convert (the engine's ints and floats as they are)."""
    return (
        len(docs) == len(scores)
        and set(map(type, docs)) <= _STR
        and all(docs)
        and set(map(type, chunks)) <= _INT
        and min(chunks, default=0) >= 0
        and set(map(type, texts)) <= _STR
        and set(map(type, categories)) <= _OPTIONAL_STR
        and set(map(type, sources)) <= _OPTIONAL_STR
        and set(map(type, scores)) <= _FLOAT
        # A NaN or an infinity makes a sum non-finite; a finite sum means every value is finite.
        and math.isfinite(sum(scores))
        and (distances is None or (set(map(type, distances)) <= _FLOAT and math.isfinite(sum(distances))))
    )
