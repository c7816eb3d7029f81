"""What the kit's oracle knows about a search or lookup question, as the model's truths.

Dense: brute-force squared L2 over the chunks (of the category), nearest first. Hybrid: RRF fused here
from the engine's own dense and BM25 answers, with the request's RRF k and a sub-search limit of k.
Chunks whose scores tie may come in any order: ties inside the answer are compared as sets, and a tie
that straddles the answer's end may put any of its chunks in the last places (``spill``).

The spec names RRF but neither its k nor the sub-search limits, which are the protocol's: when a hybrid
answer is not the one the request asks for, :func:`hybrid_alternatives` gives the other fusions a
conforming implementation may have run (RRF k 60, larger sub-search limits); the judge reports the one
that matches as a note, never a failure (readings 19).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..boundary._protocol import LookupRequest, SearchRequest, WireCandidate
from . import _spec_model as model
from ._oracle import Ranked, rrf_fuse

if TYPE_CHECKING:
    from ._oracle import MilvusOracle

__all__ = ["Fusion", "fusions", "hybrid_alternatives", "lookup_truth", "search_truth"]

DEFAULT_RRF_K = 60  # Milvus's RRFRanker default, and the value an implementation that ignores k uses
_LIMIT_FACTORS = (2, 3, 4, 5, 10)
_FIXED_LIMITS = (50, 100, 200)


class Fusion:
    """The parameters of one RRF fusion: ``rrf_k`` and the limit of each sub-search."""

    def __init__(self, rrf_k: int, sub_limit: int) -> None:
        self.rrf_k = rrf_k
        self.sub_limit = sub_limit

    def describe(self) -> str:
        return f"RRF k={self.rrf_k}, sub-search limit {self.sub_limit}"


def search_truth(
    oracle: MilvusOracle, request: SearchRequest, fusion: Fusion | None = None
) -> model.SearchTruth:
    """The oracle's answer to ``request``: expected hits with their scores, and every chunk's L2."""
    distances = oracle.l2(request.query_vector)
    if request.mode == "dense":
        ranked = oracle.l2_order(request.query_vector, request.category)
        return _truth(ranked, request.k, distances, frozenset(), model.DENSE_TIE, relative=False)
    fusion = fusion or Fusion(request.rrf_k, request.k)
    dense = oracle.dense_search(request.query_vector, fusion.sub_limit, request.category)
    bm25 = oracle.bm25_search(request.query_text, fusion.sub_limit, request.category)
    fused = rrf_fuse(([r.key for r in dense], [r.key for r in bm25]), rrf_k=fusion.rrf_k, limit=oracle.size)
    dense_leg = tuple(r.key for r in oracle.dense_search(request.query_vector, request.k, request.category))
    bm25_only = frozenset(r.key for r in fused[: request.k]) - set(dense_leg)
    whole = (
        (oracle.dense_search(request.query_vector, oracle.size, request.category), model.DENSE_TIE, False),
        (oracle.bm25_search(request.query_text, oracle.size, request.category), BM25_TIE, True),
    )
    bounds = _fused_bounds(whole, fusion.sub_limit, fusion.rrf_k)
    groups, spill = _overlapping(fused, request.k, bounds)
    truth = _truth(fused, request.k, distances, bm25_only, model.FUSED_TIE, relative=True)
    return replace(truth, dense_leg=dense_leg, groups=groups, spill=spill)


BM25_TIE = 1e-6
"""BM25 scores closer than this (relative) are a tie: chunks of the same words score the same, and the
engine may return them in either order (a conforming program's answer and the oracle's differed so)."""


def _fused_bounds(
    searches: Sequence[tuple[Sequence[Ranked], float, bool]], limit: int, rrf_k: int
) -> dict[tuple[str, int], tuple[float, float]]:
    """Each chunk's lowest and highest RRF score over every order its sub-searches may give tied chunks:
    a chunk tied with others over ranks a..b of a search adds between 1/(k+b) and 1/(k+a); one whose tie
    group crosses the sub-search limit may be left out of it (0)."""
    bounds: dict[tuple[str, int], tuple[float, float]] = {}
    for ranking, tie, relative in searches:
        for start, end in model.tie_groups(
            [model.Expected(r.key, r.score) for r in ranking], tie, relative=relative
        ):
            if start >= limit:
                break
            low = 0.0 if end > limit else 1.0 / (rrf_k + end)
            high = 1.0 / (rrf_k + start + 1)
            for entry in ranking[start : min(end, limit)]:
                was = bounds.get(entry.key, (0.0, 0.0))
                bounds[entry.key] = (was[0] + low, was[1] + high)
    return bounds


def _overlapping(
    fused: Sequence[Ranked], k: int, bounds: dict[tuple[str, int], tuple[float, float]]
) -> tuple[tuple[tuple[int, int], ...], tuple[model.Expected, ...]]:
    """The tie groups of the fused ranking's first ``k`` (chunks whose possible scores overlap, chained),
    and the chunks past ``k`` that may take the last group's places (the spill)."""

    def joins(entry: Ranked, floor: float) -> bool:
        high = bounds.get(entry.key, (entry.score, entry.score))[1]
        return high >= floor * (1 - model.FUSED_TIE)

    groups: list[tuple[int, int]] = []
    start, floor = 0, float("inf")
    head = list(fused[:k])
    for index, entry in enumerate(head):
        if index > start and not joins(entry, floor):
            groups.append((start, index))
            start, floor = index, float("inf")
        floor = min(floor, bounds.get(entry.key, (entry.score, entry.score))[0])
    if head:
        groups.append((start, len(head)))
    spill = []
    for entry in fused[k:]:
        if not joins(entry, floor):
            break
        spill.append(model.Expected(entry.key, entry.score))
    return tuple(groups), tuple(spill)


def _truth(
    ranked: Sequence[Ranked],
    k: int,
    distances: dict[tuple[str, int], float],
    bm25_only: frozenset[tuple[str, int]],
    tie: float,
    *,
    relative: bool,
) -> model.SearchTruth:
    expected = [model.Expected(r.key, r.score) for r in ranked]
    head = expected[:k]
    spill: list[model.Expected] = []
    if head and len(expected) > k:
        last = head[-1].score
        for entry in expected[k:]:
            if abs(entry.score - last) > tie * (max(abs(entry.score), abs(last)) if relative else 1.0):
                break
            spill.append(entry)
    return model.SearchTruth(
        tuple(head), distances, bm25_only, tie=tie, relative_tie=relative, spill=tuple(spill)
    )


def fusions(rrf_k: int, k: int, size: int) -> Iterator[Fusion]:
    """Other RRF fusions than (``rrf_k``, sub-limit ``k``) a conforming implementation may run: RRF k 60,
    and sub-searches larger than k (a few multiples of k, a few fixed sizes, the whole corpus)."""
    seen = {(rrf_k, k)}
    limits = [k * f for f in _LIMIT_FACTORS] + list(_FIXED_LIMITS) + [size]
    candidates = [(DEFAULT_RRF_K, k)]
    for each_k in dict.fromkeys((rrf_k, DEFAULT_RRF_K)):
        candidates += [(each_k, limit) for limit in limits if k < limit <= size]
    for pair in candidates:
        if pair not in seen:
            seen.add(pair)
            yield Fusion(*pair)


def hybrid_alternatives(
    oracle: MilvusOracle, request: SearchRequest
) -> Iterator[tuple[Fusion, model.SearchTruth]]:
    """Other RRF fusions a conforming implementation may run for a hybrid ``request`` (readings 19)."""
    for fusion in fusions(request.rrf_k, request.k, oracle.size):
        yield fusion, search_truth(oracle, request, fusion)


def lookup_truth(
    oracle: MilvusOracle, request: LookupRequest, fusion: Fusion | None = None
) -> model.LookupTruth:
    """The candidates each attempt of ``request`` gets from a conforming search, as post-process input."""

    def attempt(category: str | None) -> model.Attempt:
        search = request.search(category)
        truth = search_truth(oracle, search, fusion)
        head = [_candidate(oracle, request, e, rank, truth) for rank, e in enumerate(truth.ranking, start=1)]
        spill = [_candidate(oracle, request, e, len(head), truth) for e in truth.spill]
        return model.Attempt(category, tuple(head), tuple(model.truth_ties(truth)), tuple(spill))

    filtered = attempt(request.category) if request.category is not None else None
    return model.LookupTruth(unfiltered=attempt(None), filtered=filtered)


def _candidate(
    oracle: MilvusOracle,
    request: LookupRequest,
    expected: model.Expected,
    rank: int,
    truth: model.SearchTruth,
) -> WireCandidate:
    chunk = oracle.corpus.chunk(expected.key)
    distance = truth.distances[expected.key]
    return WireCandidate(
        doc_id=chunk.doc_id,
        chunk_index=chunk.chunk_index,
        text=chunk.text,
        original_rank=rank,
        score=expected.score,
        score_label=request.mode,
        dense_distance=distance if request.mode == "hybrid" else None,
        category=chunk.category,
        source_type=chunk.source_type,
    )
