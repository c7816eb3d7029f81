"""Engine results as candidates: the reply of a Milvus search turned into the reference's
:class:`~reference._models.Candidate` list, in engine order."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from .._models import Candidate
from ._schema import (
    ABSENT,
    CATEGORY_FIELD,
    DENSE_FIELD,
    DOC_FIELD,
    GEN_FIELD,
    INDEX_FIELD,
    SOURCE_FIELD,
    TEXT_FIELD,
)

__all__ = ["candidates", "current_rows", "hybrid_hits"]


def current_rows(entities: list[dict[str, Any]]) -> list[int] | None:
    """Which hits to keep when a document is stored in two generations: ``None`` to keep them all (the
    usual case), else the indexes of the hits whose generation is the oldest seen for their document.

    An ingest writes the new version of a document before it deletes the old one; until that deletion
    (the commit), the old version is the one a reply answers from, and a reply never mixes the two.
    """
    oldest: dict[str, int] = {}
    mixed = False
    for entity in entities:
        doc, generation = entity[DOC_FIELD], entity[GEN_FIELD]
        seen = oldest.setdefault(doc, generation)
        if generation != seen:
            mixed = True
            if generation < seen:
                oldest[doc] = generation
    if not mixed:
        return None
    return [i for i, entity in enumerate(entities) if entity[GEN_FIELD] == oldest[entity[DOC_FIELD]]]


def _present(value: Any) -> Any:
    """A stored category or sourceType as the reply shows it: :data:`ABSENT` is ``None``."""
    return None if value == ABSENT else value


def hybrid_hits(hits: Any, dim: int) -> tuple[list[dict[str, Any]], list[float], np.ndarray]:
    """One query's hybrid hits as (scalar fields per hit, fused scores, stored vectors as one array).

    pymilvus leaves a result's vector fields undecoded until a hit is read, then turns each vector into
    a Python list of floats: more client time than the rest of a lookup. Where the result is pymilvus's
    lazy ``HybridHits`` (a list of dict hits), the vectors come from the reply's packed bytes in one
    numpy read (:func:`_packed_rows`) and the scalar fields from the undecoded hits, read as the plain
    list and dicts they are; any other result (another pymilvus) is read hit by hit, to the same
    values. The vectors' array may be read-only.
    """
    lazy = getattr(hits, "lazy_field_data", None)
    start, scores = getattr(hits, "start", None), getattr(hits, "distances", None)
    if (
        isinstance(hits, list)
        and lazy is not None
        and start is not None
        and scores is not None
        and not getattr(hits, "has_materialized", True)
    ):
        field = None
        for each in lazy:
            if each.field_name == DENSE_FIELD:
                field = each
                break
        raw = list.__iter__(hits)  # the hits as stored: iterating the HybridHits would decode them
        if field is not None and not len(field.valid_data) and field.vectors.dim == dim:
            size = len(hits)
            stored = _packed_rows(field.vectors.float_vector, int(start), size, dim)
            try:
                entities = [hit["entity"] for hit in raw]
            except (TypeError, KeyError):
                pass  # not the dict hits this pymilvus makes: read them as any other result
            else:
                if len(stored) == size == len(entities):
                    return entities, list(scores), stored
    read = list(hits)
    stored = np.asarray([hit["entity"][DENSE_FIELD] for hit in read], dtype=np.float32)
    return [hit["entity"] for hit in read], [hit["distance"] for hit in read], stored.reshape(-1, dim)


def _packed_rows(floats: Any, first: int, count: int, dim: int) -> np.ndarray:
    """Rows ``first`` to ``first + count`` of a reply's float vectors (a protobuf ``FloatArray``), or
    fewer rows when the reply does not hold them all (the caller then reads the hits one by one).

    The array's wire form is the floats themselves: field 1, packed, so one tag byte, the byte length
    as a varint, then little-endian float32s. Serializing the message copies them in C, and numpy reads
    the rows straight from those bytes; that is cheaper than converting the repeated field, above all
    on a reply just received. Anything but that one packed run is converted from the field instead.
    """
    packed = floats.SerializeToString()
    start, length, shift = 1, 0, 0
    while start < min(len(packed), 6):
        byte = packed[start]
        length |= (byte & 0x7F) << shift
        start, shift = start + 1, shift + 7
        if byte < 0x80:
            break
    if packed[:1] == b"\x0a" and start + length == len(packed) and (first + count) * dim * 4 <= length:
        rows = np.frombuffer(packed, dtype="<f4", count=count * dim, offset=start + first * dim * 4)
        return rows.reshape(count, dim)
    flat = np.array(floats.data, dtype=np.float32)
    if flat.size % dim:
        return np.empty((0, dim), dtype=np.float32)
    return flat.reshape(-1, dim)[first : first + count]


@functools.cache
def _candidate_list() -> TypeAdapter[list[Candidate]]:
    return TypeAdapter(list[Candidate])


def candidates(
    entities: list[dict[str, Any]], scores: list[float], label: str, distances: list[float] | None
) -> list[Candidate]:
    """Candidates in engine order (``originalRank`` 1..n), validated as one list: the first bad one is
    named (a reply whose values are not of the store's schema, an empty id, a score that is not finite).
    """
    dense = [None] * len(scores) if distances is None else distances
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
