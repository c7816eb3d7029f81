"""Steps about evidence blocks: labels stay hybrid, order follows originalRank, no max-L2 placeholders.

These make R2 and R7 checkable at the lookup and post-process levels, for implementations that do not
expose search (or whose search replies do not show what post-process did with them).
"""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from ...boundary._errors import ConformanceError
from ...boundary._protocol import PostProcessConfig, PostProcessRequest, QualityRequest, WireCandidate
from ...judging._judge import Judge
from ...judging._oracle import MilvusOracle
from ...judging._spec_model import QUALITY_TOLERANCE, canonical, close, dense_quality, expect
from .lookup import CONFIG, Evidence
from .search import show_key

__all__: list[str] = []


@given(
    parsers.parse(
        "{label:w} candidates carrying denseDistance on {which:w} candidates, in the opposite order of "
        "their originalRank"
    ),
    target_fixture="hybrid_candidates",
)
def _(label: str, which: str) -> tuple[WireCandidate, ...]:
    if canonical(label) != "hybrid" or which not in ("every", "some"):
        raise ConformanceError(f"kit bug: {label!r} candidates with denseDistance on {which!r} candidates")
    fused = (0.0328, 0.0323, 0.0317, 0.0312)
    distances = (1.6, 1.2, 0.8, 0.4)  # rank 1 is the farthest: distance order is rank order reversed
    ranked = [
        WireCandidate(
            doc_id=f"pp-doc-{rank}",
            chunk_index=0,
            text=f"candidate ranked {rank}",
            original_rank=rank,
            score=fused[rank - 1],
            score_label=label,
            dense_distance=distances[rank - 1] if which == "every" or rank % 2 else None,
        )
        for rank in (1, 2, 3, 4)
    ]
    # Handed over nearest first, i.e. worst rank first: keeping input order or sorting by distance or
    # by quality both give the wrong order; only sorting by originalRank gives the right one.
    return tuple(sorted(ranked, key=lambda c: distances[c.original_rank - 1]))


@when("the implementation post-processes these hybrid candidates", target_fixture="evidence")
def _(
    rqs_judge: Judge, hybrid_candidates: tuple[WireCandidate, ...], postprocess_config: PostProcessConfig
) -> Evidence:
    request = PostProcessRequest(candidates=hybrid_candidates, config=postprocess_config)
    return Evidence(reply=rqs_judge.post_process(request))


@then(parsers.parse('every evidence block has a scoreLabel canonicalizing to "{label}"'))
def _(evidence: Evidence, label: str) -> None:
    blocks = evidence.reply.blocks
    wrong = [f"{b.evidence_key}: {b.score_label!r}" for b in blocks if canonical(b.score_label) != label]
    assert blocks, f"the implementation returned no evidence blocks to check for {label!r} labels"
    expect(
        not wrong,
        "dense-distance-label",
        "evidence blocks",
        f"labels canonicalizing to {label!r}",
        str(wrong),
    )


@then("the accepted evidence is in originalRank order")
def _(evidence: Evidence, hybrid_candidates: tuple[WireCandidate, ...]) -> None:
    want = [f"pp-doc-{c.original_rank}" for c in sorted(hybrid_candidates, key=lambda c: c.original_rank)]
    got = [b.doc_id for b in evidence.reply.blocks]
    expect(
        got == want,
        "dense-distance-order",
        "evidence of hybrid candidates whose denseDistance orders them the other way",
        f"originalRank order {want}",
        str(got),
    )


@then("the evidence follows originalRank from the hybrid results")
def _(evidence: Evidence, rqs_oracle: MilvusOracle) -> None:
    # Which hits the evidence holds is the judge's: the RRF of the hybrid search (or another RRF k, noted).
    ranks = [b.original_rank for b in evidence.reply.blocks]
    expect(
        ranks == sorted(ranks),
        "dense-distance-order",
        "lookup evidence of a hybrid search with denseDistance",
        "ascending originalRank",
        str(ranks),
    )


@then("the evidence includes the chunk that only keyword search finds")
def _(evidence: Evidence, rqs_oracle: MilvusOracle) -> None:
    only = _bm25_only(evidence, rqs_oracle)
    expect(
        only in evidence.keys,
        "lookup-retrieval",
        "hybrid lookup evidence",
        f"the BM25-only hit {show_key(only)} among the blocks",
        str([show_key(k) for k in evidence.keys]),
    )


@then(parsers.parse('no evidence block carries the primary score label "{label}"'))
def _(evidence: Evidence, label: str) -> None:
    carrying = [b.evidence_key for b in evidence.reply.blocks if b.score_label == label]
    expect(not carrying, "no-bm25-only-label", "evidence blocks", f"none labelled {label!r}", str(carrying))


@then("the chunk that only keyword search finds does not get the qualityScore of a max-L2 placeholder")
def _(evidence: Evidence, rqs_oracle: MilvusOracle, rqs_judge: Judge) -> None:
    """Allowed: the L2 formula of its TRUE distance (R7), or any rank mapping (R3). Forbidden: the
    quality a max-L2 placeholder gives (0), when neither reading explains it (readings 14).

    Before calling a 0 a placeholder, the implementation's own normalizer is asked what a hybrid hit of
    that rank gets in a batch of that size without a distance: an allowed rank mapping may reach 0. An
    implementation without the ``quality`` capability is judged by the shape of the batch instead: a
    rank mapping never increases with rank, so later blocks cannot score higher than a 0 it produced.
    """
    query = evidence.question
    assert query is not None
    only = _bm25_only(evidence, rqs_oracle)
    blocks = evidence.reply.blocks
    position = evidence.keys.index(only)
    quality = blocks[position].quality_score
    placeholder = dense_quality(CONFIG.max_l2_distance, CONFIG.max_l2_distance)
    true_quality = dense_quality(rqs_oracle.l2(query.vector)[only], CONFIG.max_l2_distance)
    if not close(quality, placeholder) or close(true_quality, placeholder):
        return
    if rqs_judge.info.supports("quality"):
        rank = blocks[position].original_rank
        asked = QualityRequest(score_label="hybrid", original_rank=rank, batch_size=query.k)
        by_rank = rqs_judge.quality_score(asked)
        expect(
            close(by_rank, quality),
            "no-placeholder",
            f"BM25-only block {show_key(only)} (true L2 quality {true_quality:.3f})",
            f"its rank's quality {by_rank!r} (rank {rank} of {query.k}) or its distance's",
            f"{quality!r}, the quality of distance maxL2Distance",
        )
        return
    later = [b for b in blocks[position + 1 :] if b.quality_score > quality + QUALITY_TOLERANCE]
    expect(
        not later,
        "no-placeholder",
        f"BM25-only block {show_key(only)} (true L2 quality {true_quality:.3f})",
        "a quality no later-ranked block exceeds, or its distance's",
        f"{quality!r} (maxL2Distance's), below {[(b.evidence_key, b.quality_score) for b in later]}",
    )


def _bm25_only(evidence: Evidence, oracle: MilvusOracle) -> tuple[str, int]:
    query = evidence.question
    assert query is not None
    dense = {r.key for r in oracle.dense_search(query.vector, query.k)}
    only = [r.key for r in oracle.rrf(query.vector, query.text, query.k) if r.key not in dense]
    if len(only) != 1:
        raise ConformanceError(f"kit bug: {query.name!r} should have exactly one BM25-only hybrid hit")
    return only[0]
