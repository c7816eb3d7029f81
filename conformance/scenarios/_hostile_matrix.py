"""The field x class matrix: every field of every request the kit sends, by the protocol's own models,
crossed with every hostile class of its type (:mod:`._hostile`), and which cells one run draws.

A cell is drawn when the run's explicit inputs (whatever the seed) hold a value of the class in the
field: the requests of :class:`~conformance.scenarios._input_model.Drawn` (its quality, post-process,
search and lookup questions and the corpus it prepares), read field by field. A field added to a
request model adds its cells here without anyone writing a case; the matrix test
(``tests/unit/conformance/scenarios/test_hostile_matrix.py``) fails on every cell no run draws.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from ..boundary import _protocol
from ..boundary._protocol import (
    Corpus,
    LookupRequest,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
)
from ..corpus._hostile import (
    REQUEST_MODELS,
    SIBLINGS,
    FieldSpec,
    HostileClass,
    applies_to,
    bounds_of,
    classes_of,
    field_types,
)

__all__ = ["Cell", "Requests", "cells", "drawn_cells", "missing_cells", "requests_of", "values_of"]


@dataclass(frozen=True)
class Cell:
    """One field of one request model crossed with one hostile class of its type."""

    model: str
    field: str
    hostile: HostileClass

    def __str__(self) -> str:
        return f"{self.model}.{self.field} x {self.hostile.type}: {self.hostile.name}"


def cells() -> list[Cell]:
    """Every cell: each leaf field of each request model, each applicable class of each of its types.
    Pair classes only where a field sits in a list (two values meet in one request)."""
    out = []
    for name in REQUEST_MODELS:
        model = getattr(_protocol, name)
        for spec in field_types(model):
            for kind in spec.types:
                for hostile in classes_of(kind, spec.path.rsplit(".", 1)[-1]):
                    if applies_to(hostile, spec.path, listed=spec.listed):
                        out.append(Cell(name, spec.path, hostile))
    return out


Requests = dict[str, Sequence[BaseModel]]
"""The values one run sends, by request model name."""


class _Drawn(Protocol):
    @property
    def quality(self) -> list[QualityRequest]: ...
    @property
    def post_process(self) -> tuple[dict[str, Any], ...]: ...
    @property
    def hint_pairs(self) -> tuple[dict[str, Any], ...]: ...
    @property
    def searches(self) -> list[SearchRequest]: ...
    @property
    def lookups(self) -> list[LookupRequest]: ...
    @property
    def corpus(self) -> Any: ...


def requests_of(drawn: _Drawn) -> Requests:
    """Every request one run's explicit inputs send, by model (post-process examples as requests, a
    hint pair as two)."""
    post = [
        PostProcessRequest(candidates=e["batch"], hints=e["hints"], config=e["config"])
        for e in drawn.post_process
    ]
    post += [
        PostProcessRequest(candidates=e["batch"], hints=e[side], config=e["config"])
        for e in drawn.hint_pairs
        for side in ("first", "second")
    ]
    corpus: Corpus = drawn.corpus.corpus
    return {
        "QualityRequest": drawn.quality,
        "PostProcessRequest": post,
        "SearchRequest": drawn.searches,
        "LookupRequest": drawn.lookups,
        "Corpus": [corpus],
    }


def _walk(value: Any, parts: Sequence[str]) -> list[Any]:
    """The values at ``parts`` under ``value``, lists flattened (a batch's candidates: one per candidate)."""
    if not parts:
        return [value]
    if parts[0] not in type(value).model_fields:
        return []  # a request of a model without the field (an older question beside a newer model)
    inner = getattr(value, parts[0])
    if isinstance(inner, tuple) and inner and isinstance(inner[0], BaseModel):
        return [v for item in inner for v in _walk(item, parts[1:])]
    return _walk(inner, parts[1:])


def values_of(requests: Iterable[BaseModel], path: str, *, sibling: str | None = None) -> list[list[Any]]:
    """The values each request holds in ``path``, one group per request (with ``sibling``: pairs of the
    field's value and its sibling's)."""
    parts = path.split(".")
    groups = []
    for request in requests:
        values = _walk(request, parts)
        if sibling is not None:
            values = list(zip(values, _walk(request, [*parts[:-1], sibling]), strict=True))
        groups.append(values)
    return groups


def _drawn(cell: Cell, spec: FieldSpec, requests: Sequence[BaseModel]) -> bool:
    name = spec.path.rsplit(".", 1)[-1]
    hostile = cell.hostile
    if hostile.name in ("equal to its sibling", "different from its sibling"):
        groups = values_of(requests, spec.path, sibling=SIBLINGS[name])
    else:
        groups = values_of(requests, spec.path)
    if hostile.name == "at its bounds":
        got = {v for group in groups for v in group if v is not None}
        return set(bounds_of(name, hostile.type)) <= got
    assert hostile.drawn is not None, f"{hostile.name} has no probe"
    return hostile.drawn(groups)


def drawn_cells(requests: Requests) -> dict[Cell, bool]:
    """Each cell, and whether ``requests`` draw it."""
    specs = {
        (name, spec.path): spec for name in REQUEST_MODELS for spec in field_types(getattr(_protocol, name))
    }
    return {
        cell: _drawn(cell, specs[(cell.model, cell.field)], requests.get(cell.model, ())) for cell in cells()
    }


def missing_cells(requests: Requests) -> list[Cell]:
    """The cells ``requests`` never draw."""
    return [cell for cell, drawn in drawn_cells(requests).items() if not drawn]
