"""Engine results as candidates: the reply of a Milvus search turned into the reference's
:class:`~reference._models.Candidate` list, in engine order."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from ._models import Candidate
from ._schema import ABSENT, CATEGORY_FIELD, DENSE_FIELD, DOC_FIELD, INDEX_FIELD, SOURCE_FIELD, TEXT_FIELD

__all__ = ["candidates", "hybrid_hits"]


def _present(value: Any) -> Any:
    """A stored category or sourceType as the reply shows it: :data:`ABSENT` is ``None``."""
    return None if value == ABSENT else value


def hybrid_hits(hits: Any, dim: int) -> tuple[list[dict[str, Any]], list[float], np.ndarray]:
    """One query's hybrid hits as (scalar fields per hit, fused scores, stored vectors as one array).

    pymilvus leaves a result's vector fields undecoded until a hit is read, then turns each vector into
    a Python list of floats: more client time than the rest of a lookup. Where the result is pymilvus's
    lazy ``HybridHits``, the vectors come from the reply in one numpy conversion and the scalar fields
    from the undecoded hits; any other result (another pymilvus) is read hit by hit, to the same values.
    """
    lazy = getattr(hits, "lazy_field_data", None)
    raw_item = getattr(hits, "get_raw_item", None)
    if lazy is not None and raw_item is not None and not getattr(hits, "has_materialized", True):
        field = next((f for f in lazy if f.field_name == DENSE_FIELD), None)
        if field is not None and not len(field.valid_data) and field.vectors.dim == dim:
            count, start = len(hits), int(hits.start)
            flat = np.array(field.vectors.float_vector.data, dtype=np.float32)
            stored = flat.reshape(-1, dim)[start : start + count]
            entities = [raw_item(i)["entity"] for i in range(count)]
            if len(stored) == count:
                return entities, list(hits.distances), stored
    read = list(hits)
    stored = np.asarray([hit["entity"][DENSE_FIELD] for hit in read], dtype=np.float32)
    return [hit["entity"] for hit in read], [hit["distance"] for hit in read], stored.reshape(-1, dim)


@functools.cache
def _candidate_list() -> TypeAdapter[list[Candidate]]:
    return TypeAdapter(list[Candidate])


def candidates(
    entities: list[dict[str, Any]], scores: list[float], label: str, distances: list[float] | None
) -> list[Candidate]:
    """Candidates in engine order (``originalRank`` 1..n), validated as one list."""
    rows = [
        {
            "docId": entity[DOC_FIELD],
            "chunkIndex": int(entity[INDEX_FIELD]),
            "text": entity[TEXT_FIELD],
            "originalRank": rank,
            "score": float(score),
            "scoreLabel": label,
            "rawScore": float(score),
            "denseDistance": None if distances is None else distances[rank - 1],
            "category": _present(entity.get(CATEGORY_FIELD)),
            "sourceType": _present(entity.get(SOURCE_FIELD)),
        }
        for rank, (entity, score) in enumerate(zip(entities, scores, strict=True), start=1)
    ]
    return _candidate_list().validate_python(rows)
