"""Attribution by counterfactual: which input's influence broke a rule, so a failure counts where it belongs.

Every reply is checked whole, so a fault shows under whichever rule sees it first: keyword boosts that
reorder show as ``rank-order``, an alias read as a distance as ``no-raw-magnitude``. When a reply breaks
a rule, the judge asks the same question again with one input taken away (:data:`VARIATIONS`, in this
order): legacy alias labels replaced by their canonical labels, the L0 hints removed, denseDistance
removed, the category filter removed. If the varied question is answered as the spec allows, that input's
influence is the fault, and the failure is counted under the requirement that governs the input:

- legacy aliases: R1, ``alias-quality`` ("canonicalize it ... before computing quality");
- L0 hints: R4 ``no-boost`` for the blocks, their order and qualities, the retry's evidence too (the
  gates keep their R5 rules);
- denseDistance: R7 ``dense-distance-order`` / ``-label`` for the order and the label ("Retrieval order
  SHALL remain ... and the primary scoreLabel SHALL remain hybrid"); a quality wrong only with the
  distance stays the normalizer's (R7 merely allows using it);
- the category: R5 ``category-filter`` for hits the filter got wrong (the question asked without it for
  every chunk, :func:`every_chunk`, so a fault in one hit the filter let through still shows), and for
  engine calls only the filter makes (these break R6 ``dense-only`` too, and count under both); the
  retry's own faults, which also vanish without a category, keep their rules.

Only the findings an input governs move; the others keep their rule.

Each re-attributed finding says what was varied. The varied questions are asked only after a failure,
so a conforming implementation pays nothing for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..boundary._protocol import (
    Hints,
    LookupRequest,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)
from . import _spec_model as model

__all__ = [
    "ALIASES",
    "CATEGORY",
    "DENSE_DISTANCE",
    "HINTS",
    "VARIATIONS",
    "Variation",
    "every_chunk",
    "reattribute",
    "variations",
]

Question = QualityRequest | PostProcessRequest | SearchRequest | LookupRequest


@dataclass(frozen=True)
class Variation:
    """One input taken away from a question, and where a fault it explains counts."""

    name: str
    governs: str  # the requirement id governing the input
    vary: Callable[[Any], Any | None]  # the question without the input, or None when it has none
    # The rule a finding it explains counts under (None: the finding's own).
    rule_for: Callable[[model.Violation], str | None]
    also: bool = False  # the finding breaks the governing rule as well as its own: count both
    also_rules: frozenset[str] = frozenset()  # rules whose findings it moves count both ways too

    def says(self) -> str:
        return f"varied: {self.name}, the same question is answered as the spec allows"


def _canonical_labels(request: Any) -> Any | None:
    if isinstance(request, QualityRequest):
        if not _is_alias(request.score_label):
            return None
        return request.model_copy(update={"score_label": model.canonical(request.score_label)})
    if not isinstance(request, PostProcessRequest):
        return None
    if not any(_is_alias(c.score_label) for c in request.candidates):
        return None
    return request.model_copy(update={"candidates": tuple(map(_canonical, request.candidates))})


def _canonical(candidate: WireCandidate) -> WireCandidate:
    label = model.canonical(candidate.score_label) or candidate.score_label
    return candidate.model_copy(update={"score_label": label})


def _is_alias(label: str) -> bool:
    canonical = model.canonical(label)
    return canonical is not None and canonical != label


def _without_dense_distance(request: Any) -> Any | None:
    if not isinstance(request, PostProcessRequest):
        return None
    if all(c.dense_distance is None for c in request.candidates):
        return None
    stripped = tuple(c.model_copy(update={"dense_distance": None}) for c in request.candidates)
    return request.model_copy(update={"candidates": stripped})


def _without_hints(request: Any) -> Any | None:
    if not isinstance(request, PostProcessRequest | LookupRequest) or request.hints == Hints():
        return None
    return request.model_copy(update={"hints": Hints()})


def _without_category(request: Any) -> Any | None:
    if not isinstance(request, SearchRequest | LookupRequest) or request.category is None:
        return None
    return request.model_copy(update={"category": None})


_RETRIEVAL = frozenset({"dense-hits", "hybrid-order", "lookup-retrieval", "ranks"})
_ORDER_AND_SELECTION = frozenset(
    {
        "rank-order",
        "best-ranks-kept",
        "evidence-identity",
        "dedup",
        "dense-distance-order",
        "lookup-retrieval",
    }
)
_QUALITIES = frozenset({"quality-range", "dense-formula", "rank-one", "rank-monotone", "one-normalizer"})


def _aliases_rule(v: model.Violation) -> str | None:
    return "alias-quality"


def _hints_rule(v: model.Violation) -> str | None:
    """Hints that move blocks or qualities break "no boosts" (R4), the retry's evidence included (a boost
    that reorders it before return-n cuts drops its best chunks); the gates keep their R5 rules."""
    if v.rule.id == "retry-evidence":
        return "no-boost"
    if v.requirement == "quality-gates":
        return None
    return (
        "no-boost"
        if v.rule.id in _ORDER_AND_SELECTION | _QUALITIES | {"per-document-cap", "return-n"}
        else None
    )


def _dense_distance_rule(v: model.Violation) -> str | None:
    """denseDistance that moves the order or the label breaks R7; a quality wrong with it stays the
    normalizer's (R7 only allows using the distance)."""
    if v.rule.id == "rank-order":
        return "dense-distance-order"
    if v.rule.id in ("block-label", "hit-label", "emitted-alias"):
        return "dense-distance-label"
    return None


def _category_rule(v: model.Violation) -> str | None:
    """A filter that retrieves the wrong hits breaks the category filter (R5); so do engine calls that
    only the filter makes (a partition per category, a scalar query for the category's rows): they count
    under R5 as well as R6's dense-only, which they also break. The retry's own faults, which also vanish
    without a category, keep their rules."""
    return "category-filter" if v.rule.id in _RETRIEVAL | {"dense-only"} else None


ALIASES = Variation(
    "with the canonical labels instead of the legacy aliases",
    "score-labels",
    _canonical_labels,
    _aliases_rule,
)
HINTS = Variation("without the L0 hints", "rank-order", _without_hints, _hints_rule)
# A reorder that denseDistance causes breaks R4's order and R7's "sort order SHALL still follow
# originalRank" alike: both count.
DENSE_DISTANCE = Variation(
    "without denseDistance on the candidates",
    "dense-distance-gates",
    _without_dense_distance,
    _dense_distance_rule,
    also=True,
)
CATEGORY = Variation(
    "without the category filter",
    "quality-gates",
    _without_category,
    _category_rule,
    also_rules=frozenset({"dense-only"}),
)
VARIATIONS: tuple[Variation, ...] = (ALIASES, HINTS, DENSE_DISTANCE, CATEGORY)
"""The inputs the judge takes away, one at a time, in this order."""


def every_chunk(question: Any, size: int) -> Any:
    """A search or lookup asked for every chunk of a corpus of ``size`` (k or retrieveK raised to it).

    The category's counterfactual asks this (issue 51 item 4): a failure on a filtered question is the
    filter's only when the filter decided it, the hits it let through or kept out. A fault in how one hit
    is read (its docId, text or vector) shows on that hit unfiltered too, but an unfiltered question of
    the same k may not reach it, and "answered as the spec allows without the category" would then blame
    the filter. Asked for every chunk, the unfiltered question holds every hit the filtered one held.
    """
    if isinstance(question, SearchRequest) and question.k < size:
        return question.model_copy(update={"k": size})
    if isinstance(question, LookupRequest) and question.retrieve_k < size:
        return question.model_copy(update={"retrieve_k": size})
    return question


def variations(question: Question) -> list[tuple[Variation, Question]]:
    """The variations that apply to ``question``, each with the varied question."""
    out = []
    for variation in VARIATIONS:
        varied = variation.vary(question)
        if varied is not None:
            out.append((variation, varied))
    return out


def reattribute(found: list[model.Violation], variation: Variation) -> list[model.Violation]:
    """The failing findings counted under the rule the variation names for them (notes, and findings the
    input does not govern, unchanged)."""
    out = []
    for v in found:
        target = variation.rule_for(v) if v.rule.fails else None
        if target is not None and v.requirement == variation.governs:
            target = v.rule.id  # already counted where the input belongs: its own rule says more
        if target is None or target == v.rule.id:
            out.append(v if target is None else replace(v, varied=variation.says()))
            continue
        rule = model.RULES[target]
        if variation.also or v.rule.id in variation.also_rules:
            out.append(replace(v, varied=variation.says()))
        out.append(replace(v, rule=rule, actual=f"{v.actual} (seen by {v.rule.id})", varied=variation.says()))
    return out
