"""The executable model on hand-made lookup replies: the kit's searches as the truth, and every freedom
the spec leaves a lookup (ties, a retry merged or replacing, renumbered or not).
"""

from __future__ import annotations

from conformance.boundary._protocol import LookupReply, LookupRequest, PostProcessConfig
from conformance.judging import _spec_model as model
from tests.unit.conformance.judging._model_cases import CONFIG, block, cand, dq, rules


def attempt(category: str | None, *docs: tuple[str, float]) -> model.Attempt:
    return model.Attempt(category, tuple(cand(d, r, score) for r, (d, score) in enumerate(docs, start=1)))


LOOKUP = model.LookupTruth(
    unfiltered=attempt(None, ("a", 0.1), ("b", 0.3), ("c", 0.5)),
    filtered=attempt("billing", ("c", 0.5), ("e", 1.4)),  # best billing quality 0.75
)


def lookup(category: str | None, **config: float) -> LookupRequest:
    return LookupRequest(
        query_text="q",
        query_vector=(1.0, 0.0),
        mode="dense",
        category=category,
        retrieve_k=3,
        config=CONFIG.model_copy(update=config),
    )


def answer(attempt_: model.Attempt, path: str, config: PostProcessConfig = CONFIG) -> LookupReply:
    blocks = [block(c, dq(c.score, config.max_l2_distance)) for c in attempt_.candidates]
    top = max(b.quality_score for b in blocks)
    return LookupReply(
        blocks=tuple(blocks),
        relevance_level="X",
        top_quality_score=top,
        is_low_quality=top < config.reference_threshold,
        path=path,
    )


def test_a_lookup_path_follows_the_filtered_quality_and_the_category() -> None:
    assert model.check_lookup(lookup("billing"), answer(LOOKUP.filtered, "filtered"), LOOKUP) == []
    assert rules(
        model.check_lookup(lookup("billing"), answer(LOOKUP.unfiltered, "unfiltered_retry"), LOOKUP)
    ) == {"retry-path"}
    high = CONFIG.model_copy(update={"reference_threshold": 0.74, "highly_relevant_threshold": 0.9})
    assert (
        model.check_lookup(
            lookup("billing", reference_threshold=0.74, highly_relevant_threshold=0.9),
            answer(LOOKUP.filtered, "filtered", high),
            LOOKUP,
        )
        == []
    )
    strict = lookup("billing", reference_threshold=0.8, highly_relevant_threshold=0.9)
    config = strict.config
    assert model.check_lookup(strict, answer(LOOKUP.unfiltered, "unfiltered_retry", config), LOOKUP) == []
    # A lookup without a category that names its path otherwise: the protocol's vocabulary, noted.
    found = model.check_lookup(lookup(None), answer(LOOKUP.unfiltered, "unfiltered_retry"), LOOKUP)
    assert rules(found) == {"path-name"}
    assert model.failing(found) == []


def test_the_retry_may_replace_or_merge_but_must_bring_the_unfiltered_best() -> None:
    strict = lookup("billing", reference_threshold=0.8, highly_relevant_threshold=0.9)
    config = strict.config
    merged_blocks = [
        block(LOOKUP.unfiltered.candidates[0], dq(0.1)),
        block(LOOKUP.filtered.candidates[0], dq(0.5)),
    ]
    merged = LookupReply(
        blocks=tuple(merged_blocks),
        relevance_level="X",
        top_quality_score=dq(0.1),
        is_low_quality=False,
        path="unfiltered_retry",
    )
    assert model.check_lookup(strict, merged, LOOKUP) == []
    fallback = answer(LOOKUP.filtered, "unfiltered_retry", config)
    assert model.check_lookup(strict, fallback, LOOKUP) != []


def test_a_filtered_first_merge_may_fill_return_n_with_the_filtered_hits() -> None:
    """Readings 7: filtered hits first, then the retry's, cut by return-n: with return-n 2 the two
    billing hits fill it, and the retry's best chunk a#0 is cut, as return-n cuts any merge. With
    return-n 3 the merge has room for a#0, and without it the retry's result is not there."""
    filtered = [block(c, dq(c.score)) for c in LOOKUP.filtered.candidates]  # c#0, e#0
    two = lookup("billing", reference_threshold=0.8, highly_relevant_threshold=0.9, return_n=2)
    found = model.check_lookup(two, _reply(filtered, "unfiltered_retry", two.config), LOOKUP)
    assert model.failing(found) == []
    three = lookup("billing", reference_threshold=0.8, highly_relevant_threshold=0.9, return_n=3)
    found = model.check_lookup(three, _reply(filtered, "unfiltered_retry", three.config), LOOKUP)
    assert "retry-evidence" in rules(found)


def test_a_merge_may_take_the_retrys_tied_hits_in_either_order() -> None:
    """Readings 7: each search's hits keep that search's order, ties in any order (RRF ties exactly
    when two chunks hold the same ranks in swapped legs). b and d tie in the retry; e is filtered."""
    retry = model.Attempt(
        None,
        (cand("a", 1, 0.1), cand("b", 2, 0.3), cand("d", 3, 0.3)),
        ties=((0, 1), (1, 3)),
    )
    truth = model.LookupTruth(unfiltered=retry, filtered=attempt("billing", ("e", 1.4)))
    strict = lookup("billing", reference_threshold=0.8, highly_relevant_threshold=0.9)
    e, a, b, d = truth.filtered.candidates[0], *retry.candidates
    merged = [block(e, dq(1.4)), block(a, dq(0.1)), block(d, dq(0.3)), block(b, dq(0.3))]
    renumbered = [x.model_copy(update={"original_rank": i}) for i, x in enumerate(merged, start=1)]
    reply = _reply(renumbered, "unfiltered_retry", strict.config)
    assert "rank-order" not in rules(model.check_lookup(strict, reply, truth))
    swapped = [renumbered[0], renumbered[2], renumbered[1], renumbered[3]]  # d before a: no tie
    swapped = [x.model_copy(update={"original_rank": i}) for i, x in enumerate(swapped, start=1)]
    reply = _reply(swapped, "unfiltered_retry", strict.config)
    assert "rank-order" in rules(model.check_lookup(strict, reply, truth))


def test_lookup_evidence_is_judged_against_the_search_it_reports() -> None:
    skipping = answer(LOOKUP.unfiltered, "unfiltered").model_copy(
        update={"blocks": answer(LOOKUP.unfiltered, "unfiltered").blocks[2:]}
    )
    assert "best-ranks-kept" in rules(model.check_lookup(lookup(None), skipping, LOOKUP))
    quarter = answer(LOOKUP.unfiltered, "unfiltered")
    quarter = quarter.model_copy(
        update={
            "blocks": tuple(
                b.model_copy(update={"quality_score": 1 - c.score / 4})
                for b, c in zip(quarter.blocks, LOOKUP.unfiltered.candidates, strict=True)
            )
        }
    )
    assert "dense-formula" in rules(model.check_lookup(lookup(None), quarter, LOOKUP))
    stranger = block(cand("z", 1, 0.1), 0.95)
    other_search = LookupReply(
        blocks=(stranger,),
        relevance_level="X",
        top_quality_score=0.95,
        is_low_quality=False,
        path="unfiltered",
    )
    assert rules(model.check_lookup(lookup(None), other_search, LOOKUP)) == {"lookup-retrieval"}


def test_a_retry_whose_best_hit_its_post_processing_dropped_breaks_r4_not_the_retry() -> None:
    strict = lookup("billing", reference_threshold=0.8, highly_relevant_threshold=0.9)
    unfiltered = LOOKUP.unfiltered.candidates
    # The retry ran (its hits at its ranks), but a reorder and a cut dropped its best chunk a#0.
    dropped_best = [block(unfiltered[1], dq(0.3)), block(unfiltered[2], dq(0.5))]
    found = model.check_lookup(strict, _reply(dropped_best, "unfiltered_retry", strict.config), LOOKUP)
    assert "best-ranks-kept" in rules(found)
    assert "retry-evidence" not in rules(found)
    # The filtered hits at the filtered ranks under a retry's path: the retry's result is not there.
    filtered_only = [block(LOOKUP.filtered.candidates[0], dq(0.5))]
    found = model.check_lookup(strict, _reply(filtered_only, "unfiltered_retry", strict.config), LOOKUP)
    assert "retry-evidence" in rules(found)


def _reply(blocks, path: str, config: PostProcessConfig = CONFIG) -> LookupReply:
    qualities = [b.quality_score for b in blocks]
    top = max(qualities) if qualities else None
    low = top is None or top < config.reference_threshold
    return LookupReply(
        blocks=tuple(blocks), relevance_level="X", top_quality_score=top, is_low_quality=low, path=path
    )


def test_a_merged_retry_may_renumber_the_filtered_ranks_after_the_unfiltered_ones() -> None:
    strict = lookup("billing", reference_threshold=0.8, highly_relevant_threshold=0.9)
    unfiltered, filtered = LOOKUP.unfiltered.candidates, LOOKUP.filtered.candidates
    renumbered = [
        block(unfiltered[0], dq(0.1)),
        block(unfiltered[1], dq(0.3)),
        block(filtered[1], dq(1.4)).model_copy(update={"original_rank": 4}),  # e#0 after a, b, c
    ]
    assert (
        model.failing(
            model.check_lookup(strict, _reply(renumbered, "unfiltered_retry", strict.config), LOOKUP)
        )
        == []
    )
    by_source_rank = [
        block(unfiltered[0], dq(0.1)),
        block(filtered[0], dq(0.5)),  # c#0: rank 1 of the filtered search, rank 3 of the unfiltered
        block(unfiltered[1], dq(0.3)),
    ]
    found = model.check_lookup(strict, _reply(by_source_rank, "unfiltered_retry", strict.config), LOOKUP)
    assert model.failing(found) == []


def test_a_merged_retry_resorted_by_quality_breaks_the_rank_order() -> None:
    truth = model.LookupTruth(
        unfiltered=model.Attempt(
            None,
            (
                cand("a", 1, 0.03, label="hybrid", dd=0.9),
                cand("b", 2, 0.02, label="hybrid", dd=0.2),
                cand("c", 3, 0.01, label="hybrid", dd=0.5),
            ),
        ),
        filtered=model.Attempt("billing", (cand("e", 1, 0.03, label="hybrid", dd=1.9),)),
    )
    request = LookupRequest(
        query_text="q", query_vector=(1.0, 0.0), mode="hybrid", category="billing", retrieve_k=3
    )
    c = truth.unfiltered.candidates
    in_rank_order = [block(c[0], dq(0.9)), block(c[1], dq(0.2)), block(c[2], dq(0.5))]
    reply = _reply(in_rank_order, "unfiltered_retry")
    assert model.failing(model.check_lookup(request, reply, truth, low={True})) == []
    by_quality = sorted(in_rank_order, key=lambda b: -b.quality_score)
    renumbered = [b.model_copy(update={"original_rank": i}) for i, b in enumerate(by_quality, start=1)]
    for blocks in (by_quality, renumbered):
        found = model.check_lookup(request, _reply(blocks, "unfiltered_retry"), truth, low={True})
        assert "rank-order" in rules(model.failing(found))


def test_a_filtered_lookup_its_own_gate_calls_low_must_retry() -> None:
    request = lookup("billing")
    low_filtered = answer(LOOKUP.filtered, "filtered").model_copy(update={"is_low_quality": True})
    found = model.check_lookup(request, low_filtered, LOOKUP)
    assert "retry-path" in rules(found) or "low-quality" in rules(found)
    hybrid = model.LookupTruth(
        unfiltered=model.Attempt(None, (cand("a", 1, 0.03, label="hybrid", dd=1.9),)),
        filtered=model.Attempt("billing", (cand("e", 1, 0.03, label="hybrid", dd=1.9),)),
    )
    hybrid_request = request.model_copy(update={"mode": "hybrid"})
    by_distance = _reply(
        [block(hybrid.filtered.candidates[0], dq(1.9))], "filtered"
    )  # 0.05: its gate says low
    assert rules(model.check_lookup(hybrid_request, by_distance, hybrid)) == {"retry-path"}
    by_rank = _reply([block(hybrid.filtered.candidates[0], 1.0)], "filtered")  # rank mapping: usable
    assert model.check_lookup(hybrid_request, by_rank, hybrid) == []
    # Its own normalizer says the filtered result is low: not retrying fails, whatever the readings.
    assert rules(model.check_lookup(hybrid_request, by_rank, hybrid, low={True})) == {"retry-path"}


def test_tied_hits_in_a_lookup_may_come_in_any_order_and_spill_past_the_end() -> None:
    tied = (cand("a", 1, 0.4), cand("b", 2, 0.7), cand("c", 3, 0.7))
    truth = model.LookupTruth(
        unfiltered=model.Attempt(None, tied, ties=((0, 1), (1, 3)), spill=(cand("d", 3, 0.7),))
    )
    request = lookup(None)
    for second, third in (("b", "c"), ("c", "b"), ("d", "b"), ("c", "d")):
        blocks = [block(tied[0], dq(0.4))] + [
            block(cand(doc, rank, 0.7), dq(0.7)) for rank, doc in ((2, second), (3, third))
        ]
        assert model.failing(model.check_lookup(request, _reply(blocks, "unfiltered"), truth)) == [], (
            second,
            third,
        )
    wrong = [block(tied[0], dq(0.4)), block(cand("e", 2, 0.7), dq(0.7))]
    assert "lookup-retrieval" in rules(model.check_lookup(request, _reply(wrong, "unfiltered"), truth))


def test_lookup_evidence_at_other_ranks_than_the_search_gives_is_another_retrieval() -> None:
    request = lookup(None)
    c = LOOKUP.unfiltered.candidates
    moved = [block(c[0], dq(0.1)).model_copy(update={"original_rank": 2}), block(c[2], dq(0.5))]
    assert rules(model.check_lookup(request, _reply(moved, "unfiltered"), LOOKUP)) == {"lookup-retrieval"}
    renumbered = [block(c[0], dq(0.1)), block(c[2], dq(0.5)).model_copy(update={"original_rank": 2})]
    assert "lookup-retrieval" not in rules(
        model.check_lookup(request, _reply(renumbered, "unfiltered"), LOOKUP)
    )


def test_hybrid_lookup_blocks_with_the_wrong_label_break_r1_not_r7() -> None:
    truth = model.LookupTruth(
        unfiltered=model.Attempt(None, (cand("a", 1, 0.03, label="hybrid", dd=0.4),)),
    )
    request = LookupRequest(query_text="q", query_vector=(1.0, 0.0), mode="hybrid", retrieve_k=3)
    dense_block = block(truth.unfiltered.candidates[0], 1.0, "dense")
    found = model.check_lookup(request, _reply([dense_block], "unfiltered"), truth)
    assert rules(found) == {"block-label"}  # the kit attached that distance, not the implementation
