"""The hot path's models are made without validating them again (``reference._models.trusted``): each
must be exactly what validation makes of the same values."""

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
)
from reference._models import trusted, trusted_all

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


def lookup_values(result: PostProcessResult) -> dict:
    return {
        "path": "unfiltered",
        "retried": False,
        "result": result,
        "filtered_result": None,
        "candidates": (Candidate.model_validate(CANDIDATE),),
    }


def assert_same(made, validated) -> None:
    assert type(made) is type(validated)
    assert made == validated
    assert made.model_fields_set == validated.model_fields_set
    assert repr(made) == repr(validated)
    assert hash(made) == hash(validated)
    assert made.model_dump() == validated.model_dump()
    assert made.model_dump(by_alias=False, exclude_unset=True) == validated.model_dump(
        by_alias=False, exclude_unset=True
    )
    assert made.model_dump_json() == validated.model_dump_json()
    assert pickle.loads(pickle.dumps(made)) == validated
    assert copy.deepcopy(made) == validated


@pytest.mark.parametrize(
    ("cls", "values"),
    [(Candidate, CANDIDATE), (EvidenceBlock, BLOCK)],
    ids=["Candidate", "EvidenceBlock"],
)
def test_a_trusted_model_is_the_validated_one(cls, values) -> None:
    assert_same(trusted(cls, dict(values)), cls.model_validate(values))
    [made] = trusted_all(cls, [dict(values)])
    assert_same(made, cls.model_validate(values))


def test_a_trusted_result_and_lookup_are_the_validated_ones() -> None:
    result = trusted(PostProcessResult, result_values())
    assert_same(result, PostProcessResult.model_validate(result_values()))
    given = {k: v for k, v in lookup_values(result).items() if k != "filtered_result"}
    made = trusted(LookupResult, lookup_values(result), unset=frozenset({"filtered_result"}))
    assert_same(made, LookupResult.model_validate(given))
    assert "filtered_result" not in made.model_fields_set


def test_a_trusted_model_stays_frozen_and_copies_with_updates() -> None:
    made = trusted(Candidate, dict(CANDIDATE))
    with pytest.raises(ValidationError, match="frozen"):
        made.score = 1.0  # type: ignore[misc]
    moved = made.model_copy(update={"original_rank": 7})
    assert moved.original_rank == 7
    assert made.original_rank == 1
    assert moved.model_fields_set == made.model_fields_set


# -- DroppedCandidate: a named tuple in Python, an object in JSON --------------------------------------


def test_a_dropped_candidate_reads_as_before_and_is_an_object_in_json() -> None:
    dropped = DroppedCandidate("doc#with#hashes", 3, 9, "per_document_cap")
    assert (dropped.evidence_key, dropped.original_rank, dropped.reason) == (
        "doc#with#hashes#3",
        9,
        "per_document_cap",
    )
    result = trusted(PostProcessResult, {**result_values(), "dropped": (dropped,)})
    as_json = json.loads(result.model_dump_json())["dropped"]
    assert as_json == [{"evidenceKey": "doc#with#hashes#3", "originalRank": 9, "reason": "per_document_cap"}]
    assert result.model_dump(by_alias=False)["dropped"] == [
        {"evidence_key": "doc#with#hashes#3", "original_rank": 9, "reason": "per_document_cap"}
    ]
    assert PostProcessResult.model_validate_json(result.model_dump_json()) == result
    assert PostProcessResult.model_validate(result.model_dump(by_alias=False)) == result


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
    data = {**json.loads(trusted(PostProcessResult, result_values()).model_dump_json()), "dropped": [item]}
    with pytest.raises(ValidationError, match=problem):
        PostProcessResult.model_validate(data)


def test_where_pydantic_keeps_other_state_it_validates_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    import reference._models as models

    monkeypatch.setattr(models, "_CAN_SET_STATE", False)
    assert_same(trusted(Candidate, dict(CANDIDATE)), Candidate.model_validate(CANDIDATE))
    [made] = trusted_all(EvidenceBlock, [dict(BLOCK)])
    assert_same(made, EvidenceBlock.model_validate(BLOCK))
