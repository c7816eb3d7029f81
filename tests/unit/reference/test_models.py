"""The reference's values: built and checked through pydantic's public API, the same in Python and JSON.

A dropped candidate is a named tuple in Python and an object in JSON; what ``post_process`` and
``lookup_knowledge`` return survives a JSON round trip unchanged.
"""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from pydantic import ValidationError

from reference import (
    Candidate,
    CompletenessHint,
    DroppedCandidate,
    EvidenceBlock,
    LookupResult,
    PostProcessResult,
    RelevanceLevel,
    Settings,
    post_process,
)
from reference._lookup import _result

CANDIDATE = {
    "doc_id": "manual-3",
    "chunk_index": 2,
    "text": "Refunds take five days.",
    "original_rank": 1,
    "score": 0.0164,
    "score_label": "hybrid",
    "raw_score": 0.0164,
    "dense_distance": 0.42,
    "category": "billing",
    "source_type": None,
}
BLOCK = {
    "evidence_key": "manual-3#2",
    "doc_id": "manual-3",
    "chunk_index": 2,
    "original_rank": 1,
    "quality_score": 0.79,
    "score": 0.0164,
    "score_label": "hybrid",
    "dense_distance": 0.42,
    "excerpt": "Refunds take five days.",
    "category": "billing",
    "source_type": None,
    "hit_reasons": ("retrieval_rank", "l0_keyword_overlap"),
}


def result_values() -> dict:
    return {
        "blocks": (EvidenceBlock.model_validate(BLOCK),),
        "dropped": (DroppedCandidate("manual-3", 2, 4, "duplicate"),),
        "relevance_level": RelevanceLevel.RELEVANT,
        "top_quality_score": 0.79,
        "is_low_quality": False,
        "completeness": CompletenessHint.PARTIAL,
    }


def assert_round_trips(made) -> None:
    cls = type(made)
    assert cls.model_validate_json(made.model_dump_json()) == made
    assert cls.model_validate(made.model_dump(by_alias=False)) == made
    assert cls.model_validate(made.model_dump()) == made
    assert pickle.loads(pickle.dumps(made)) == made
    assert copy.deepcopy(made) == made
    assert hash(made) == hash(copy.deepcopy(made))


def test_what_post_process_and_lookup_return_round_trips() -> None:
    batch = [
        Candidate.model_validate({**CANDIDATE, "original_rank": rank, "chunk_index": rank % 3})
        for rank in range(1, 8)
    ]
    result = post_process(batch, Settings(return_n=2), hints=None)
    assert result.dropped  # a duplicate and return_n drops, as tuples
    assert all(type(d) is DroppedCandidate for d in result.dropped)
    assert_round_trips(result)
    assert_round_trips(batch[0])
    assert_round_trips(result.blocks[0])
    lookup = _result("unfiltered", result, batch)
    assert "filtered_result" not in lookup.model_fields_set  # left unset, as validation of the rest would
    assert lookup == LookupResult.model_validate(lookup.model_dump(exclude_unset=True))
    assert_round_trips(lookup)
    retried = _result("unfiltered_retry", result, batch, filtered=result)
    assert retried.retried
    assert retried.filtered_result == result


def test_models_stay_frozen_and_copy_with_updates() -> None:
    made = Candidate.model_validate(CANDIDATE)
    with pytest.raises(ValidationError, match="frozen"):
        made.score = 1.0  # type: ignore[misc]
    moved = made.model_copy(update={"original_rank": 7})
    assert moved.original_rank == 7
    assert made.original_rank == 1


# -- DroppedCandidate: a named tuple in Python, an object in JSON --------------------------------------


def test_a_dropped_candidate_reads_as_before_and_is_an_object_in_json() -> None:
    dropped = DroppedCandidate("doc#with#hashes", 3, 9, "per_document_cap")
    assert (dropped.evidence_key, dropped.original_rank, dropped.reason) == (
        "doc#with#hashes#3",
        9,
        "per_document_cap",
    )
    result = PostProcessResult(**{**result_values(), "dropped": (dropped,)})
    assert result.dropped[0] is dropped  # taken as it is
    as_json = json.loads(result.model_dump_json())["dropped"]
    assert as_json == [{"evidenceKey": "doc#with#hashes#3", "originalRank": 9, "reason": "per_document_cap"}]
    assert result.model_dump(by_alias=False)["dropped"] == [
        {"evidence_key": "doc#with#hashes#3", "original_rank": 9, "reason": "per_document_cap"}
    ]
    assert_round_trips(result)


def test_a_dropped_candidate_as_a_plain_tuple_is_validated_into_one() -> None:
    result = PostProcessResult(**{**result_values(), "dropped": [("doc", "3", 9, "return_n")]})
    assert result.dropped == (DroppedCandidate("doc", 3, 9, "return_n"),)
    assert type(result.dropped[0]) is DroppedCandidate
    with pytest.raises(ValidationError, match=r"dropped\.0\.3"):
        PostProcessResult(**{**result_values(), "dropped": [("doc", 3, 9, "lost")]})


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"evidenceKey": "a#1", "originalRank": 2, "reason": "lost"}, "reason"),
        ({"evidenceKey": "a#1", "reason": "duplicate"}, "originalRank"),
        ({"evidenceKey": "a#1", "originalRank": 2, "reason": "duplicate", "extra": 1}, "extra"),
        ({"evidenceKey": "no-chunk", "originalRank": 2, "reason": "duplicate"}, "docId#chunkIndex"),
        ({"evidenceKey": "#4", "originalRank": 2, "reason": "duplicate"}, "docId#chunkIndex"),
    ],
)
def test_a_bad_dropped_candidate_in_json_is_named(item, problem) -> None:
    data = {**json.loads(PostProcessResult(**result_values()).model_dump_json()), "dropped": [item]}
    with pytest.raises(ValidationError, match=problem):
        PostProcessResult.model_validate(data)
    with pytest.raises(ValidationError, match=problem):
        PostProcessResult.model_validate_json(json.dumps(data))
