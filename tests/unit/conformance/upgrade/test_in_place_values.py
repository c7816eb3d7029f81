"""The in-place comparison, value by value: what counts as the same answer, and what is missing."""

from __future__ import annotations

from conformance.upgrade._in_place_values import (
    SAME_SCORE_WITHIN,
    Answer,
    CollectionState,
    InPlaceResult,
    compare_answers,
    compare_inventories,
    engine_words,
)

SAME = Answer(keys=("a#0", "b#0"), scores=(0.9, 0.5), top=0.9)


def test_the_same_ids_order_and_scores_within_the_tolerance_are_unchanged() -> None:
    nudged = Answer(keys=SAME.keys, scores=(0.9 + SAME_SCORE_WITHIN / 2, 0.5), top=0.9)
    assert compare_answers({("q1", "dense"): SAME}, {("q1", "dense"): nudged}) == []


def test_every_difference_is_listed_per_query_and_mode() -> None:
    before = {("q1", "dense"): SAME, ("q2", "dense"): SAME, ("q3", "hybrid"): SAME, ("q4", "dense"): SAME}
    after = {
        ("q1", "dense"): Answer(keys=("b#0", "a#0"), scores=(0.9, 0.5), top=0.9),
        ("q2", "dense"): Answer(keys=SAME.keys, scores=(0.8, 0.5), top=0.8),
        ("q3", "hybrid"): Answer(error="MilvusException: collection not loaded"),
    }
    changes = {(c.query_id, c.mode): c.what for c in compare_answers(before, after)}
    assert changes[("q1", "dense")] == "ids differ from rank 1: a#0 before, b#0 after"
    assert changes[("q2", "dense")].startswith("same ids, scores differ by up to 0.1")
    assert "collection not loaded" in changes[("q3", "hybrid")]
    assert "not asked" in changes[("q4", "dense")]


def test_a_query_that_failed_before_and_after_is_not_a_change_of_the_upgrade() -> None:
    failed = Answer(error="boom")
    assert compare_answers({("q", "dense"): failed}, {("q", "dense"): failed}) == []


def test_fewer_blocks_after_is_a_change() -> None:
    shorter = Answer(keys=SAME.keys[:1], scores=SAME.scores[:1], top=0.9)
    [change] = compare_answers({("q", "dense"): SAME}, {("q", "dense"): shorter})
    assert change.what == "2 block(s) before, 1 after"


def test_missing_collections_rows_and_indexes_are_named() -> None:
    before = [
        CollectionState(name="c1", rows=10, indexes=("dense:HNSW:L2",)),
        CollectionState(name="c2", rows=5),
    ]
    after = [CollectionState(name="c1", rows=9, indexes=(), problem="load failed: MilvusException: x")]
    missing = compare_inventories(before, after)
    assert "collection c1: 10 rows before, 9 after" in missing
    assert any("index dense:HNSW:L2 is gone" in m for m in missing)
    assert "collection c2 (5 rows) is gone" in missing
    assert "collection c1: load failed: MilvusException: x" in missing
    assert compare_inventories(before, before) == []


def test_the_engines_own_words_are_the_error_line_of_its_log() -> None:
    error = "FileExistsError: [Errno 17] File exists: 'd/lite.db'"
    log = f"Traceback (most recent call last):\n  File x\n{error}\nhint"
    assert engine_words(log) == error
    assert engine_words("just one line") == "just one line"


def test_the_verdict_line_is_last_and_carries_the_exit_code() -> None:
    cannot = InPlaceResult(old="a", new="b", verdict="CANNOT OPEN", engine_words="E", advice="re-ingest")
    assert cannot.exit_code == 1
    assert cannot.lines()[-1].startswith("verdict in place: CANNOT OPEN (old a -> new b)")
    assert any("what to do: re-ingest" in line for line in cannot.lines())
    same = InPlaceResult(old="a", new="b", verdict="UNCHANGED", modes=("dense",), queries=3)
    assert same.exit_code == 0
    assert "every query's answer unchanged" in same.lines()[-1]


def test_cannot_open_names_the_nullable_fields_a_line_without_them_cannot_load() -> None:
    """What Lite 2.4.12 -> 2.5.1 said of a collection with nullable fields (measured: 2.5.1 lists it, then
    its server exits when it loads it)."""
    from conformance.upgrade._in_place import _nullable_advice
    from conformance.upgrade._in_place_values import CollectionState

    held = [
        CollectionState(name="kb", rows=156, nullable=("category", "source_type")),
        CollectionState(name="x"),
    ]
    advice = _nullable_advice("lite-2.5.1", held)
    assert "kb (category, source_type)" in advice
    assert "recreate them without nullable fields" in advice
    assert _nullable_advice("lite", held) == ""  # Lite 3.x has nullable fields
    assert _nullable_advice("lite-2.5.1", [CollectionState(name="x")]) == ""
