"""``reference/store/_hits.py`` as it was at git 02ce19c, before issue 25 (candidates by ``trusted_all``).

The old version, frozen for comparison only (see :mod:`benchmarks.figures.old_reference`): copied
unchanged but for the imports. Nothing of the reference imports it. Its own docstring follows.

Engine results as candidates: the reply of a Milvus search turned into the reference's
:class:`~reference._models.Candidate` list, in engine order."""

from __future__ import annotations

import functools
import math
from itertools import count, repeat
from operator import itemgetter
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from reference._models import Candidate
from reference.store._schema import (
    ABSENT,
    CATEGORY_FIELD,
    DENSE_FIELD,
    DOC_FIELD,
    INDEX_FIELD,
    SOURCE_FIELD,
    TEXT_FIELD,
)

from .models import trusted_all

__all__ = ["candidates", "hybrid_hits"]


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
                entities = list(map(dict.__getitem__, raw, repeat("entity")))
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


_SCALARS = itemgetter(DOC_FIELD, INDEX_FIELD, TEXT_FIELD, CATEGORY_FIELD, SOURCE_FIELD)


def candidates(
    entities: list[dict[str, Any]], scores: list[float], label: str, distances: list[float] | None
) -> list[Candidate]:
    """Candidates in engine order (``originalRank`` 1..n).

    The store's schema fixes every field's type, so a reply normally holds only valid candidates: one
    pass confirms it (every value of its type, ids not empty, chunk indexes not negative, scores
    finite) while it builds them, without validating each one again. Anything else is validated
    candidate by candidate, and the first bad one is named.
    """
    rows = _plain_rows(entities, scores, label, distances)
    if rows is not None:
        return trusted_all(Candidate, rows)
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


def _plain_rows(
    entities: list[dict[str, Any]], scores: list[float], label: str, distances: list[float] | None
) -> list[dict[str, Any]] | None:
    """Each candidate's fields, or ``None`` if any value would need converting or fail validation."""
    if len(entities) != len(scores) or (distances is not None and len(distances) != len(scores)):
        return None
    try:
        # A NaN or an infinity makes a sum non-finite; a finite sum means every value is finite.
        if not (math.isfinite(sum(scores)) and (distances is None or math.isfinite(sum(distances)))):
            return None
    except TypeError:
        return None
    rows: list[dict[str, Any]] = []
    append = rows.append
    dense = repeat(None) if distances is None else distances
    for rank, entity, score, distance in zip(count(1), entities, scores, dense):
        try:
            doc, chunk, text, category, source = _SCALARS(entity)
        except (KeyError, TypeError):
            return None
        if category == ABSENT:  # how a store on an engine without nullable fields keeps a null
            category = None
        if source == ABSENT:
            source = None
        if not (
            type(doc) is str
            and doc
            and type(chunk) is int
            and chunk >= 0
            and type(text) is str
            and type(score) is float
            and (distance is None or type(distance) is float)
            and (category is None or type(category) is str)
            and (source is None or type(source) is str)
        ):
            return None
        append(
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
        )
    return rows
