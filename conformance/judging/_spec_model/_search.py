"""Search (R1, R2, R6, R7): the hits of one search against what the kit's oracle knows about it.

The oracle's answer (:class:`SearchTruth`) comes from first principles: brute-force squared L2 for every
chunk, and RRF fused by the kit from the engine's separate dense and BM25 answers, with the request's k.
Chunks whose expected scores tie may come in any order (engines break ties differently).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ...boundary._protocol import Hit, SearchReply, SearchRequest
from ._labels import canonical
from ._numbers import DISTANCE_TOLERANCE, show
from ._rules import Violation, violation

__all__ = [
    "DENSE_TIE",
    "FUSED_TIE",
    "Expected",
    "SearchTruth",
    "check_search",
    "tie_groups",
    "truth_ties",
]

ChunkKey = tuple[str, int]
DENSE_TIE = 1e-5
"""Squared L2 distances closer than this are a tie: engines sum float32 in their own order."""
FUSED_TIE = 1e-9
"""Fused scores closer than this (relative) are a tie: two RRF sums of the same ranks, or float32 noise."""
# Placeholder scores the legacy store gave BM25-only hits: maxL2Distance for unit vectors, 2 under the
# design note's Euclidean reading and 4 under Milvus's squared L2 (readings 2).
MAX_L2_PLACEHOLDERS = (2.0, 4.0)


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
    tie: float = DENSE_TIE  # scores this close tie (relative for fused scores)
    relative_tie: bool = False
    spill: tuple[Expected, ...] = ()  # past the answer's end, tied with its last entry: may take its place
    dense_leg: tuple[ChunkKey, ...] = ()  # hybrid: the dense sub-search's answer at limit k, in its order
    # Hybrid: the tie groups of ``ranking`` where the oracle knows more than the fused scores: chunks tied in
    # a sub-search may take each other's ranks there, which moves their fused scores (_truth.py).
    groups: tuple[tuple[int, int], ...] = ()


def tie_groups(
    ranking: Sequence[Expected], tie: float = DENSE_TIE, *, relative: bool = False
) -> list[tuple[int, int]]:
    """``(start, end)`` index ranges of ``ranking`` whose scores tie (each within ``tie`` of the next)."""
    groups, start = [], 0
    while start < len(ranking):
        end = start + 1
        while end < len(ranking) and _ties(ranking[end - 1].score, ranking[end].score, tie, relative):
            end += 1
        groups.append((start, end))
        start = end
    return groups


def _ties(a: float, b: float, tie: float, relative: bool) -> bool:
    return abs(a - b) <= tie * (max(abs(a), abs(b)) if relative else 1.0)


def truth_ties(truth: SearchTruth) -> list[tuple[int, int]]:
    """The tie groups of ``truth``'s ranking."""
    if truth.groups:
        return list(truth.groups)
    return tie_groups(truth.ranking, truth.tie, relative=truth.relative_tie)


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
        if _placeholder(hit.dense_distance):
            # Both sentences break: R2's "max-L2 weak placeholders", and R7's attached distance being the
            # hit's "dense L2 distance".
            wanted, got = f"its dense L2 distance {want:.6f}", f"denseDistance {show(hit.dense_distance)}"
            found.append(violation("no-placeholder", item, wanted, f"{got}, a max-L2 placeholder"))
            found.append(violation("dense-distance-value", item, wanted, f"{got}, a max-L2 placeholder"))
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
    wrong = [h for h in hits if canonical(h.score_label) != request.mode]
    # A hybrid hit mislabelled because it carries denseDistance breaks R7 ("scoreLabel SHALL still
    # canonicalize to hybrid"): the hits without one keep their label. Mislabelled hits without a
    # distance (labels by the leg that found a hit, say) break R1's own sentence.
    by_distance = request.mode == "hybrid" and all(h.dense_distance is not None for h in wrong)
    mislabelled = {id(h) for h in wrong}  # by identity: comparing hits field by field costs O(n^2)
    by_distance = by_distance and any(h.dense_distance is None for h in hits if id(h) not in mislabelled)
    for hit in hits:
        item = f"{request.mode} hit {_show(_key(hit))}"
        if canonical(hit.score_label) != request.mode:
            rule = "dense-distance-label" if by_distance else "hit-label"
            found.append(
                violation(rule, item, f"a label canonicalizing to {request.mode!r}", repr(hit.score_label))
            )
            if request.mode == "hybrid" and hit.score_label == "l2_distance":
                found.append(
                    violation("l2-relabel", item, "'hybrid'", "'l2_distance', the legacy L2 backfill's")
                )
        elif hit.score_label == "bm25_only_no_dense":
            # R2 names this label on new hits, and R1 names it among the legacy labels new emissions
            # never carry: both sentences break.
            found.append(violation("no-bm25-only-label", item, "'hybrid'", "'bm25_only_no_dense'"))
            found.append(
                violation("emitted-alias", item, "'hybrid': a hit is a new emission", "'bm25_only_no_dense'")
            )
        elif hit.score_label != request.mode:
            found.append(
                violation(
                    "emitted-alias",
                    item,
                    f"{request.mode!r}: a hit is a new emission, and carries dense or hybrid only",
                    f"{hit.score_label!r}, a legacy alias",
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
    for start, end in truth_ties(truth):
        want_group = {e.key for e in truth.ranking[start:end]}
        if end == len(truth.ranking) and truth.spill:
            # The last tie group straddles the answer's end: any of its chunks may take these places.
            pool = want_group | {e.key for e in truth.spill}
            if len(set(got[start:end])) == end - start and set(got[start:end]) <= pool:
                continue
        elif set(got[start:end]) == want_group:
            continue
        if request.mode == "hybrid" and _dense_leg_alone(got, truth):
            # The dense sub-search's answer, in its order: BM25's part is missing, whatever the hits
            # carry. The fault is in the hybrid query (what BM25 is asked), R1's order, not R7's.
            what = f"{what} (the hits are the dense search's alone, in its order: what was BM25 asked?)"
        elif request.mode == "hybrid" and _reordered_by_dense_distance(hits, truth):
            # The attached distance moved the hits: R7's "Retrieval order SHALL remain the hybrid/RRF
            # order" names exactly that (readings 18).
            rule, what = "dense-distance-order", f"{what}, whatever the attached denseDistance"
        return [
            violation(
                rule,
                f"{request.mode} hits by originalRank (first difference at rank {start + 1})",
                f"{what}: {shown_want}",
                shown_got,
            )
        ]
    return []


def _dense_leg_alone(got: Sequence[ChunkKey], truth: SearchTruth) -> bool:
    """Whether a hybrid answer is its dense sub-search's hits, in ascending L2 (ties in any order), where
    RRF with BM25 says otherwise: as though BM25 were asked nothing, or a text that finds nothing."""
    if not truth.dense_leg or set(got) != set(truth.dense_leg):
        return False
    distances = [truth.distances.get(key) for key in got]
    if any(d is None for d in distances):
        return False
    return all(a <= b + DENSE_TIE for a, b in pairwise(distances))  # type: ignore[operator]


def _reordered_by_dense_distance(hits: Sequence[Hit], truth: SearchTruth) -> bool:
    """Whether the hits are the RRF answer's chunks, and every pair the reply puts against the RRF order
    (outside a tie) is in the order of the denseDistance the hits carry."""
    if {_key(h) for h in hits} != {e.key for e in truth.ranking}:
        return False
    group = {}
    for number, (start, end) in enumerate(truth_ties(truth)):
        group.update({truth.ranking[i].key: number for i in range(start, end)})
    inverted = [
        (a, b)
        for i, a in enumerate(hits)
        for b in hits[i + 1 :]
        if group[_key(a)] > group[_key(b)]  # the reply puts a first; RRF puts b first
    ]
    return bool(inverted) and all(
        a.dense_distance is not None
        and b.dense_distance is not None
        and a.dense_distance <= b.dense_distance + DISTANCE_TOLERANCE
        for a, b in inverted
    )


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
    """R2: a hybrid score is never the dense L2 (nor a placeholder, nor a function of the distance where the
    fused order differs); a score on another scale than the fused one is noted."""
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
    unlike = _unordered(scored)
    if unlike is None:
        return []
    (f1, s1, h1), (f2, s2, h2) = unlike
    pair = f"hybrid hits {_show(_key(h1))} and {_show(_key(h2))}"
    dense = [(truth.distances[_key(h)], s, h) for _, s, h in scored if _key(h) in truth.distances]
    if _dense_map(dense, fused):
        return [
            violation(
                "hybrid-score",
                "hybrid hit scores",
                "fused scores (or scores ordered like them), never a function of the dense L2 distance",
                "scores that follow the dense distance, not the fused order: "
                + ", ".join(f"{_show(_key(h))} d={d:.4f} score={show(s)}" for d, s, h in dense[:4]),
            )
        ]
    return [
        violation(
            "hybrid-score-scale",
            pair,
            f"scores ordered like their fused scores ({f1:.6f} > {f2:.6f})",
            f"{show(s1)} < {show(s2)}",
        )
    ]


def _unordered(scored: Sequence[tuple[float, float | None, Hit]]) -> tuple[Any, Any] | None:
    """Two hits whose scores are ordered against their fused scores, if any."""
    for a in scored:
        for b in scored:
            if a[0] > b[0] * (1 + FUSED_TIE) and a[1] is not None and b[1] is not None and a[1] < b[1]:
                return a, b
    return None


def _dense_map(pairs: Sequence[tuple[float, float | None, Hit]], fused: Mapping[ChunkKey, float]) -> bool:
    """Whether the scores are a strictly monotone function of the dense distance (either direction), on
    hits whose fused order differs from their dense order (where the two agree, nothing tells them apart)."""
    keyed = [(d, fused[_key(h)]) for d, s, h in pairs if s is not None and _key(h) in fused]
    if not any(d1 < d2 and f1 < f2 for d1, f1 in keyed for d2, f2 in keyed):
        return False
    scored = [(d, s) for d, s, _ in pairs if s is not None]
    # Every pair whose distances differ beyond the tolerance, not only neighbours in distance order: a
    # near-tie is not transitive, so a hit a hair from its neighbour must still be compared with the rest.
    steps = sum(d2 - d1 > DISTANCE_TOLERANCE for d1, d2 in pairwise(sorted(d for d, _ in scored)))
    if steps < 2:  # fewer than three distinct distances: too few to call it a function of them
        return False
    distinct = [(s1, s2) for d1, s1 in scored for d2, s2 in scored if d2 - d1 > DISTANCE_TOLERANCE]
    rising = all(s2 > s1 for s1, s2 in distinct)
    falling = all(s2 < s1 for s1, s2 in distinct)
    return rising or falling
