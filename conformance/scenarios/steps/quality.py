"""The single normalizer (R3): the dense formula to float32 precision, the hybrid mapping by its properties.

The spec fixes the dense formula, so the kit checks numbers. For hybrid it fixes only properties (rank
1 -> 1.0, non-increasing in rank, no dense L2 or RRF magnitude needed), so any mapping with them passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pytest_bdd import parsers, then, when

from ...boundary._protocol import PostProcessConfig, PostProcessReply, QualityRequest, WireCandidate
from ...judging._judge import Judge
from ...judging._spec_model import QUALITY_TOLERANCE, dense_quality
from ._tables import optional_float

# Batch sizes for the fused-score invariance check: the edges and two ordinary sizes keep it to a few
# hundred calls while still covering n = 1, where rank 1 is also the last rank.
_INVARIANCE_SIZES = (1, 2, 10, 50)


class Scored(NamedTuple):
    """One question to the normalizer and its answer."""

    request: QualityRequest
    quality: float


def _quality(judge: Judge, request: QualityRequest) -> float:
    return judge.quality_score(request)


def _show(request: QualityRequest) -> str:
    parts = [f"label={request.score_label!r}", f"score={request.score}"]
    if request.score_label != "dense":
        parts += [f"originalRank={request.original_rank}", f"batch size={request.batch_size}"]
    return ", ".join([*parts, f"maxL2Distance={request.max_l2_distance:g}"])


# -- dense ---------------------------------------------------------------------------------------


@when(
    parsers.parse('label is "dense" and score is L2 distance {d} with configured maxL2Distance {max_l2:g}'),
    converters={"d": optional_float},
    target_fixture="dense_scored",
)
def _(d: float | None, max_l2: float, rqs_judge: Judge) -> Scored:
    request = QualityRequest(score_label="dense", score=d, max_l2_distance=max_l2)
    return Scored(request, _quality(rqs_judge, request))


@then(
    parsers.parse(
        "qualityScore SHALL equal max(0, 1 - min(d, maxL2Distance) / maxL2Distance), that is {expected:g}"
    )
)
def _(expected: float, dense_scored: Scored) -> None:
    request, quality = dense_scored
    d, max_l2 = request.score, request.max_l2_distance
    # The Examples table is the spec's formula worked out; check the spec model's arithmetic against it.
    formula = dense_quality(d, max_l2)
    assert abs(formula - expected) <= QUALITY_TOLERANCE, (
        f"kit fixture error: the formula gives {formula}, not {expected}"
    )
    assert abs(quality - expected) <= QUALITY_TOLERANCE, (
        f"qualityScore SHALL be max(0, 1 - min(d, maxL2Distance) / maxL2Distance) (null score -> 0) = "
        f"{expected:g} for {_show(request)}; the implementation answered {quality!r}"
    )


# -- hybrid --------------------------------------------------------------------------------------


@when(
    parsers.parse(
        'label is "hybrid" and originalRank is r within a candidate batch of size n, '
        "for every n from 1 to {n_max:d} and every r from 1 to n"
    ),
    target_fixture="hybrid_qualities",
)
def _(n_max: int, rqs_judge: Judge) -> dict[int, list[float]]:
    # No score and no dense distance: the mapping must not need either.
    return {
        n: [_quality(rqs_judge, _hybrid(rank=r, n=n)) for r in range(1, n + 1)] for n in range(1, n_max + 1)
    }


def _hybrid(*, rank: int, n: int, score: float | None = None) -> QualityRequest:
    return QualityRequest(score_label="hybrid", score=score, original_rank=rank, batch_size=n)


@then("qualityScore SHALL be a monotonically non-increasing function of r over each batch")
def _(hybrid_qualities: dict[int, list[float]]) -> None:
    for n, qualities in hybrid_qualities.items():
        for r in range(2, n + 1):
            before, after = qualities[r - 2], qualities[r - 1]
            assert after <= before + QUALITY_TOLERANCE, (
                f"hybrid qualityScore SHALL NOT increase with originalRank; in a batch of {n}, rank {r - 1} "
                f"got {before!r} and rank {r} got {after!r} (all ranks: {qualities})"
            )


@then("rank 1 SHALL map to 1.0 for every batch size n")
def _(hybrid_qualities: dict[int, list[float]]) -> None:
    wrong = {
        n: qualities[0]
        for n, qualities in hybrid_qualities.items()
        if abs(qualities[0] - 1.0) > QUALITY_TOLERANCE
    }
    assert not wrong, f"hybrid rank 1 SHALL map to 1.0 for every n >= 1; the implementation answered {wrong}"


@then(
    "the mapping SHALL NOT require dense L2 or RRF raw magnitude: with neither given it answered, "
    "and these RRF scores leave every qualityScore unchanged"
)
def _(hybrid_qualities: dict[int, list[float]], rqs_judge: Judge, datatable: list[list[str]]) -> None:
    fused_scores = [float(row[0]) for row in datatable[1:]]
    for n in (size for size in _INVARIANCE_SIZES if size in hybrid_qualities):
        for r, without in enumerate(hybrid_qualities[n], start=1):
            for fused in fused_scores:
                request = _hybrid(rank=r, n=n, score=fused)
                quality = _quality(rqs_judge, request)
                assert abs(quality - without) <= QUALITY_TOLERANCE, (
                    "the hybrid mapping SHALL NOT read the RRF raw magnitude: rank and batch size alone "
                    f"decide; for {_show(request)} the implementation answered {quality!r}, but "
                    f"{without!r} for the same rank without a score"
                )


@then("every qualityScore SHALL lie within [0, 1]")
def _(hybrid_qualities: dict[int, list[float]]) -> None:
    for n, qualities in hybrid_qualities.items():
        outside = {r: q for r, q in enumerate(qualities, start=1) if not 0.0 <= q <= 1.0}
        assert not outside, (
            f"qualityScore SHALL lie in [0, 1]; in a hybrid batch of {n} the implementation answered "
            f"{outside} (rank: quality)"
        )


# -- one normalizer for everyone -----------------------------------------------------------------


@then(
    parsers.parse(
        "each block's qualityScore SHALL equal the normalizer's qualityScore for the same candidate "
        "in a batch of {n:d}"
    )
)
def _(
    n: int,
    postprocess_reply: PostProcessReply,
    candidates: Sequence[WireCandidate],
    postprocess_config: PostProcessConfig,
    rqs_judge: Judge,
) -> None:
    assert n == len(candidates), (
        f"kit fixture error: the scenario says {n} candidates, the table has {len(candidates)}"
    )
    by_key = {(c.doc_id, c.chunk_index): c for c in candidates}
    for block in postprocess_reply.blocks:
        candidate = by_key.get((block.doc_id, block.chunk_index))
        assert candidate is not None, (
            f"post-process accepted {block.doc_id}#{block.chunk_index}, never a candidate"
        )
        request = QualityRequest(
            score_label=candidate.score_label,
            score=candidate.score,
            original_rank=candidate.original_rank,
            batch_size=n,
            max_l2_distance=postprocess_config.max_l2_distance,
            dense_distance=candidate.dense_distance,
        )
        expected = _quality(rqs_judge, request)
        assert abs(block.quality_score - expected) <= QUALITY_TOLERANCE, (
            "one normalizer SHALL produce every qualityScore; post-process gave block "
            f"{block.doc_id}#{block.chunk_index} qualityScore {block.quality_score!r}, but the normalizer "
            f"answers {expected!r} for {_show(request)}"
        )
