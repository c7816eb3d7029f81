"""Property scenarios: the spec's universal statements, checked by Hypothesis through the adapter.

Each Given names the generated inputs (a strategy from :mod:`conformance.scenarios._strategies`, kept in the
``generated`` fixture); each Then runs one property over them, and the judge checks every reply whole.
Properties hold for every reading the spec allows (``features/spec/readings.md``): the conforming
miniatures in ``tests/miniatures/`` pass them.

Reproducibility: every property of a run uses the run's one seed (``--rqs-seed``, else random and
recorded in the report) and the example count of ``--rqs-profile``. A failure FAILS the scenario with
Hypothesis's shrunk falsifying example and the seed that replays it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import strategies as st
from pytest_bdd import given, then

from ...boundary._protocol import Hints, PostProcessConfig, QualityRequest, WireCandidate
from ...judging._judge import Judge
from ...judging._spec_model import QUALITY_TOLERANCE, expect, kept_ranks, top_readings
from .. import _strategies as gen
from .._explicit import HINT_PAIR_EXAMPLES, POST_PROCESS_EXAMPLES, QUALITY_EXAMPLES
from ._property_run import (
    PropertyRun,
    close,
    gates_comparable,
    post,
    quality,
    same_qualities,
    same_ranks,
    shown,
)

__all__: list[str] = []

Generated = dict[str, st.SearchStrategy[Any]]
"""What a Given step sets up: one Hypothesis strategy per argument of the property."""


# -- Given: the generated inputs -----------------------------------------------------------------------


@given("any hybrid batch size n from 1 to 1000 and any two ranks within it", target_fixture="generated")
def _() -> Generated:
    sized = st.integers(min_value=1, max_value=1000).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(1, n), st.integers(1, n))
    )
    return {"sized": sized}


@given(
    "any label or legacy alias, score, rank, batch size, maxL2Distance and denseDistance",
    target_fixture="generated",
)
def _() -> Generated:
    return {"request": gen.quality_requests()}


@given("any hybrid batch without denseDistance, and new raw scores for it", target_fixture="generated")
def _() -> Generated:
    batch = gen.candidate_batches(kind="hybrid", dense_distance="none")
    scores = st.lists(gen.fused_scores, min_size=gen.MAX_BATCH, max_size=gen.MAX_BATCH)
    return {"batch": batch, "scores": scores, "config": gen.configs()}


@given("any candidates in any input order, any L0 hints and any configuration", target_fixture="generated")
def _() -> Generated:
    return {"batch": gen.candidate_batches(), "hints": gen.hints(), "config": gen.configs()}


@given("any candidates, any two sets of L0 hints and any configuration", target_fixture="generated")
def _() -> Generated:
    pair = {"first": gen.hints(), "second": gen.hints()}
    return {"batch": gen.candidate_batches(), **pair, "config": gen.configs()}


@given(
    "any two results with the same qualityScore inputs and different texts, docIds, hints and raw hybrid "
    "scores",
    target_fixture="generated",
)
def _() -> Generated:
    pair = gen.candidate_batches().flatmap(lambda b: st.tuples(st.just(b), gen.renamed(b)))
    return {"pair": pair, "first": gen.hints(), "second": gen.hints(), "config": gen.configs()}


# -- Then: R3, the single normalizer -------------------------------------------------------------------


@then("qualityScore SHALL NOT increase from the better rank to the worse one, and rank 1 SHALL map to 1.0")
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(sized: tuple[int, int, int]) -> None:
        n, r1, r2 = sized
        better, worse = sorted((r1, r2))

        def q(rank: int) -> float:
            return quality(rqs_judge, QualityRequest(score_label="hybrid", original_rank=rank, batch_size=n))

        first, q_better, q_worse = q(1), q(better), q(worse)
        assert close([first], [1.0], QUALITY_TOLERANCE), f"batch size {n}: rank 1 maps to {first!r}, not 1.0"
        assert q_better >= q_worse, (
            f"batch size {n}: rank {better} -> {q_better!r} < rank {worse} -> {q_worse!r}"
        )

    rqs_property_run.check(generated, body)


@then("qualityScore SHALL lie within [0, 1]")
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(request: QualityRequest) -> None:
        answer = quality(rqs_judge, request)
        assert 0.0 <= answer <= 1.0, f"qualityScore {answer!r} is outside [0, 1]"

    rqs_property_run.check(generated, body, examples=QUALITY_EXAMPLES)


@then("neither the accepted order nor any qualityScore SHALL change")
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(batch: tuple[WireCandidate, ...], scores: list[float], config: PostProcessConfig) -> None:
        rescored = tuple(
            c.model_copy(update={"score": s, "raw_score": s}) for c, s in zip(batch, scores, strict=False)
        )
        before = post(rqs_judge, batch, config)
        after = post(rqs_judge, rescored, config)
        change = f"from [{shown(before.blocks)}] to [{shown(after.blocks)}]"
        expect(
            same_ranks(before, after),
            "rank-order",
            "new raw hybrid scores, same ranks",
            "the same accepted originalRanks in the same order",
            change,
        )
        expect(
            same_qualities(before, after, batch),
            "no-raw-magnitude",
            "new raw hybrid scores, same ranks",
            "the same qualityScores",
            change,
        )

    rqs_property_run.check(generated, body)


# -- Then: R4, rank order ------------------------------------------------------------------------------


@then("the accepted blocks SHALL be in ascending originalRank")
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(batch: tuple[WireCandidate, ...], hints: Hints, config: PostProcessConfig) -> None:
        reply = post(rqs_judge, batch, config, hints)
        ranks = [b.original_rank for b in reply.blocks]
        assert ranks == sorted(ranks), f"accepted blocks out of originalRank order: {shown(reply.blocks)}"

    rqs_property_run.check(generated, body, examples=POST_PROCESS_EXAMPLES)


@then("each chunk SHALL be accepted once, the caps SHALL hold, and the best ranks SHALL be kept")
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(batch: tuple[WireCandidate, ...], hints: Hints, config: PostProcessConfig) -> None:
        reply = post(rqs_judge, batch, config, hints)
        keys = [(b.doc_id, b.chunk_index) for b in reply.blocks]
        assert len(keys) == len(set(keys)), f"a chunk was accepted twice: {shown(reply.blocks)}"
        per_doc = Counter(doc for doc, _ in keys)
        over = {d: n for d, n in per_doc.items() if n > config.max_chunks_per_document}
        assert not over, f"more than {config.max_chunks_per_document} chunks of {over}: {shown(reply.blocks)}"
        assert len(keys) <= config.return_n, f"return-n {config.return_n} exceeded: {shown(reply.blocks)}"
        expected = kept_ranks(batch, config)
        got = sorted(b.original_rank for b in reply.blocks)
        assert got == expected, (
            f"dedup and caps applied in originalRank order keep ranks {expected}; the implementation kept "
            f"{got}: {shown(reply.blocks)}"
        )

    rqs_property_run.check(generated, body, examples=POST_PROCESS_EXAMPLES)


@then("the accepted blocks, their qualityScores and the gates SHALL NOT change; only hitReasons may")
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(
        batch: tuple[WireCandidate, ...], first: Hints, second: Hints, config: PostProcessConfig
    ) -> None:
        one = post(rqs_judge, batch, config, first)
        two = post(rqs_judge, batch, config, second)
        item = f"the same candidates with hints {first} and with hints {second}"
        change = f"[{shown(one.blocks)}] then [{shown(two.blocks)}]"
        expect(
            same_ranks(one, two) and same_qualities(one, two, batch),
            "no-boost",
            item,
            "the same accepted blocks with the same qualityScores",
            change,
        )
        if gates_comparable(one, two):
            expect(
                one.relevance_level == two.relevance_level,
                "relevance-hints",
                item,
                "the same relevance level",
                f"{one.relevance_level!r} then {two.relevance_level!r}",
            )
            same = (one.is_low_quality, one.top_quality_score) == (two.is_low_quality, two.top_quality_score)
            expect(
                same,
                "gates-hints",
                item,
                "the same low-quality flag and topQualityScore",
                f"{one.is_low_quality}/{one.top_quality_score!r} then "
                f"{two.is_low_quality}/{two.top_quality_score!r}",
            )

    rqs_property_run.check(generated, body, examples=HINT_PAIR_EXAMPLES)


# -- Then: R5, gates -----------------------------------------------------------------------------------


@then(
    "low quality SHALL be exactly a top accepted qualityScore below the reference threshold, and the "
    "relevance level SHALL be the same without the hints"
)
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(batch: tuple[WireCandidate, ...], hints: Hints, config: PostProcessConfig) -> None:
        reply = post(rqs_judge, batch, config, hints)  # the judge checks low quality against the spec's
        tops = top_readings([b.quality_score for b in reply.blocks])  # qualities, both readings of top
        low = {True} if not tops else {t < config.reference_threshold for t in tops}
        assert reply.is_low_quality in low or any(
            abs(t - config.reference_threshold) <= QUALITY_TOLERANCE for t in tops
        ), (
            f"top qualityScore {' or '.join(map(repr, tops)) or 'none'}, reference threshold "
            f"{config.reference_threshold!r}: low quality must be {low}, the implementation said "
            f"{reply.is_low_quality}"
        )
        plain = post(rqs_judge, batch, config)
        # Only where the hints left the accepted qualities alone: hints that change which blocks are
        # kept (a boost that reorders before dedup or return-n) change the top qualityScore, and a level
        # that follows it breaks "no boosts" (R4, its own scenario), not "qualityScore only".
        assert not gates_comparable(plain, reply) or plain.relevance_level == reply.relevance_level, (
            f"the relevance level SHALL use qualityScore only: {plain.relevance_level!r} without hints, "
            f"{reply.relevance_level!r} with hints {hints}, the same accepted qualityScores"
        )

    rqs_property_run.check(generated, body, examples=POST_PROCESS_EXAMPLES)


@then("both SHALL get the same low-quality decision and the same relevance level")
def _(rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated) -> None:
    def body(pair: tuple[Any, Any], first: Hints, second: Hints, config: PostProcessConfig) -> None:
        one = post(rqs_judge, pair[0], config, first)
        two = post(rqs_judge, pair[1], config, second)
        item = "two batches with the same qualityScore inputs (other texts, docIds, hints, raw scores)"
        qualities = f"{[b.quality_score for b in one.blocks]} then {[b.quality_score for b in two.blocks]}"
        expect(
            same_qualities(one, two, pair[0]), "no-raw-magnitude", item, "the same qualityScores", qualities
        )
        if gates_comparable(one, two):
            expect(
                one.is_low_quality == two.is_low_quality,
                "low-quality",
                item,
                "the same low-quality flag",
                f"{one.is_low_quality} then {two.is_low_quality} (qualities {qualities})",
            )
            expect(
                one.relevance_level == two.relevance_level,
                "relevance-hints",
                item,
                "the same relevance level",
                f"{one.relevance_level!r} then {two.relevance_level!r} (qualities {qualities})",
            )

    rqs_property_run.check(generated, body)
