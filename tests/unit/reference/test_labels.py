"""R1: a scoreLabel canonicalizes to ``dense`` or ``hybrid`` before anything reads it."""

import pytest

from reference import (
    CANONICAL_LABELS,
    LEGACY_ALIASES,
    RetrievalQualityError,
    UnknownScoreLabelError,
    canonicalize_label,
    to_quality_score,
)


@pytest.mark.parametrize(
    ("legacy", "canonical"),
    [("l2_distance", "dense"), ("rrf_fused", "hybrid"), ("bm25_only_no_dense", "hybrid")],
)
def test_legacy_aliases_canonicalize(legacy, canonical):
    assert canonicalize_label(legacy) == canonical


@pytest.mark.parametrize("label", ["dense", "hybrid"])
def test_canonical_labels_map_to_themselves(label):
    assert canonicalize_label(label) == label


def test_exactly_the_spec_labels_are_known():
    # The spec names these three aliases and nothing else; a fourth would be an invention.
    assert set(CANONICAL_LABELS) == {"dense", "hybrid"}
    assert LEGACY_ALIASES == {
        "l2_distance": "dense",
        "rrf_fused": "hybrid",
        "bm25_only_no_dense": "hybrid",
    }


@pytest.mark.parametrize("label", ["cosine", "bm25", "rrf", "", "ip", "hybrid ", "dense\n"])
def test_unknown_label_is_rejected_naming_it_and_the_accepted_ones(label):
    with pytest.raises(UnknownScoreLabelError) as info:
        canonicalize_label(label)
    message = str(info.value)
    assert repr(label) in message
    for accepted in ("dense", "hybrid", "l2_distance", "rrf_fused", "bm25_only_no_dense"):
        assert accepted in message
    assert info.value.label == label
    assert set(info.value.accepted) == {"dense", "hybrid", *LEGACY_ALIASES}


@pytest.mark.parametrize("label", ["Dense", "HYBRID", "L2_DISTANCE", "Rrf_Fused"])
def test_reference_rejects_case_variants(label):
    # The spec does not say; the reference documents that it refuses to guess (readings 8).
    with pytest.raises(UnknownScoreLabelError):
        canonicalize_label(label)


@pytest.mark.parametrize("label", [None, 3, ("dense",)])
def test_non_string_label_is_an_unknown_label_not_a_type_error(label):
    with pytest.raises(UnknownScoreLabelError):
        canonicalize_label(label)


def test_unknown_label_error_belongs_to_the_package_root():
    assert issubclass(UnknownScoreLabelError, RetrievalQualityError)


def test_l2_distance_alias_is_normalized_as_dense():
    # Dense: the score is a distance, so a distance of 1 with maxL2 2 is quality 0.5 whatever the rank.
    common = {"score": 1.0, "rank": 7, "batch_size": 10, "max_l2_distance": 2.0}
    assert to_quality_score("l2_distance", **common) == pytest.approx(0.5, abs=1e-9)
    assert to_quality_score("l2_distance", **common) == to_quality_score("dense", **common)


@pytest.mark.parametrize("alias", ["rrf_fused", "bm25_only_no_dense"])
def test_hybrid_aliases_are_normalized_as_hybrid(alias):
    # Hybrid: the fused score is ignored and rank 1 is 1.0, whatever the (distance-like) score says.
    common = {"score": 1.9, "rank": 1, "batch_size": 10, "max_l2_distance": 2.0}
    assert to_quality_score(alias, **common) == 1.0
    for rank in range(1, 11):
        common["rank"] = rank
        assert to_quality_score(alias, **common) == to_quality_score("hybrid", **common)
