"""The frozen old hot path (``benchmarks.figures.old_reference``) still does what the reference does.

The benchmarks time the old code beside the new to put a figure on issue 25's readability rewrite; that
figure means something only while both do the same work. So: the same result for every batch, settings
and hints the reference's own property tests draw, the same error for a bad candidate, the same
candidates from an engine's reply, and ``call_old`` puts the reference back as it was.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given

import reference._lookup
import reference.store._store
from benchmarks.figures.old_reference import SWAPPED, call_old
from benchmarks.figures.old_reference import hits as old_hits
from benchmarks.figures.old_reference import lookup as old_lookup
from benchmarks.figures.old_reference import post_process as old_post_process
from benchmarks.figures.postprocess import candidates as bench_candidates
from reference import L0Hints, RetrievalQualityError, Settings, post_process
from reference._lookup import _result
from reference.store._hits import candidates
from reference.store._schema import ABSENT
from tests.unit.reference.test_properties import batches, hints_values, settings_values


def same(new, old) -> None:
    assert new == old
    assert type(new) is type(old)
    assert new.model_fields_set == old.model_fields_set
    assert new.model_dump_json() == old.model_dump_json()


@given(batches(), settings_values(), hints_values)
def test_old_and_new_post_process_give_the_same_result(batch, settings, hints) -> None:
    same(post_process(batch, settings, hints=hints), old_post_process(batch, settings, hints=hints))


@pytest.mark.parametrize("size", [0, 20, 100])
def test_the_benchmark_batches_give_the_same_result(size) -> None:
    batch, hints = bench_candidates(size), L0Hints(domain="billing", keywords=("refunds", "portal"))
    same(post_process(batch, Settings(), hints=hints), old_post_process(batch, Settings(), hints=hints))


@pytest.mark.parametrize(
    "bad",
    [
        {"score_label": "RRF"},
        {"score_label": "dense", "score": -0.5},
        {"score_label": "dense", "score": math.nan},
        {"score_label": "hybrid", "dense_distance": math.inf},
        {"score_label": "hybrid", "dense_distance": None, "original_rank": 0},
    ],
    ids=["label", "negative", "nan", "infinite-dense-distance", "rank-0"],
)
@pytest.mark.parametrize("position", [0, 13, 19])
def test_old_and_new_refuse_a_bad_candidate_with_the_same_error(bad, position) -> None:
    batch = bench_candidates(20)
    # model_copy does not validate: the candidate a careless caller might build.
    batch[position] = batch[position].model_copy(update={"doc_id": "bad-doc", **bad})
    with pytest.raises(RetrievalQualityError) as new:
        post_process(batch, Settings())
    with pytest.raises(RetrievalQualityError) as old:
        old_post_process(batch, Settings())
    assert type(new.value) is type(old.value)
    assert str(new.value) == str(old.value)
    assert "bad-doc" in str(new.value)


def test_a_bad_setting_is_refused_first_by_both() -> None:
    batch = [bench_candidates(3)[0].model_copy(update={"score_label": "RRF"})]
    settings = Settings().model_copy(update={"max_l2_distance": -1.0})
    for implementation in (post_process, old_post_process):
        with pytest.raises(RetrievalQualityError, match=r"rag\.max-l2-distance"):
            implementation(batch, settings)


def test_old_and_new_make_the_same_candidates_from_a_reply() -> None:
    entities = [
        {"doc_id": f"d{i}", "chunk_index": i, "text": f"t{i}", "category": ABSENT, "source_type": "faq"}
        for i in range(5)
    ]
    scores = [1 / (60 + r) for r in range(1, 6)]
    for distances in (None, [0.25 * i for i in range(5)]):
        new, old = (
            candidates(entities, scores, "hybrid", distances),
            old_hits.candidates(entities, scores, "hybrid", distances),
        )
        assert len(new) == len(old) == 5
        for a, b in zip(new, old, strict=True):
            same(a, b)


def test_old_and_new_make_the_same_lookup_result() -> None:
    batch = bench_candidates(20)
    result = post_process(batch, Settings())
    for filtered in (None, result):
        same(
            _result("unfiltered_retry", result, batch, filtered=filtered),
            old_lookup._result("unfiltered_retry", result, batch, filtered=filtered),
        )


def test_call_old_swaps_the_old_versions_in_and_the_new_ones_back() -> None:
    before = [getattr(module, name) for module, name, _ in SWAPPED]
    seen = call_old(lambda: [getattr(module, name) for module, name, _ in SWAPPED])
    assert seen == [old for _, _, old in SWAPPED]
    assert [getattr(module, name) for module, name, _ in SWAPPED] == before
    assert reference._lookup.post_process is post_process
    assert reference.store._store.candidates is candidates

    def fails() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        call_old(fails)
    assert [getattr(module, name) for module, name, _ in SWAPPED] == before
