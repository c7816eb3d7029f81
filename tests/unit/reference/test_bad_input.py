"""Bad input: every class raises its own error type, and the message names the candidate or setting."""

import inspect
import math

import pytest
from pydantic import ValidationError

import reference
from reference import (
    Candidate,
    InvalidCandidateError,
    InvalidEvidenceIdError,
    InvalidLimitError,
    InvalidMaxL2DistanceError,
    InvalidRankError,
    InvalidScoreError,
    InvalidSettingError,
    InvalidThresholdError,
    RetrievalQualityError,
    Settings,
    UnknownScoreLabelError,
    _errors,
    post_process,
    to_quality_score,
)

NAN = math.nan
INF = math.inf


def cand(doc="doc-7", chunk=3, rank=4, label="dense", **extra):
    return Candidate(doc_id=doc, chunk_index=chunk, original_rank=rank, score_label=label, **extra)


# -- the error hierarchy -------------------------------------------------------------------------------


def error_classes():
    return [obj for _, obj in inspect.getmembers(_errors, inspect.isclass) if issubclass(obj, BaseException)]


def test_error_classes_are_found():
    assert len(error_classes()) >= 10


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_error_derives_from_the_root_and_not_from_value_error(cls):
    # Documented design: a ValueError raised inside a pydantic validator would be wrapped in
    # ValidationError and the caller would lose the type.
    assert issubclass(cls, RetrievalQualityError)
    assert not issubclass(cls, ValueError)


def test_every_error_class_is_exported():
    assert {c.__name__ for c in error_classes()} <= set(reference.__all__)


# -- candidates ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["score", "raw_score", "dense_distance"])
@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_non_finite_score_is_rejected_naming_the_candidate(field, value):
    with pytest.raises(InvalidScoreError) as info:
        cand(label="hybrid", **{field: value})
    message = str(info.value)
    assert "'doc-7'#3" in message
    assert "originalRank 4" in message
    assert {"score": "score", "raw_score": "rawScore", "dense_distance": "denseDistance"}[field] in message
    assert info.value.candidate is not None


def test_candidate_errors_are_not_wrapped_in_validation_error():
    with pytest.raises(InvalidScoreError) as info:
        Candidate.model_validate(
            {"docId": "d", "chunkIndex": 0, "originalRank": 1, "score": NAN, "scoreLabel": "dense"}
        )
    assert not isinstance(info.value, ValidationError)


@pytest.mark.parametrize("rank", [0, -1, -100])
def test_original_rank_below_one_is_rejected_naming_the_candidate(rank):
    with pytest.raises(InvalidRankError) as info:
        cand(rank=rank)
    assert "'doc-7'#3" in str(info.value)
    assert f"originalRank is {rank}" in str(info.value)


def test_empty_doc_id_is_rejected():
    with pytest.raises(InvalidEvidenceIdError) as info:
        cand(doc="", rank=6)
    assert "docId" in str(info.value)
    assert "originalRank 6" in str(info.value)


@pytest.mark.parametrize("chunk", [-1, -42])
def test_negative_chunk_index_is_rejected_naming_the_candidate(chunk):
    with pytest.raises(InvalidEvidenceIdError) as info:
        cand(chunk=chunk)
    assert f"'doc-7'#{chunk}" in str(info.value)
    assert "chunkIndex" in str(info.value)


@pytest.mark.parametrize("distance", [-1e-3, -0.5, -2.0])
def test_negative_dense_score_beyond_tolerance_is_rejected(distance):
    with pytest.raises(InvalidScoreError) as info:
        to_quality_score("dense", distance, rank=1, batch_size=1, max_l2_distance=2.0)
    assert str(distance) in str(info.value)
    assert "score" in str(info.value)


@pytest.mark.parametrize("distance", [-1e-3, -0.5])
def test_negative_dense_distance_beyond_tolerance_is_rejected(distance):
    with pytest.raises(InvalidScoreError) as info:
        to_quality_score("hybrid", 0.01, rank=1, batch_size=1, max_l2_distance=2.0, dense_distance=distance)
    assert "denseDistance" in str(info.value)
    assert str(distance) in str(info.value)


@pytest.mark.parametrize("field", ["score", "dense_distance"])
def test_tiny_negative_distance_clamps_instead_of_failing(field):
    label = "dense" if field == "score" else "hybrid"
    result = post_process([cand(label=label, rank=1, **{field: -1e-7})], Settings())
    assert result.blocks[0].quality_score == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("label", ["cosine", "", "bm25"])
def test_unknown_label_is_rejected(label):
    with pytest.raises(UnknownScoreLabelError) as info:
        to_quality_score(label, 0.1, rank=1, batch_size=1, max_l2_distance=2.0)
    assert repr(label) in str(info.value)


# -- post_process names the candidate of a batch -------------------------------------------------------


def good_batch():
    return [cand(doc="good", chunk=i, rank=i + 1, score=0.1 * i) for i in range(3)]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (cand(doc="bad-doc", chunk=9, rank=2, label="dense", score=-0.25), InvalidScoreError),
        (cand(doc="bad-doc", chunk=9, rank=2, label="hybrid", dense_distance=-0.25), InvalidScoreError),
        (cand(doc="bad-doc", chunk=9, rank=2, label="cosine", score=0.2), UnknownScoreLabelError),
    ],
)
def test_post_process_names_the_offending_candidate(bad, error):
    batch = good_batch()
    batch.insert(1, bad)
    with pytest.raises(error) as info:
        post_process(batch, Settings())
    message = str(info.value)
    assert "bad-doc#9" in message
    assert "originalRank 2" in message
    assert "good#" not in message
    assert "bad-doc#9" in info.value.candidate


@pytest.mark.parametrize("label", ["dense", "hybrid", "rrf_fused"])
@pytest.mark.parametrize("position", [0, 7, 19])
@pytest.mark.parametrize("value", [-0.25, NAN, INF])
def test_one_bad_distance_in_a_large_batch_of_one_label_is_named(label, position, value):
    # A batch of one label is checked in a few passes, not candidate by candidate: the first bad
    # candidate must still be found and named, whatever its place (NaN and infinity get past the
    # Candidate model only through model_construct, as a careless caller might build them).
    field = "score" if label == "dense" else "dense_distance"
    batch = [cand(doc="good", chunk=i, rank=i + 1, label=label, **{field: 0.1}) for i in range(20)]
    bad = batch[position].model_copy(update={"doc_id": "bad-doc", field: value})
    batch[position] = bad
    with pytest.raises(InvalidScoreError) as info:
        post_process(batch, Settings())
    assert f"bad-doc#{position} (originalRank {position + 1})" in str(info.value)
    assert "denseDistance" in str(info.value) or label == "dense"


def test_a_rank_below_one_without_dense_distance_is_named_in_a_hybrid_batch():
    batch = [cand(doc="good", chunk=i, rank=i + 1, label="hybrid") for i in range(5)]
    batch[3] = batch[3].model_copy(update={"doc_id": "bad-doc", "original_rank": 0})
    with pytest.raises(InvalidRankError, match="bad-doc#3"):
        post_process(batch, Settings())


# -- settings ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.0, -1.0, NAN, INF, -INF])
def test_max_l2_distance_must_be_finite_and_positive(value):
    with pytest.raises(InvalidMaxL2DistanceError) as info:
        Settings(max_l2_distance=value)
    assert info.value.key == "rag.max-l2-distance"
    assert "rag.max-l2-distance" in str(info.value)


@pytest.mark.parametrize("value", [0.0, -1.0, NAN, INF])
@pytest.mark.parametrize("label", ["dense", "hybrid"])
def test_normalizer_rejects_bad_max_l2_distance(value, label):
    with pytest.raises(InvalidMaxL2DistanceError) as info:
        to_quality_score(label, 0.5, rank=1, batch_size=1, max_l2_distance=value)
    assert "rag.max-l2-distance" in str(info.value)


@pytest.mark.parametrize("attr", ["highly_relevant_threshold", "reference_threshold"])
@pytest.mark.parametrize("value", [-0.1, 1.0001, 2.0, NAN, INF])
def test_thresholds_must_lie_in_unit_interval(attr, value):
    key = "rag." + attr.replace("_", "-")
    # Keep the other threshold out of the way so only the range check can fire.
    others = (
        {"highly_relevant_threshold": 1.0} if attr == "reference_threshold" else {"reference_threshold": 0.0}
    )
    with pytest.raises(InvalidThresholdError) as info:
        Settings(**{attr: value, **others})
    assert info.value.key == key
    assert key in str(info.value)


def test_highly_relevant_below_reference_is_rejected():
    with pytest.raises(InvalidThresholdError) as info:
        Settings(highly_relevant_threshold=0.4, reference_threshold=0.6)
    assert info.value.key == "rag.highly-relevant-threshold"
    assert "rag.reference-threshold" in str(info.value)


def test_highly_relevant_equal_to_reference_is_allowed():
    assert Settings(highly_relevant_threshold=0.6, reference_threshold=0.6).reference_threshold == 0.6


@pytest.mark.parametrize("attr", ["return_n", "max_chunks_per_document", "retrieve_k", "excerpt_max_chars"])
@pytest.mark.parametrize("value", [0, -1])
def test_limits_must_be_at_least_one(attr, value):
    key = "rag." + attr.replace("_", "-")
    with pytest.raises(InvalidLimitError) as info:
        Settings(**{attr: value})
    assert info.value.key == key
    assert key in str(info.value)


@pytest.mark.parametrize("value", [0, -5, 16384])
def test_rrf_k_outside_engine_range_is_rejected(value):
    with pytest.raises(InvalidSettingError) as info:
        Settings(rrf_k=value)
    assert "retrieval.search.rrf-k" in str(info.value)


@pytest.mark.parametrize(
    ("data", "error", "key"),
    [
        ({"rag.return-n": 0}, InvalidLimitError, "rag.return-n"),
        ({"rag": {"max-chunks-per-document": 0}}, InvalidLimitError, "rag.max-chunks-per-document"),
        ({"rag": {"retrieve-k": -3}}, InvalidLimitError, "rag.retrieve-k"),
        ({"rag.max-l2-distance": 0}, InvalidMaxL2DistanceError, "rag.max-l2-distance"),
        ({"rag.reference-threshold": 1.5}, InvalidThresholdError, "rag.reference-threshold"),
    ],
)
def test_loading_keeps_the_specific_error_type(data, error, key):
    with pytest.raises(error) as info:
        Settings.from_mapping(data)
    assert info.value.key == key


def test_candidate_error_carries_no_candidate_when_raised_outside_a_batch():
    with pytest.raises(InvalidCandidateError) as info:
        to_quality_score("dense", -1.0, rank=1, batch_size=1, max_l2_distance=2.0)
    assert info.value.candidate is None


@pytest.mark.parametrize(("rank", "batch_size"), [(0, 3), (1, 0), (2, -1)])
def test_rank_mapping_rejects_impossible_ranks_and_batches(rank, batch_size):
    with pytest.raises(InvalidRankError):
        to_quality_score("hybrid", None, rank=rank, batch_size=batch_size, max_l2_distance=2.0)
