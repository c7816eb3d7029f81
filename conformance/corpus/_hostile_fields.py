"""Which type of hostile values each field of the protocol carries, read from its pydantic models.

By field name first (:data:`FIELD_TYPES`), else by annotation (str: free text, float: distance or
score, int: count or rank, a tuple of floats: vector). A field no rule types raises, naming the table:
a field added to the protocol is typed, and gets its cells in the matrix, without anyone writing a case.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["FIELD_TYPES", "REQUEST_MODELS", "FieldSpec", "FieldType", "field_types"]

FieldType = Literal[
    "identifier", "category", "free text", "distance or score", "setting", "count or rank", "vector",
    "optional", "choice",
]  # fmt: skip


# -- the protocol's fields, typed ---------------------------------------------------------------------------

REQUEST_MODELS = ("QualityRequest", "PostProcessRequest", "SearchRequest", "LookupRequest", "Corpus")
"""The values the kit sends: every field of these (nested models' fields by path) draws its classes."""

FIELD_TYPES: dict[str, FieldType] = {
    "doc_id": "identifier",
    "category": "category",
    "source_type": "category",
    "text": "free text",
    "query_text": "free text",
    "domain": "free text",
    "entities": "free text",
    "keywords": "free text",
    "name": "choice",
    "score": "distance or score",
    "raw_score": "distance or score",
    "dense_distance": "distance or score",
    "max_l2_distance": "setting",
    "highly_relevant_threshold": "setting",
    "reference_threshold": "setting",
    "score_label": "choice",
    "mode": "choice",
    "dim": "choice",
}
"""Types by field name; a field not named here is typed by its annotation (str: free text, float:
distance or score, int: count or rank, a tuple of floats: vector)."""


def _by_annotation(annotation: Any) -> FieldType | None:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _by_annotation(args[0])
    if origin is Literal:
        return "choice"
    if origin is tuple and args and args[0] is float:
        return "vector"
    if origin is tuple and args and args[0] is str:
        return "free text"
    if annotation is str:
        return "free text"
    if annotation is float:
        return "distance or score"
    if annotation is int:
        return "count or rank"
    return None


def _nested(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _nested(arg)
        if found is not None:
            return found
    return None


def _optional(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation)


@dataclass(frozen=True)
class FieldSpec:
    """One leaf field of a request: its path (``candidates.doc_id``), its types (its own, and
    ``optional`` for one that may be null), and whether it sits in a list of values (a batch, the
    corpus's chunks), where pairs of values can meet in one request."""

    path: str
    types: tuple[FieldType, ...]
    listed: bool


def field_types(model: type[BaseModel], prefix: str = "", *, listed: bool = False) -> list[FieldSpec]:
    """Every leaf field of ``model``, nested models by path. A field no rule types raises: name its
    type in :data:`FIELD_TYPES`."""
    out: list[FieldSpec] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        nested = _nested(info.annotation)
        if nested is not None:
            many = typing.get_origin(info.annotation) is tuple
            out += field_types(nested, f"{path}.", listed=listed or many)
            continue
        kind = FIELD_TYPES.get(name) or _by_annotation(info.annotation)
        if kind is None:
            raise TypeError(
                f"{model.__name__}.{name} ({info.annotation}) has no hostile type: name it in "
                "conformance/corpus/_hostile_fields.py FIELD_TYPES"
            )
        kinds: tuple[FieldType, ...] = (kind, "optional") if _optional(info.annotation) else (kind,)
        out.append(FieldSpec(path, kinds, listed))
    return out
