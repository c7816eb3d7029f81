"""The qualityScores of one post-process reply (R3, R7): the dense formula, one rank mapping, the normalizer.

What the spec fixes: dense blocks follow the L2 formula with the configured ``maxL2Distance``; hybrid
blocks without ``denseDistance`` follow one rank mapping (rank 1 -> 1.0, never rising with rank, a
function of rank); with ``denseDistance`` a hybrid quality MAY be an absolute similarity from that
distance (R7), which the kit reads as one that never rises with the distance; the L2 formula on it is
the kit's reading (a note when an implementation uses another similarity). When the implementation
declares ``quality``, each block carries what its own normalizer answers for its candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

from ...boundary._protocol import Block, PostProcessConfig, QualityRequest, WireCandidate
from ._labels import canonical
from ._numbers import close, dense_quality, show
from ._rules import Violation, violation

__all__ = ["Normalizer", "batch_sizes", "block_qualities", "one_normalizer", "rank_mapping_problem"]

Normalizer = Callable[[QualityRequest], float | None]
"""The implementation's normalizer; None where it declines a rank above the batch size (readings 22)."""
"""The implementation's own normalizer, when it declares ``quality`` (the one-normalizer check)."""

Matched = Sequence[tuple[Block, WireCandidate]]


def _name(block: Block, candidate: WireCandidate) -> str:
    return f"{candidate.doc_id}#{candidate.chunk_index} (originalRank {candidate.original_rank})"


def block_qualities(
    kind: str | None, matched: Matched, config: PostProcessConfig, tolerance: float
) -> list[Violation]:
    """Every rule on the blocks' qualityScores, for a batch of one canonical label ``kind``."""
    found: list[Violation] = []
    for block, candidate in matched:
        q = block.quality_score
        if not 0.0 <= q <= 1.0:
            found.append(
                violation("quality-range", f"block {_name(block, candidate)}", "within [0, 1]", show(q))
            )
        if kind == "dense":
            want = dense_quality(candidate.score, config.max_l2_distance)
            if not close(q, want, tolerance):
                found.append(
                    violation(
                        "dense-formula",
                        f"block {_name(block, candidate)} (score {show(candidate.score)}, maxL2Distance "
                        f"{config.max_l2_distance:g})",
                        repr(want),
                        show(q),
                    )
                )
    if kind == "hybrid":
        found += _hybrid(matched, config, tolerance)
    return found


def _hybrid(matched: Matched, config: PostProcessConfig, tolerance: float) -> list[Violation]:
    """Hybrid qualities: the L2 formula on denseDistance where a block follows it, and one rank mapping
    for every other block; or, for blocks with denseDistance, any similarity that never rises with the
    distance (a note: the kit reads R7's "absolute similarity" as the L2 formula)."""
    max_l2 = config.max_l2_distance

    def by_formula(b: Block, c: WireCandidate) -> bool:
        return c.dense_distance is not None and close(
            b.quality_score, dense_quality(c.dense_distance, max_l2), tolerance
        )

    rest = [(b, c) for b, c in matched if not by_formula(b, c)]
    problem = rank_mapping_problem([(c.original_rank, b.quality_score) for b, c in rest], tolerance)
    if problem is None:
        return []
    with_distance = [(b, c) for b, c in rest if c.dense_distance is not None]
    if not with_distance:
        rule, item, expected, actual = problem
        return [violation(rule, item, expected, actual)]
    without = [(c.original_rank, b.quality_score) for b, c in rest if c.dense_distance is None]
    similarity = _similarity_problem([(c.dense_distance or 0.0, b.quality_score) for b, c in with_distance])
    if similarity is None and rank_mapping_problem(without, tolerance) is None:
        return [
            violation(
                "dense-distance-formula",
                "hybrid blocks with denseDistance",
                f"the L2 formula on each denseDistance (maxL2Distance {max_l2:g})",
                "another similarity that never rises with the distance: "
                + ", ".join(f"{c.dense_distance:.4g} -> {b.quality_score:.4g}" for b, c in with_distance[:4]),
            )
        ]
    rule, item, expected, actual = problem
    return [
        violation(
            "dense-distance-quality",
            "hybrid blocks with denseDistance",
            f"an absolute similarity from each denseDistance (never rising with it; the L2 formula with "
            f"maxL2Distance {max_l2:g} is one), or a rank mapping",
            f"neither: {item} {actual}" + (f"; {similarity}" if similarity else ""),
        )
    ]


def _similarity_problem(pairs: Sequence[tuple[float, float]]) -> str | None:
    """Why (distance, quality) pairs are not a similarity of the distance (never rising with it)."""
    ordered = sorted(pairs)
    for (d1, q1), (d2, q2) in pairwise(ordered):
        if q2 > q1 + 1e-9 and d2 > d1:
            return f"denseDistance {d1:.6g} -> {q1!r} but {d2:.6g} -> {q2!r}"
        if d1 == d2 and abs(q1 - q2) > 1e-9:
            return f"the same denseDistance {d1:.6g} -> {q1!r} and {q2!r}"
    return None


def rank_mapping_problem(
    pairs: Sequence[tuple[int, float]], tolerance: float
) -> tuple[str, str, str, str] | None:
    """Why (rank, quality) pairs cannot come from one rank mapping, or None when they can."""
    for rank, quality in pairs:
        if rank == 1 and not close(quality, 1.0, tolerance):
            return ("rank-one", "the block of originalRank 1", "qualityScore 1.0", show(quality))
    by_rank = sorted(pairs)
    for (r1, q1), (r2, q2) in pairwise(by_rank):
        if r1 == r2 and not close(q1, q2, tolerance):
            return (
                "rank-monotone",
                f"two blocks of originalRank {r1}",
                "the same qualityScore",
                f"{q1!r} and {q2!r}",
            )
        if q2 > q1 + tolerance * max(1.0, abs(q1)):
            return (
                "rank-monotone",
                f"originalRank {r1} then {r2}",
                "a qualityScore that does not increase",
                f"{q1!r} then {q2!r}",
            )
    return None


def batch_sizes(candidates: Sequence[WireCandidate], kept: int, accepted: int) -> tuple[int, ...]:
    """The ``n`` a conforming post-process may hand its normalizer: "a candidate batch of size n" is the
    batch handed in, counted before or after dedup, or what remains after the caps (readings 4), or,
    when ranks run past the count (a later page, gaps), the highest rank (readings 22)."""
    distinct = len({(c.doc_id, c.chunk_index) for c in candidates})
    highest = max((c.original_rank for c in candidates), default=1)
    return tuple(dict.fromkeys(max(n, 1) for n in (len(candidates), distinct, kept, accepted, highest)))


def one_normalizer(
    matched: Matched,
    sizes: tuple[int, ...],
    config: PostProcessConfig,
    normalizer: Normalizer,
    tolerance: float,
    candidates: Sequence[WireCandidate] = (),
) -> list[Violation]:
    """Each block's quality is what the implementation's normalizer answers for its candidate, with one
    of the batch sizes a conforming post-process may use.

    Copies of one chunk at one originalRank (``candidates``: the whole batch) are the same block by
    everything a block shows, yet may carry other labels, scores and denseDistance: the block may be any
    of them, so any copy's answer will do. Which copy dedup keeps is R4's question (its own rules), not
    the normalizer's: a block that is a later copy must not fail R3 too."""
    for block, c in matched:
        copies = [
            other
            for other in candidates
            if (other.doc_id, other.chunk_index, other.original_rank)
            == (c.doc_id, c.chunk_index, c.original_rank)
        ] or [c]
        answers = []
        for copy in copies:
            for n in sizes:
                request = QualityRequest(
                    score_label=copy.score_label,
                    score=copy.score,
                    original_rank=copy.original_rank,
                    batch_size=n,
                    max_l2_distance=config.max_l2_distance,
                    dense_distance=copy.dense_distance,
                )
                answer = normalizer(request)
                if answer is not None:
                    answers.append(answer)
        if not any(close(block.quality_score, a, tolerance) for a in answers):
            return [
                violation(
                    "one-normalizer",
                    f"block {_name(block, c)}",
                    " or ".join(f"{a!r}" for a in dict.fromkeys(answers))
                    + " (the normalizer's answer for this candidate, batch size "
                    + " or ".join(map(str, sizes))
                    + ")",
                    show(block.quality_score),
                )
            ]
    return []


def kind_of(candidates: Sequence[WireCandidate]) -> str | None:
    """The batch's one canonical label, or None when it mixes them (or holds an unknown label)."""
    kinds = {canonical(c.score_label) for c in candidates}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None
