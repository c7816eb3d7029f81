"""Search (R1, R2, R6, R7): the hits of one search against what the kit's oracle knows about it.

The oracle's answer (:class:`SearchTruth`) comes from first principles: brute-force squared L2 for every
chunk, and RRF fused by the kit from the engine's separate dense and BM25 answers, with the request's k.
Chunks whose expected scores tie may come in any order (engines break ties differently).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._protocol import Hit, SearchReply, SearchRequest
from ._numbers import DISTANCE_TOLERANCE, canonical, show
from ._rules import Violation, violation

__all__ = [
    "DATA_READS",
    "EngineCall",
    "Expected",
    "SearchTruth",
    "check_dense_only",
    "check_search",
    "tie_groups",
]

ChunkKey = tuple[str, int]
TIE = 1e-12
# Placeholder scores the legacy store gave BM25-only hits: maxL2Distance for unit vectors, 2 under the
# design note's Euclidean reading and 4 under Milvus's squared L2 (readings 2).
MAX_L2_PLACEHOLDERS = (2.0, 4.0)
DATA_READS = frozenset({"Search", "HybridSearch", "Query", "SearchByPrimaryKeys"})
"""Engine calls that read the collection's data (every other call is schema, loading or housekeeping)."""


@dataclass(frozen=True)
class Expected:
    """One expected hit: the chunk and the score that ranks it (L2 for dense, fused score for hybrid)."""

    key: ChunkKey
    score: float


@dataclass(frozen=True)
class SearchTruth:
    """The oracle's answer to one search request."""

    ranking: tuple[Expected, ...]
    distances: Mapping[ChunkKey, float]
    bm25_only: frozenset[ChunkKey] = frozenset()


def tie_groups(ranking: Sequence[Expected]) -> list[tuple[int, int]]:
    """``(start, end)`` index ranges of ``ranking`` whose scores tie."""
    groups, start = [], 0
    while start < len(ranking):
        end = start + 1
        while end < len(ranking) and abs(ranking[end].score - ranking[start].score) <= TIE:
            end += 1
        groups.append((start, end))
        start = end
    return groups


def _key(hit: Hit) -> ChunkKey:
    return (hit.doc_id, hit.chunk_index)


def _show(key: ChunkKey) -> str:
    return f"{key[0]}#{key[1]}"


def check_search(request: SearchRequest, reply: SearchReply, truth: SearchTruth) -> list[Violation]:
    """Every rule the spec fixes for one search reply; an empty list means the spec allows it."""
    hits = sorted(reply.hits, key=lambda h: h.original_rank)
    found: list[Violation] = []
    ranks = [h.original_rank for h in hits]
    if ranks != list(range(1, len(hits) + 1)):
        found.append(violation("ranks", f"{request.mode} hits", f"originalRank 1..{len(hits)}", str(ranks)))
    found += _labels(request, hits)
    order = _order(request, hits, truth)
    found += order
    for hit in hits:
        want = truth.distances.get(_key(hit))
        if hit.dense_distance is None or want is None or abs(hit.dense_distance - want) <= DISTANCE_TOLERANCE:
            continue
        item = f"hit {_show(_key(hit))}"
        if _key(hit) in truth.bm25_only and _placeholder(hit.dense_distance):
            wanted, got = f"its dense L2 distance {want:.6f}", f"denseDistance {show(hit.dense_distance)}"
            found.append(
                violation("no-placeholder", f"BM25-only {item}", wanted, f"{got}, a max-L2 placeholder")
            )
        else:
            found.append(violation("dense-distance-value", item, f"{want:.6f}", show(hit.dense_distance)))
    if request.mode == "dense":
        found += _dense_scores(hits, truth)
    else:
        # Scores ordered like the fused scores are only comparable when the hits are the right ones.
        found += _hybrid_scores(hits, truth, compare_order=not order)
    return found


def _placeholder(value: float) -> bool:
    return any(abs(value - p) <= DISTANCE_TOLERANCE for p in MAX_L2_PLACEHOLDERS)


def _labels(request: SearchRequest, hits: Sequence[Hit]) -> list[Violation]:
    found = []
    for hit in hits:
        item = f"{request.mode} hit {_show(_key(hit))}"
        if canonical(hit.score_label) != request.mode:
            rule = (
                "dense-distance-label"
                if hit.dense_distance is not None and request.mode == "hybrid"
                else "hit-label"
            )
            found.append(
                violation(rule, item, f"a label canonicalizing to {request.mode!r}", repr(hit.score_label))
            )
        elif hit.score_label == "bm25_only_no_dense":
            found.append(
                violation(
                    "no-bm25-only-label",
                    item,
                    "'hybrid' (or another non-bm25_only label)",
                    "'bm25_only_no_dense'",
                )
            )
    return found


def _order(request: SearchRequest, hits: Sequence[Hit], truth: SearchTruth) -> list[Violation]:
    got = [_key(h) for h in hits]
    want = [e.key for e in truth.ranking]
    rule = "dense-hits" if request.mode == "dense" else "hybrid-order"
    what = (
        f"the {len(want)} nearest chunks by ascending L2"
        + (f" in category {request.category!r}" if request.category else "")
        if request.mode == "dense"
        else f"RRF (k={request.rrf_k}) of the dense and BM25 searches at limit {request.k}"
        + (f", category {request.category!r}" if request.category else "")
    )
    shown_want = ", ".join(map(_show, want)) or "no hits"
    shown_got = ", ".join(map(_show, got)) or "no hits"
    if len(got) != len(want):
        return [violation(rule, f"{request.mode} hits by originalRank", f"{what}: {shown_want}", shown_got)]
    for start, end in tie_groups(truth.ranking):
        if set(got[start:end]) != {e.key for e in truth.ranking[start:end]}:
            return [
                violation(
                    rule,
                    f"{request.mode} hits by originalRank (first difference at rank {start + 1})",
                    f"{what}: {shown_want}",
                    shown_got,
                )
            ]
    return []


def _dense_scores(hits: Sequence[Hit], truth: SearchTruth) -> list[Violation]:
    found = []
    for hit in hits:
        want = truth.distances.get(_key(hit))
        if want is None:
            continue
        if hit.score is None or abs(hit.score - want) > DISTANCE_TOLERANCE:
            found.append(
                violation(
                    "dense-score",
                    f"dense hit {_show(_key(hit))}",
                    f"its squared L2 distance {want:.6f}",
                    show(hit.score),
                )
            )
    return found


def _hybrid_scores(hits: Sequence[Hit], truth: SearchTruth, *, compare_order: bool = True) -> list[Violation]:
    found = []
    fused = {e.key: e.score for e in truth.ranking}
    for hit in hits:
        key, score = _key(hit), hit.score
        distance = truth.distances.get(key)
        if score is None or distance is None:
            continue
        if (
            abs(score - distance) <= DISTANCE_TOLERANCE
            and abs(fused.get(key, distance) - distance) > DISTANCE_TOLERANCE
        ):
            found.append(
                violation(
                    "hybrid-score",
                    f"hybrid hit {_show(key)}",
                    f"its fused score {fused.get(key, float('nan')):.6f} (or a score ordered like it)",
                    f"{show(score)}, its dense L2 distance",
                )
            )
        elif key in truth.bm25_only and _placeholder(score):
            found.append(
                violation(
                    "no-placeholder",
                    f"BM25-only hybrid hit {_show(key)}",
                    f"its fused score {fused.get(key, float('nan')):.6f}",
                    f"{show(score)}, a max-L2 placeholder",
                )
            )
    if found or not compare_order:
        return found
    scored = [(fused[_key(h)], h.score, h) for h in hits if h.score is not None and _key(h) in fused]
    for f1, s1, h1 in scored:
        for f2, s2, h2 in scored:
            if f1 > f2 + TIE and s1 is not None and s2 is not None and s1 < s2:
                return [
                    violation(
                        "hybrid-score",
                        f"hybrid hits {_show(_key(h1))} and {_show(_key(h2))}",
                        f"scores ordered like their fused scores ({f1:.6f} > {f2:.6f})",
                        f"{show(s1)} < {show(s2)}",
                    )
                ]
    return found


class _Target(Protocol):
    @property
    def kind(self) -> str: ...


class EngineCall(Protocol):
    """What the recording proxy saw of one engine call (see ``RecordedCall``)."""

    @property
    def method(self) -> str: ...
    @property
    def searches(self) -> Sequence[_Target]: ...
    def describe(self) -> str: ...


def check_dense_only(calls: Sequence[EngineCall], what: str) -> list[Violation]:
    """R6: in dense mode every data-reading engine call is a dense ANN search, and there is one."""
    reads = [c for c in calls if c.method in DATA_READS]
    other = [
        c.describe()
        for c in reads
        if c.method != "Search" or len(c.searches) != 1 or c.searches[0].kind != "dense"
    ]
    if other:
        return [violation("dense-only", what, "dense ANN searches only", "; ".join(other))]
    if not reads:
        return [
            violation(
                "dense-only",
                what,
                "a dense ANN search",
                "no search reached Milvus (" + (", ".join(c.method for c in calls) or "no call") + ")",
            )
        ]
    return []
