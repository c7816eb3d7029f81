"""Properties of the normalizer and the post-processor, under the loaded Hypothesis profile.

The centre piece compares :func:`reference.post_process` with ``slow_post_process`` below, written from
the spec and the reference's documented choices (not from its code): plain passes over ``sorted()``.
"""

from collections import Counter

import pytest
from hypothesis import event, given, target
from hypothesis import strategies as st

from reference import (
    Candidate,
    L0Hints,
    RelevanceLevel,
    Settings,
    post_process,
    rank_to_quality,
    to_quality_score,
)

DOC_IDS = ("a", "b", "c")  # few documents, so caps bite and duplicates happen
DENSE_LABELS = ("dense", "l2_distance")
HYBRID_LABELS = ("hybrid", "rrf_fused", "bm25_only_no_dense")
LABELS = DENSE_LABELS + HYBRID_LABELS
WORDS = ("refund", "invoice", "billing", "acme", "hours", "shop")

# Distances: tiny negatives (float rounding) included, beyond maxL2 included.
distances = st.floats(min_value=-1e-6, max_value=12.0, allow_nan=False)
fused_scores = st.floats(allow_nan=False, allow_infinity=False)
max_l2s = st.floats(min_value=0.01, max_value=8.0)
texts = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join)


MAX_BATCH = 12


def candidate_fields(labels, *, dense_distance=True):
    """Field dicts for one candidate; ``batches`` turns them into candidates with batch-relative ranks.

    Strategies are built once, here, not inside a draw: constructing them per example dominated the
    runtime.
    """

    def for_label(label):
        return st.builds(
            dict,
            doc_id=st.sampled_from(DOC_IDS),
            chunk_index=st.integers(0, 2),
            original_rank=st.integers(1, MAX_BATCH + 3),
            score=st.none() | (distances if label in DENSE_LABELS else fused_scores),
            score_label=st.just(label),
            dense_distance=(st.none() | distances) if dense_distance else st.none(),
            text=texts,
            source_type=st.sampled_from([None, "faq", "manual"]),
        )

    return st.one_of([for_label(label) for label in labels])


ALL_FIELDS = st.lists(candidate_fields(LABELS), max_size=MAX_BATCH)
HYBRID_FIELDS = st.lists(candidate_fields(HYBRID_LABELS, dense_distance=False), max_size=MAX_BATCH)


@st.composite
def batches(draw, fields=ALL_FIELDS):
    drawn = draw(fields)
    # Ranks folded into 1..n+3: ties and ranks above the batch size both occur.
    span = len(drawn) + 3
    return [Candidate(**{**f, "original_rank": 1 + (f["original_rank"] - 1) % span}) for f in drawn]


@st.composite
def settings_values(draw):
    reference_threshold = draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0))
    highly = draw(st.sampled_from([reference_threshold, 1.0]) | st.floats(reference_threshold, 1.0))
    return Settings(
        return_n=draw(st.integers(1, 6)),
        max_chunks_per_document=draw(st.integers(1, 3)),
        max_l2_distance=draw(st.sampled_from([2.0, 4.0]) | max_l2s),
        reference_threshold=reference_threshold,
        highly_relevant_threshold=highly,
        excerpt_max_chars=draw(st.integers(1, 30)),
    )


hints_values = st.builds(
    L0Hints,
    domain=st.none() | st.sampled_from(WORDS),
    entities=st.lists(st.sampled_from(WORDS), max_size=2).map(tuple),
    keywords=st.lists(st.sampled_from((*WORDS, "")), max_size=3).map(tuple),
    source_type=st.sampled_from([None, "faq", "manual"]),
)


# -- the slow, obviously correct post-processor --------------------------------------------------------

CANONICAL = {"dense": "dense", "l2_distance": "dense", "hybrid": "hybrid", "rrf_fused": "hybrid"}
CANONICAL["bm25_only_no_dense"] = "hybrid"


def slow_quality(c, batch_size, max_l2):
    if CANONICAL[c.score_label] == "dense":
        distance = c.score
    elif c.dense_distance is not None:
        distance = c.dense_distance
    else:
        return max(0.0, 1.0 - (c.original_rank - 1) / batch_size)  # the reference's documented mapping
    if distance is None:
        return 0.0
    distance = max(distance, 0.0)
    return max(0.0, 1.0 - min(distance, max_l2) / max_l2)


def slow_level(top, s):
    if top is None:
        return RelevanceLevel.NONE
    if top >= s.highly_relevant_threshold:
        return RelevanceLevel.PRECISE
    if top >= s.reference_threshold:
        return RelevanceLevel.RELEVANT
    return RelevanceLevel.WEAK if top > 0 else RelevanceLevel.NONE


def slow_post_process(batch, s):
    """Sort, then one pass per documented step: dedup, per-document cap, return-n."""
    order = sorted(range(len(batch)), key=lambda i: (batch[i].original_rank, i))
    reason = {}

    after_dedup = []
    seen_keys = []
    for i in order:
        key = (batch[i].doc_id, batch[i].chunk_index)
        if key in seen_keys:
            reason[i] = "duplicate"
        else:
            seen_keys.append(key)
            after_dedup.append(i)

    after_cap = []
    for i in after_dedup:
        same_doc = [j for j in after_cap if batch[j].doc_id == batch[i].doc_id]
        if len(same_doc) >= s.max_chunks_per_document:
            reason[i] = "per_document_cap"
        else:
            after_cap.append(i)

    accepted = after_cap[: s.return_n]
    for i in after_cap[s.return_n :]:
        reason[i] = "return_n"

    qualities = [slow_quality(batch[i], len(batch), s.max_l2_distance) for i in accepted]
    top = max(qualities) if qualities else None
    return {
        "keys": [f"{batch[i].doc_id}#{batch[i].chunk_index}" for i in accepted],
        "ranks": [batch[i].original_rank for i in accepted],
        "qualities": qualities,
        "dropped": [
            (f"{batch[i].doc_id}#{batch[i].chunk_index}", batch[i].original_rank, reason[i])
            for i in order
            if i in reason
        ],
        "top": top,
        "low": top is None or top < s.reference_threshold,
        "level": slow_level(top, s),
    }


def summary(result):
    return {
        "keys": [b.evidence_key for b in result.blocks],
        "ranks": [b.original_rank for b in result.blocks],
        "qualities": [b.quality_score for b in result.blocks],
        "dropped": [(d.evidence_key, d.original_rank, d.reason) for d in result.dropped],
        "top": result.top_quality_score,
        "low": result.is_low_quality,
        "level": result.relevance_level,
    }


def record_events(batch, result):
    for reason in sorted({d.reason for d in result.dropped}):
        event(f"dropped: {reason}")
    ranks = [c.original_rank for c in batch]
    if len(set(ranks)) < len(ranks):
        event("tied originalRanks")
    if any(r > len(batch) for r in ranks):
        event("rank above batch size")
    target(float(len(result.dropped)), label="dropped candidates")


@given(batch=batches(), s=settings_values(), hints=hints_values)
def test_post_process_equals_the_slow_version(batch, s, hints):
    result = post_process(batch, s, hints=hints)
    record_events(batch, result)
    fast, slow = summary(result), slow_post_process(batch, s)
    assert fast["qualities"] == pytest.approx(slow.pop("qualities"), abs=1e-9)
    assert fast["top"] == pytest.approx(slow.pop("top"), abs=1e-9)
    del fast["qualities"], fast["top"]
    assert fast == slow


def test_generated_batches_exercise_caps_duplicates_ties_and_high_ranks():
    # Without this the properties could pass on batches where nothing interesting happens.
    seen = Counter()

    @given(batch=batches(), s=settings_values())
    def run(batch, s):
        result = post_process(batch, s)
        seen.update(d.reason for d in result.dropped)
        ranks = [c.original_rank for c in batch]
        seen["tie"] += len(set(ranks)) < len(ranks)
        seen["rank_above_n"] += any(r > len(batch) for r in ranks)
        seen["empty"] += not batch
        seen["low"] += result.is_low_quality and bool(batch)
        seen["not_low"] += not result.is_low_quality

    run()
    for case in (
        "duplicate",
        "per_document_cap",
        "return_n",
        "tie",
        "rank_above_n",
        "empty",
        "low",
        "not_low",
    ):
        assert seen[case] > 0, f"no generated example exercised {case}: {dict(seen)}"


# -- the normalizer ------------------------------------------------------------------------------------


@given(
    label=st.sampled_from(LABELS),
    score=st.none() | fused_scores,
    distance=st.none() | distances,
    data=st.data(),
    max_l2=max_l2s,
)
def test_quality_is_always_in_unit_interval(label, score, distance, data, max_l2):
    batch_size = data.draw(st.integers(1, 500))
    rank = data.draw(st.integers(1, 2 * batch_size + 5))
    if label in DENSE_LABELS:
        score = distance
    quality = to_quality_score(
        label, score, rank=rank, batch_size=batch_size, max_l2_distance=max_l2, dense_distance=distance
    )
    assert 0.0 <= quality <= 1.0


@given(d1=distances, d2=distances, max_l2=max_l2s, label=st.sampled_from(DENSE_LABELS))
def test_dense_quality_is_non_increasing_in_distance(d1, d2, max_l2, label):
    near, far = sorted((d1, d2))
    q_near = to_quality_score(label, near, rank=1, batch_size=1, max_l2_distance=max_l2)
    q_far = to_quality_score(label, far, rank=1, batch_size=1, max_l2_distance=max_l2)
    assert q_near >= q_far


@given(d=distances, max_l2=max_l2s)
def test_dense_quality_matches_the_spec_formula(d, max_l2):
    expected = max(0.0, 1.0 - min(max(d, 0.0), max_l2) / max_l2)
    quality = to_quality_score("dense", d, rank=1, batch_size=1, max_l2_distance=max_l2)
    assert quality == pytest.approx(expected, abs=1e-9)


@given(batch_size=st.integers(1, 10_000), data=st.data(), label=st.sampled_from(HYBRID_LABELS))
def test_hybrid_rank_mapping_is_monotone_with_rank_one_at_one(batch_size, data, label):
    r1 = data.draw(st.integers(1, batch_size + 10))
    r2 = data.draw(st.integers(r1, batch_size + 10))
    score = data.draw(st.none() | fused_scores)
    assert to_quality_score(label, score, rank=1, batch_size=batch_size, max_l2_distance=2.0) == 1.0
    q1 = to_quality_score(label, score, rank=r1, batch_size=batch_size, max_l2_distance=2.0)
    q2 = to_quality_score(label, score, rank=r2, batch_size=batch_size, max_l2_distance=2.0)
    assert 0.0 <= q2 <= q1 <= 1.0
    assert rank_to_quality(r1, batch_size) >= rank_to_quality(r2, batch_size)


# -- the post-processor --------------------------------------------------------------------------------


@given(batch=batches(), s=settings_values(), data=st.data())
def test_accepted_order_is_ascending_original_rank_for_any_permutation(batch, s, data):
    shuffled = data.draw(st.permutations(batch))
    result = post_process(shuffled, s)
    ranks = [b.original_rank for b in result.blocks]
    assert ranks == sorted(ranks)
    if len({c.original_rank for c in batch}) == len(batch):
        # Without ties the input order cannot matter at all.
        assert result == post_process(batch, s)


@given(batch=batches(), s=settings_values(), hints=hints_values)
def test_hints_change_nothing_but_hit_reasons(batch, s, hints):
    plain = post_process(batch, s)
    hinted = post_process(batch, s, hints=hints)
    assert hinted.model_dump(exclude={"blocks"}) == plain.model_dump(exclude={"blocks"})
    assert len(hinted.blocks) == len(plain.blocks)
    for h, p in zip(hinted.blocks, plain.blocks, strict=True):
        assert h.model_dump(exclude={"hit_reasons"}) == p.model_dump(exclude={"hit_reasons"})
        assert h.hit_reasons[: len(p.hit_reasons)] == p.hit_reasons
        assert all(reason.startswith("l0_") for reason in h.hit_reasons[len(p.hit_reasons) :])


@given(batch=batches(), s=settings_values())
def test_caps_hold_and_keep_the_best_ranked(batch, s):
    result = post_process(batch, s)
    record_events(batch, result)
    kept_keys = [b.evidence_key for b in result.blocks]
    assert len(kept_keys) == len(set(kept_keys))
    assert len(result.blocks) <= s.return_n
    per_doc = Counter(b.doc_id for b in result.blocks)
    assert all(count <= s.max_chunks_per_document for count in per_doc.values())
    assert len(result.blocks) + len(result.dropped) == len(batch)
    for dropped in result.dropped:
        doc = dropped.evidence_key.rsplit("#", 1)[0]
        if dropped.reason == "duplicate":
            kept = [b for b in result.blocks if b.evidence_key == dropped.evidence_key]
            others = [d for d in result.dropped if d.evidence_key == dropped.evidence_key and d != dropped]
            assert all(k.original_rank <= dropped.original_rank for k in kept)
            assert kept or others
        elif dropped.reason == "per_document_cap":
            same_doc = [b.original_rank for b in result.blocks if b.doc_id == doc]
            assert all(rank <= dropped.original_rank for rank in same_doc)
        else:
            assert len(result.blocks) == s.return_n
            assert all(b.original_rank <= dropped.original_rank for b in result.blocks)


@given(batch=batches(HYBRID_FIELDS), s=settings_values(), data=st.data())
def test_hybrid_quality_ignores_fused_score_magnitudes(batch, s, data):
    rescored = [c.model_copy(update={"score": data.draw(st.none() | fused_scores)}) for c in batch]
    before, after = post_process(batch, s), post_process(rescored, s)
    assert after.model_dump(exclude={"blocks"}) == before.model_dump(exclude={"blocks"})
    for a, b in zip(after.blocks, before.blocks, strict=True):
        assert a.model_dump(exclude={"score"}) == b.model_dump(exclude={"score"})
