"""The hostile catalogue applied to the pure capabilities, mechanically: one question per value of every
class of every field of the normalizer's and post-process's requests, asked on every run (issue 51).

Each field is carried by a small question built so that the value decides something the spec fixes
(:func:`_quality_carrier`, :func:`_post_examples`): a docId beside its twin and its duplicate under a
cap of 2, a distance beside a candidate of quality 0.9, a maxL2Distance with distances at fixed
fractions of it, a rawScore that differs from its score. A field no carrier names is set on a plain base
question, so a field added to the protocol draws its classes at once. The questions cost microseconds
each; they join the explicit examples of the properties (:mod:`._explicit`).
"""

from __future__ import annotations

from typing import Any

from ..boundary._protocol import (
    Hints,
    PostProcessConfig,
    PostProcessRequest,
    QualityRequest,
    WireCandidate,
)
from ..corpus._hostile import class_values, field_types

__all__ = ["HOSTILE_POST_PROCESS", "HOSTILE_QUALITY"]


# -- the normalizer -----------------------------------------------------------------------------------

_DENSE = QualityRequest(score_label="dense", score=0.5, max_l2_distance=2.0)


def _quality_carrier(path: str, value: Any) -> QualityRequest:
    if path == "score":
        return _DENSE.model_copy(update={"score": value})
    if path == "dense_distance":
        return QualityRequest(
            score_label="hybrid", score=0.03, original_rank=2, batch_size=4, dense_distance=value
        )
    if path == "max_l2_distance":  # a distance half of it: quality 0.5 whatever the setting
        return _DENSE.model_copy(update={"score": value / 2.0, "max_l2_distance": value})
    if path == "original_rank":
        return QualityRequest(score_label="hybrid", original_rank=value, batch_size=max(value, 4))
    if path == "batch_size":
        return QualityRequest(score_label="hybrid", original_rank=min(3, value), batch_size=value)
    return _DENSE.model_copy(update={path: value})


def _quality_examples() -> tuple[QualityRequest, ...]:
    out = []
    for spec in field_types(QualityRequest):
        for values in class_values(spec.path, spec.types, listed=spec.listed):
            out += [_quality_carrier(spec.path, v) for v in values]
    return tuple(out)


# -- post-process ---------------------------------------------------------------------------------------


def _dense(doc: str, index: int, rank: int, distance: float | None = 0.2, **more: Any) -> WireCandidate:
    fields: dict[str, Any] = {"text": "", "category": None, "source_type": None, "raw_score": distance}
    fields |= more
    return WireCandidate(
        doc_id=doc, chunk_index=index, original_rank=rank, score=distance, score_label="dense", **fields
    )


_CAP_TWO = PostProcessConfig(return_n=4, max_chunks_per_document=2)
_BASE_BATCH = (_dense("base-a", 0, 1, 0.2), _dense("base-a", 1, 2, 0.5), _dense("base-b", 0, 3, 0.8))


def _example(
    batch: tuple[WireCandidate, ...], config: PostProcessConfig = _CAP_TWO, hints: Hints | None = None
):
    return {"batch": batch, "hints": hints or Hints(), "config": config}


def _pairs(values: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    return [v if isinstance(v, tuple) else (v, None) for v in values]


def _ids(values: tuple[Any, ...]) -> dict[str, Any]:
    """DocIds (or pairs of twins) under a cap of 2: for each, a duplicate, a third chunk past the cap,
    and its twin (or no one) that keys built on a folded id merge with it."""
    batch: list[WireCandidate] = []
    for one, two in _pairs(values):
        for doc, index in ((one, 0), (two, 0), (one, 0), (one, 1), (two, 1), (one, 2), (two, 2)):
            if doc is not None:
                batch.append(_dense(doc, index, len(batch) + 1, 0.1 + 0.01 * len(batch)))
    return _example(tuple(batch), PostProcessConfig(return_n=len(batch), max_chunks_per_document=2))


def _flat(values: tuple[Any, ...]) -> list[Any]:
    return [x for v in values for x in (v if isinstance(v, tuple) else (v,))]


def _scores(values: tuple[Any, ...]) -> dict[str, Any]:
    """Dense distances beside a candidate of quality 0.9 (distance 0.2 under maxL2Distance 2.0): the top
    quality is 0.9 whatever the others print as."""
    batch = [_dense(f"score-{i}", 0, i + 1, d) for i, d in enumerate(_flat(values))]
    batch.append(_dense("score-top", 0, len(batch) + 1, 0.2))
    return _example(tuple(batch), PostProcessConfig(return_n=len(batch), max_chunks_per_document=2))


def _raw_scores(values: tuple[Any, ...]) -> dict[str, Any]:
    """rawScores different from their scores (the quality is the score's), and one equal to it."""
    batch = [_dense(f"raw-{i}", 0, i + 1, 0.2, raw_score=r) for i, r in enumerate(_flat(values))]
    batch.append(_dense("raw-same", 0, len(batch) + 1, 1.0))
    return _example(tuple(batch), PostProcessConfig(return_n=len(batch)))


def _dense_distances(values: tuple[Any, ...]) -> dict[str, Any]:
    batch = tuple(
        WireCandidate(doc_id=f"dd-{i}", chunk_index=0, original_rank=i + 1, score=0.03 / (i + 1),
                      score_label="hybrid", raw_score=0.03 / (i + 1), dense_distance=d)
        for i, d in enumerate((*_flat(values), 0.2))
    )  # fmt: skip
    return _example(batch, PostProcessConfig(return_n=len(batch)))


def _candidates(field: str, values: tuple[Any, ...]) -> dict[str, Any]:
    """Each value on a candidate: two of one document and a duplicate for each (ranks and indexes)."""
    batch: list[WireCandidate] = []
    for i, value in enumerate(values):
        if field == "original_rank":
            batch += [_dense(f"rank-{i}", 0, value, 0.2), _dense(f"rank-{i}", 1, value + 1, 0.4)]
        elif field == "chunk_index":
            batch += [
                _dense(f"index-{i}", value, len(batch) + 1),
                _dense(f"index-{i}", value, len(batch) + 2),
            ]
        else:
            batch += [
                c.model_copy(
                    update={
                        field: value,
                        "doc_id": f"{c.doc_id}-{i}",
                        "original_rank": 3 * i + c.original_rank,
                    }
                )
                for c in _BASE_BATCH
            ]
    return _example(tuple(batch), PostProcessConfig(return_n=max(len(batch), 1)))


def _max_l2(value: float) -> dict[str, Any]:
    """Distances at fixed fractions of the setting: qualities 0.95, 0.75 and 0.55 whatever its size."""
    batch = tuple(_dense(f"l2-{i}", 0, i + 1, value * f) for i, f in enumerate((0.1, 0.5, 0.9)))
    return _example(batch, PostProcessConfig(max_l2_distance=value, return_n=4))


def _config(field: str, value: Any) -> dict[str, Any]:
    update: dict[str, Any] = {field: value}
    if field == "reference_threshold":
        update["highly_relevant_threshold"] = max(value, 0.75)
    if field == "highly_relevant_threshold":
        update["reference_threshold"] = min(value, 0.5)
    return _example(_BASE_BATCH, PostProcessConfig(return_n=3).model_copy(update=update))


def _hints(field: str, value: Any) -> dict[str, Any]:
    if field in ("entities", "keywords"):
        hints = Hints(**{field: tuple(_flat(value))})
    else:
        hints = Hints(**{field: value})
    # The worse ranks' texts hold the term: a boost on it would lift them over rank 1.
    text = value if isinstance(value, str) else ""
    batch = (_BASE_BATCH[0], *(c.model_copy(update={"text": text}) for c in _BASE_BATCH[1:]))
    return _example(batch, hints=hints)


_PACKED = {"doc_id": _ids, "score": _scores, "raw_score": _raw_scores, "dense_distance": _dense_distances}


def _post_examples() -> tuple[dict[str, Any], ...]:
    """Listed fields (the candidates') and hint lists hold a whole class at once; settings and single
    hints, one value per question."""
    out = []
    for spec in field_types(PostProcessRequest):
        owner, _, field = spec.path.partition(".")
        for values in class_values(spec.path, spec.types, listed=spec.listed):
            if owner == "candidates":
                out.append(_PACKED[field](values) if field in _PACKED else _candidates(field, values))
            elif owner == "hints" and field in ("entities", "keywords"):
                out.append(_hints(field, values))
            elif owner == "hints":
                out += [_hints(field, v) for v in values]
            elif field == "max_l2_distance":
                out += [_max_l2(v) for v in values]
            else:
                out += [_config(field, v) for v in values]
    return tuple(out)


def _once(examples: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each question once (two classes may build the same one), in the order first built."""
    seen: dict[str, Any] = {}
    for e in examples:
        key = e.model_dump_json() if isinstance(e, QualityRequest) else repr(e)
        seen.setdefault(key, e)
    return tuple(seen.values())


HOSTILE_QUALITY: tuple[QualityRequest, ...] = _once(_quality_examples())
"""The normalizer's hostile questions: every value of every class of every field."""
HOSTILE_POST_PROCESS: tuple[dict[str, Any], ...] = _once(_post_examples())
"""Post-process's hostile questions (``batch``, ``hints``, ``config``): every value of every class of every
field of the candidates, the hints and the settings."""
