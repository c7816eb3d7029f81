"""A reply whose number is not a number breaks the requirement whose value it is, not only the protocol.

A program that sends ``"qualityScore": "NaN"`` or ``"0.5"`` (text where the protocol has a number), or
``"isLowQuality": "false"``, gave an invalid reply; but the field it got wrong is one the spec fixes: a
``qualityScore`` "in [0, 1]" is a number, so the reply breaks R3 as surely as a quality of 1.7 would.
Where every fault of a reply is such a value, in a field a rule owns, the judge fails the reply under
that rule, the wire error in the message, instead of leaving it ERRORED with no requirement named. Any
other invalid reply (a missing field, an object where a number belongs) stays a reply error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..boundary._errors import InvalidReplyError
from . import _spec_model as model

__all__ = ["judged_numbers", "wire_violations"]

# The field (its last name on the wire) -> the rule whose value it is, by the operation that answered.
_QUALITY = {"": "quality-range", "qualityScore": "quality-range"}
_GATES = {"topQualityScore": "top-quality", "isLowQuality": "low-quality"}
_BLOCKS = {**_QUALITY, **_GATES, "originalRank": "evidence-key", "chunkIndex": "evidence-identity"}
_HITS = {"originalRank": "ranks", "denseDistance": "dense-distance-value"}


def _search_rule(mode: str | None) -> dict[str, str]:
    score = "dense-score" if mode == "dense" else "hybrid-score"
    # Which chunk a hit is: the nearest chunks in dense mode (R6), the fused order's in hybrid mode (R1).
    identity = "dense-hits" if mode == "dense" else "hybrid-order"
    return {**_HITS, "score": score, "rawScore": score, "chunkIndex": identity}


_BY_OPERATION: dict[str, Callable[[Any], dict[str, str]]] = {
    "quality_score": lambda _: _QUALITY,
    "post_process": lambda _: _BLOCKS,
    "lookup": lambda _: _BLOCKS,
    "search": lambda request: _search_rule(getattr(request, "mode", None)),
}


def wire_violations(error: InvalidReplyError, request: Any) -> list[model.Violation] | None:
    """The findings of a reply whose only faults are text (or a flag) where a number belongs, in fields a
    rule owns; None when the error is another kind of reply error (it stays ERRORED)."""
    rules = _BY_OPERATION.get(error.operation)
    if rules is None or not error.numbers:
        return None
    owner = rules(request)
    found = []
    for path, value in error.numbers:
        rule = owner.get(path.rsplit(".", 1)[-1])
        if rule is None:
            return None
        item = f"{path or 'the ' + error.operation + ' reply'} on the wire"
        expected = "a JSON boolean" if rule == "low-quality" else "a JSON number"
        found.append(
            model.violation(rule, item, expected, f"{type(value).__name__} {value!r} ({error.detail})")
        )
    return found


@contextlib.contextmanager
def judged_numbers(
    verdict: Callable[[str, list[model.Violation], Any], None], operation: str, request: Any
) -> Iterator[None]:
    """Around asking ``request``: a reply whose only faults are text where a number belongs goes to
    ``verdict`` (the judge's, which raises its failure); any other invalid reply stays the call's error."""
    try:
        yield
    except InvalidReplyError as error:
        found = wire_violations(error, request)
        if found is None:
            raise
        verdict(operation, found, request)
        raise
