"""What each deletion of :mod:`tests.unit.conformance.scenarios.test_input_model` changes: a knowledge-base
constant or function, the explicit post-process and normalizer examples, the explicit requests; each
takes one input class out of one place the generator draws it from, and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance.corpus import _knowledge_base
from conformance.judging._spec_model import canonical
from conformance.scenarios import _explicit

__all__ = [
    "away_from_the_threshold",
    "beside_the_nearest",
    "between_two_chunks",
    "emoji",
    "hybrid_first",
    "keys_apart",
    "kinds_without",
    "latin",
    "lookups_at_the_default",
    "no_cap_one",
    "no_long_unfiltered_hybrid",
    "no_separator",
    "no_zero_distance",
    "one_category_per_document",
    "one_label",
    "prefix_of_a_category",
    "quality_without_zero",
    "ranks_within",
    "return_n_within",
    "short_hints",
    "threshold_default",
    "unfiltered_first",
    "without_pairs",
]


def kinds_without(test: Callable[[str], bool]) -> Callable[[Any], Any]:
    """The category kinds without the values ``test`` picks (a kind left empty goes)."""
    return lambda kinds: tuple(k for k in (tuple(v for v in kind if not test(v)) for kind in kinds) if k)


def latin(word: str) -> bool:
    return all(not ch.isalpha() or ord(ch) < 0x250 for ch in word)


def emoji(word: str) -> bool:
    return any(ord(ch) >= 0x1F300 for ch in word)


def prefix_of_a_category(absent: tuple[str, ...]) -> tuple[str, ...]:
    values = [v for kind in _knowledge_base._CATEGORY_KINDS for v in kind]
    return tuple(a for a in absent if not any(v != a and v.startswith(a) for v in values))


def keys_apart(e: dict[str, Any]) -> dict[str, Any]:
    """Each batch without the candidates whose concatenated docId and chunkIndex an earlier one has."""
    seen: set[str] = set()
    kept = []
    for c in e["batch"]:
        if f"{c.doc_id}{c.chunk_index}" not in seen:
            seen.add(f"{c.doc_id}{c.chunk_index}")
            kept.append(c)
    return {**e, "batch": tuple(kept)}


def no_separator(e: dict[str, Any]) -> dict[str, Any]:
    return {
        **e,
        "batch": tuple(c.model_copy(update={"doc_id": c.doc_id.replace("#", "-")}) for c in e["batch"]),
    }


def one_category_per_document(e: dict[str, Any]) -> dict[str, Any]:
    first: dict[str, str | None] = {}
    for c in e["batch"]:
        first.setdefault(c.doc_id, c.category)
    return {**e, "batch": tuple(c.model_copy(update={"category": first[c.doc_id]}) for c in e["batch"])}


def return_n_within(e: dict[str, Any]) -> dict[str, Any]:
    return_n = min(e["config"].return_n, len(e["batch"]))
    return {**e, "config": e["config"].model_copy(update={"return_n": return_n})}


def no_cap_one(e: dict[str, Any]) -> dict[str, Any]:
    cap = max(2, e["config"].max_chunks_per_document)
    return {**e, "config": e["config"].model_copy(update={"max_chunks_per_document": cap})}


def ranks_within(e: dict[str, Any]) -> dict[str, Any]:
    """Every example batch renumbered 1..n in its rank order (ties kept): no rank past the count."""
    distinct = sorted({c.original_rank for c in e["batch"]})
    number = {rank: i for i, rank in enumerate(distinct, start=1)}
    batch = tuple(c.model_copy(update={"original_rank": number[c.original_rank]}) for c in e["batch"])
    return {**e, "batch": batch}


def short_hints(e: dict[str, Any]) -> dict[str, Any]:
    """Every hint list of the example cut to 3 terms."""
    hints = {k: v for k, v in e.items() if k in ("hints", "first", "second")}
    short = {
        k: h.model_copy(update={"keywords": h.keywords[:3], "entities": h.entities[:3]})
        for k, h in hints.items()
    }
    return {**e, **short}


def hybrid_first(searches: Callable[..., list[dict[str, object]]]) -> Callable[..., list[dict[str, object]]]:
    return lambda kb: sorted(searches(kb), key=lambda r: r["mode"] == "dense")


def unfiltered_first(
    asked: Callable[..., list[dict[str, object]]],
) -> Callable[..., list[dict[str, object]]]:
    return lambda kb: sorted(asked(kb), key=lambda r: r["category"] is not None)


def beside_the_nearest(blank_near: Callable[..., Any]) -> Callable[..., Any]:
    """The low-quality lookup filtered by another category than its nearest chunk's."""

    def other(kb: Any, hybrid: Any) -> Any:
        query, nearest = blank_near(kb, hybrid)
        return query, next(c for c in kb.chunks if c.category not in (None, nearest.category))

    return other


def between_two_chunks(chunks: Any) -> np.ndarray:
    """The first tie between the duplicate and doc1's first chunk: no chunk at distance zero."""
    v = np.asarray(chunks[0].vector) + np.asarray(chunks[1].vector)
    return v / np.linalg.norm(v)


def one_label(e: dict[str, Any]) -> dict[str, Any]:
    """Each batch without the candidates whose canonical label is not its first candidate's."""
    batch = e["batch"]
    first = canonical(batch[0].score_label) if batch else None
    return {**e, "batch": tuple(c for c in batch if canonical(c.score_label) == first)}


def threshold_default(e: dict[str, Any]) -> dict[str, Any]:
    """A reference threshold of 0.0 made the default 0.5 (and the highly-relevant one at least that)."""
    config = e["config"]
    if config.reference_threshold != 0.0:
        return e
    update = {
        "reference_threshold": 0.5,
        "highly_relevant_threshold": max(0.5, config.highly_relevant_threshold),
    }
    return {**e, "config": config.model_copy(update=update)}


def no_zero_distance(e: dict[str, Any]) -> dict[str, Any]:
    batch = tuple(c.model_copy(update={"score": 0.05}) if c.score == 0.0 else c for c in e["batch"])
    return {**e, "batch": batch}


def away_from_the_threshold(e: dict[str, Any]) -> dict[str, Any]:
    """A one-candidate example's threshold moved a quarter away from its top quality: no gate crossed."""
    config = e["config"]
    if len(e["batch"]) != 1 or e["batch"][0].score is None:
        return e
    top = max(0.0, 1.0 - min(e["batch"][0].score, config.max_l2_distance) / config.max_l2_distance)
    moved = top - 0.25 if top >= 0.25 else top + 0.25
    return {
        **e,
        "config": config.model_copy(update={"reference_threshold": moved, "highly_relevant_threshold": 1.0}),
    }


def without_pairs(mp: pytest.MonkeyPatch, _: Path) -> None:
    """The post-process examples without the one-field pairs, and no normalizer examples."""
    pairs = list(_explicit.POST_PROCESS_PAIRS)
    mp.setattr(
        _explicit,
        "POST_PROCESS_EXAMPLES",
        tuple(e for e in _explicit.POST_PROCESS_EXAMPLES if e not in pairs),
    )
    mp.setattr(_explicit, "QUALITY_EXAMPLES", ())


def quality_without_zero(mp: pytest.MonkeyPatch, _: Path) -> None:
    examples = [e["request"] for e in _explicit.QUALITY_EXAMPLES]
    kept = [r.model_copy(update={"score": 0.05}) if r.score == 0.0 else r for r in examples]
    mp.setattr(_explicit, "QUALITY_EXAMPLES", tuple({"request": r} for r in kept))


def lookups_at_the_default(lookups: Callable[..., list[dict[str, object]]]) -> Callable[..., Any]:
    def default(r: dict[str, Any]) -> dict[str, Any]:
        config = dict(r.get("config") or {})
        if config.get("reference_threshold") == 0.0:
            config["reference_threshold"] = 0.5
            config["highly_relevant_threshold"] = max(0.5, config.get("highly_relevant_threshold", 0.75))
        return {**r, "config": config}

    return lambda kb: [default(r) for r in lookups(kb)]


def no_long_unfiltered_hybrid(searches: Callable[..., list[dict[str, object]]]) -> Callable[..., Any]:
    def long(r: dict[str, object]) -> bool:
        return r["mode"] == "hybrid" and r["category"] is None and len(str(r["query_text"]).split()) >= 40

    return lambda kb: [r for r in searches(kb) if not long(r)]
