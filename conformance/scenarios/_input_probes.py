"""Probes of the request classes issue 44 added to the input model: questions that differ in one field
(both orders, every field of each capability), falsy settings crossed with the decision they change,
each gate's threshold crossed, batches mixing labels, the long query unfiltered. Each takes what one run
asks (:class:`~conformance.scenarios._input_model.Drawn`) and says whether the class is there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..boundary._protocol import (
    LookupRequest,
    PostProcessConfig,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)
from ..corpus._scenario_corpus import ScenarioCorpus
from ..judging._spec_model import canonical, dense_quality


class Drawn(Protocol):
    """What the probes read of one run's requests (the input model's ``Drawn``, which imports them)."""

    @property
    def corpus(self) -> ScenarioCorpus: ...
    @property
    def searches(self) -> list[SearchRequest]: ...
    @property
    def lookups(self) -> list[LookupRequest]: ...
    @property
    def post_process(self) -> tuple[dict[str, Any], ...]: ...
    @property
    def quality(self) -> list[QualityRequest]: ...
    @property
    def batches(self) -> list[tuple[WireCandidate, ...]]: ...


__all__ = [
    "gates_crossed",
    "long_unfiltered_hybrid",
    "mixed_labels",
    "one_field_pairs_asked",
    "zero_distance_handed",
    "zero_threshold",
]


def _squared_l2(a: Sequence[float], b: Sequence[float]) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b, strict=True))


def _fields_differing(a: Any, b: Any) -> set[str]:
    """The fields two questions differ in; a settings value's fields by ``config.<name>``."""
    one, two = dict(a), dict(b)
    out = {k for k in one.keys() | two.keys() if k != "config" and one.get(k) != two.get(k)}
    configs = one.get("config"), two.get("config")
    if isinstance(configs[0], PostProcessConfig) and configs[0] != configs[1]:
        out |= {
            f"config.{k}"
            for k in PostProcessConfig.model_fields
            if getattr(configs[0], k) != getattr(configs[1], k)
        }
    return out


def _one_field_both_orders(asked: Sequence[Any], fields: Sequence[str]) -> bool:
    """Every field of ``fields`` is the one difference between two questions asked one after the other,
    in both orders: a question, its variant, and the question again right after."""
    seen: set[str] = set()
    for a, b, c in zip(asked, asked[1:], asked[2:], strict=False):
        differ = _fields_differing(a, b)
        if len(differ) == 1 and a == c:
            seen |= differ
    return set(fields) <= seen


_SEARCH_FIELDS = tuple(SearchRequest.model_fields)
_LOOKUP_FIELDS = (
    "query_text", "query_vector", "mode", "category", "retrieve_k", "rrf_k", "hints",
    *(f"config.{k}" for k in PostProcessConfig.model_fields),
)  # fmt: skip
_POST_FIELDS = ("batch", "hints", *(f"config.{k}" for k in PostProcessConfig.model_fields))
_QUALITY_FIELDS = ("score_label", "score", "original_rank", "max_l2_distance")


def one_field_pairs_asked(d: Drawn) -> bool:
    return (
        _one_field_both_orders(d.searches, _SEARCH_FIELDS)
        and _one_field_both_orders(d.lookups, _LOOKUP_FIELDS)
        and _one_field_both_orders(d.post_process, _POST_FIELDS)
        and _one_field_both_orders(d.quality, _QUALITY_FIELDS)
    )


def _dense_top(batch: Sequence[WireCandidate], config: PostProcessConfig) -> float | None:
    """The top quality of an all-dense batch by the spec's formula (None for any other batch)."""
    if not batch or any(canonical(c.score_label) != "dense" or c.score is None for c in batch):
        return None
    return max(dense_quality(c.score, config.max_l2_distance) for c in batch)


def zero_threshold(d: Drawn) -> bool:
    """A reference threshold of 0.0 under a top quality below the default 0.5 (by a margin), in a
    post-process example and in a filtered dense lookup."""
    examples = any(
        e["config"].reference_threshold == 0.0
        and (top := _dense_top(e["batch"], e["config"])) is not None
        and 0.05 < top < 0.45
        for e in d.post_process
    )
    chunks = d.corpus.corpus.chunks
    for r in d.lookups:
        if r.mode != "dense" or r.category is None or r.config.reference_threshold != 0.0:
            continue
        distance = min(_squared_l2(c.vector, r.query_vector) for c in chunks if c.category == r.category)
        if 0.05 < dense_quality(distance, r.config.max_l2_distance) < 0.45:
            return examples
    return False


def zero_distance_handed(d: Drawn) -> bool:
    """A dense distance of exactly 0.0 handed to the normalizer and in a post-process batch."""
    asked = any(canonical(q.score_label) == "dense" and q.score == 0.0 for q in d.quality)
    return asked and any(canonical(c.score_label) == "dense" and c.score == 0.0 for b in d.batches for c in b)


def gates_crossed(d: Drawn) -> bool:
    """A reference threshold with top qualities just below it, exactly at it and just above it."""
    sides: dict[float, set[str]] = {}
    for e in d.post_process:
        top, t = _dense_top(e["batch"], e["config"]), e["config"].reference_threshold
        if top is not None and abs(top - t) <= 0.01:
            sides.setdefault(t, set()).add("at" if top == t else "below" if top < t else "above")
    return any(len(s) == 3 for s in sides.values())


def mixed_labels(d: Drawn) -> bool:
    return any({canonical(c.score_label) for c in b} >= {"dense", "hybrid"} for b in d.batches)


def long_unfiltered_hybrid(d: Drawn) -> bool:
    return any(
        r.mode == "hybrid" and r.category is None and len(r.query_text.split()) >= 40 for r in d.searches
    )
