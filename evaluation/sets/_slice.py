"""A slice of a labelled set: a few queries of every kind, validated again. It needs both the values and
the validator, so it sits above them (the values import neither)."""

from __future__ import annotations

from .._errors import EvaluationError
from ._validate import validate_set
from ._values import KINDS, LabelledSet
from ._warnings import set_warnings


def slice_set(labelled: LabelledSet, limit: int) -> LabelledSet:
    """At most ``limit`` queries of ``labelled``, taken in turn from each kind (file order within a kind).

    Every kind present stays present as long as ``limit`` allows, so a small slice still exercises the
    retry, the gates and both legs of hybrid search. The corpus is kept whole. The slice is validated
    again: its warnings are the reader's and those of the slice (few queries, say), not the whole set's.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise EvaluationError(f"limit is {limit!r}; use a whole number of queries, at least 1")
    queues = {kind: [q for q in labelled.queries if q.kind == kind] for kind in KINDS}
    picked: set[str] = set()
    while len(picked) < min(limit, len(labelled.queries)):
        for kind in KINDS:
            if queues[kind] and len(picked) < limit:
                picked.add(queues[kind].pop(0).id)
    kept = tuple(q for q in labelled.queries if q.id in picked)
    read = tuple(w for w in labelled.warnings if w not in set_warnings(labelled))
    return validate_set(labelled.model_copy(update={"queries": kept, "warnings": read}))
