"""The public facade: names re-exported from ``reference``, and camelCase JSON on the wire."""

import json

import pytest
from pydantic import ValidationError

import reference
from reference import (
    Candidate,
    L0Hints,
    PostProcessResult,
    Settings,
    canonicalize_label,
    post_process,
    to_quality_score,
)


def test_documented_names_import_from_the_package():
    assert callable(canonicalize_label)
    assert callable(to_quality_score)
    assert callable(post_process)
    for cls in (Settings, Candidate, L0Hints, PostProcessResult):
        assert isinstance(cls, type)


@pytest.mark.parametrize("name", reference.__all__)
def test_every_exported_name_resolves(name):
    assert getattr(reference, name) is not None


def test_all_has_no_duplicates_and_no_private_names():
    assert len(reference.__all__) == len(set(reference.__all__))
    assert not [name for name in reference.__all__ if name.startswith("_")]


def test_exported_objects_come_from_private_modules():
    # Public names live in _name.py modules (in subpackages too); the facade only re-exports them. The
    # labelled set's values (EvalSet, EvalQuery) are the evaluation package's, which both sides share.
    for name in reference.__all__:
        module = getattr(getattr(reference, name), "__module__", None)
        if module is not None and module != "builtins":
            parts = module.split(".")
            assert parts[0] == "reference" or (
                parts[0] == "evaluation" and name in ("EvalSet", "EvalQuery")
            ), (
                name,
                module,
            )
            assert any(p.startswith("_") for p in parts[1:]), (name, module)


CAMEL_CANDIDATE = {
    "docId": "manual-3",
    "chunkIndex": 2,
    "text": "How to request a refund",
    "originalRank": 1,
    "score": 0.0325,
    "scoreLabel": "rrf_fused",
    "rawScore": 0.0325,
    "denseDistance": 0.42,
    "category": "billing",
    "sourceType": "faq",
}


def test_candidate_reads_camel_case_and_snake_case():
    from_camel = Candidate.model_validate(CAMEL_CANDIDATE)
    from_snake = Candidate(
        doc_id="manual-3",
        chunk_index=2,
        text="How to request a refund",
        original_rank=1,
        score=0.0325,
        score_label="rrf_fused",
        raw_score=0.0325,
        dense_distance=0.42,
        category="billing",
        source_type="faq",
    )
    assert from_camel == from_snake
    assert from_camel.evidence_key == "manual-3#2"


def test_candidate_json_round_trip_uses_camel_case():
    candidate = Candidate.model_validate(CAMEL_CANDIDATE)
    text = candidate.model_dump_json(by_alias=True)
    assert json.loads(text) == CAMEL_CANDIDATE
    assert Candidate.model_validate_json(text) == candidate


def test_candidate_rejects_unknown_fields():
    with pytest.raises(ValidationError, match="keywordBoost"):
        Candidate.model_validate({**CAMEL_CANDIDATE, "keywordBoost": 0.2})


def test_post_process_result_json_round_trip_uses_camel_case():
    batch = [
        Candidate.model_validate(CAMEL_CANDIDATE),
        Candidate(doc_id="manual-3", chunk_index=2, original_rank=2, score=0.03, score_label="hybrid"),
        Candidate(
            doc_id="faq-1", chunk_index=0, original_rank=3, score=0.01, score_label="hybrid", text="refund"
        ),
    ]
    result = post_process(batch, Settings(), hints=L0Hints(keywords=("refund",)))
    text = result.model_dump_json(by_alias=True)
    data = json.loads(text)

    block = data["blocks"][0]
    for key in (
        "docId",
        "originalRank",
        "scoreLabel",
        "qualityScore",
        "evidenceKey",
        "chunkIndex",
        "hitReasons",
    ):
        assert key in block
    assert block["evidenceKey"] == "manual-3#2"
    assert block["scoreLabel"] == "hybrid"
    assert data["dropped"] == [{"evidenceKey": "manual-3#2", "originalRank": 2, "reason": "duplicate"}]
    for key in ("relevanceLevel", "topQualityScore", "isLowQuality", "completeness"):
        assert key in data
    assert not [k for k in (*data, *block) if "_" in k]

    assert PostProcessResult.model_validate_json(text) == result


def test_values_are_frozen():
    candidate = Candidate.model_validate(CAMEL_CANDIDATE)
    with pytest.raises(ValidationError, match="frozen"):
        candidate.score = 1.0  # type: ignore[misc]
