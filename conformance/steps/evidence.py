"""Steps about evidence blocks: labels stay hybrid, order follows originalRank, no max-L2 placeholders.

These make R2 and R7 checkable at the lookup and post-process levels, for implementations that do not
expose search (or whose search replies do not show what post-process did with them).
"""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from .._errors import ConformanceError
from .._judge import Judge
from .._model import close
from .._oracle import MilvusOracle
from .._protocol import PostProcessConfig, PostProcessRequest, QualityRequest, WireCandidate
from .labels import kit_canonical
from .lookup import CONFIG, Evidence, dense_quality
from .search import assert_follows_ranking, show_key

__all__: list[str] = []

_QUALITY_TOLERANCE = 1e-6


@given(
    parsers.parse(
        "{label:w} candidates carrying denseDistance on {which:w} candidates, in the opposite order of "
        "their originalRank"
    ),
    target_fixture="hybrid_candidates",
)
def _(label: str, which: str) -> tuple[WireCandidate, ...]:
    if kit_canonical(label) != "hybrid" or which not in ("every", "some"):
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
    wrong = [f"{b.evidence_key}: {b.score_label!r}" for b in blocks if kit_canonical(b.score_label) != label]
    assert blocks, f"the implementation returned no evidence blocks to check for {label!r} labels"
    assert not wrong, (
        f"the spec requires the primary scoreLabel to stay {label!r}; the implementation's evidence "
        f"blocks are labelled {[b.score_label for b in blocks]} (wrong: {wrong})"
    )


@then("the accepted evidence is in originalRank order")
def _(evidence: Evidence, hybrid_candidates: tuple[WireCandidate, ...]) -> None:
    want = [c.original_rank for c in sorted(hybrid_candidates, key=lambda c: c.original_rank)]
    got = [b.original_rank for b in evidence.reply.blocks]
    got_docs = [b.doc_id for b in evidence.reply.blocks]
    assert (got, got_docs) == (want, [f"pp-doc-{r}" for r in want]), (
        "the spec requires post-process sort order to follow originalRank even when denseDistance orders "
        f"the candidates otherwise; expected ranks {want}, the implementation's blocks have ranks {got} "
        f"({got_docs})"
    )


@then("the evidence follows originalRank from the hybrid results")
def _(evidence: Evidence, rqs_oracle: MilvusOracle) -> None:
    query = evidence.question
    assert query is not None
    fused = rqs_oracle.rrf(query.vector, query.text, query.k)[: CONFIG.return_n]
    assert_follows_ranking(
        evidence.keys, fused, "lookup evidence order vs the RRF order of the hybrid search (no caps apply)"
    )
    ranks = [b.original_rank for b in evidence.reply.blocks]
    assert ranks == sorted(ranks), f"evidence must come in ascending originalRank; got ranks {ranks}"


@then("the evidence includes the chunk that only keyword search finds")
def _(evidence: Evidence, rqs_oracle: MilvusOracle) -> None:
    only = _bm25_only(evidence, rqs_oracle)
    assert only in evidence.keys, (
        f"hybrid lookup must keep the BM25-only hit {show_key(only)}; the implementation's evidence is "
        f"{[show_key(k) for k in evidence.keys]}"
    )


@then(parsers.parse('no evidence block carries the primary score label "{label}"'))
def _(evidence: Evidence, label: str) -> None:
    carrying = [b.evidence_key for b in evidence.reply.blocks if b.score_label == label]
    assert not carrying, f"the spec forbids {label!r} as the primary score label; blocks {carrying} carry it"


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
        assert close(by_rank, quality), (
            f"the spec forbids max-L2 weak placeholders for BM25-only hits: {show_key(only)} (true L2 "
            f"quality {true_quality:.3f}) got qualityScore {quality!r}, the quality of distance "
            f"maxL2Distance, while the implementation's normalizer gives rank {rank} of {query.k} {by_rank!r}"
        )
        return
    later = [b for b in blocks[position + 1 :] if b.quality_score > quality + _QUALITY_TOLERANCE]
    assert not later, (
        f"the spec forbids max-L2 weak placeholders for BM25-only hits: {show_key(only)} (true L2 quality "
        f"{true_quality:.3f}) got qualityScore {quality!r}, the quality of distance maxL2Distance, while "
        f"later-ranked blocks score higher: {[(b.evidence_key, b.quality_score) for b in later]}"
    )


def _bm25_only(evidence: Evidence, oracle: MilvusOracle) -> tuple[str, int]:
    query = evidence.question
    assert query is not None
    dense = {r.key for r in oracle.dense_search(query.vector, query.k)}
    only = [r.key for r in oracle.rrf(query.vector, query.text, query.k) if r.key not in dense]
    if len(only) != 1:
        raise ConformanceError(f"kit bug: {query.name!r} should have exactly one BM25-only hybrid hit")
    return only[0]
