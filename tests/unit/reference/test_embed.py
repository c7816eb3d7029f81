"""HashingEmbedder: deterministic, offline, unit length, and close for shared words only."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference._embed import Embedder, HashingEmbedder


def _sq_l2(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return float(np.sum((np.asarray(a) - np.asarray(b)) ** 2))


def test_satisfies_the_embedder_protocol() -> None:
    embedder: Embedder = HashingEmbedder(16)  # a type error here means the Protocol drifted
    assert isinstance(embedder, Embedder)


def test_dimension_and_unit_length() -> None:
    [vector] = HashingEmbedder(32).embed(["Descale the kettle every four weeks"])
    assert len(vector) == 32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)


def test_same_input_same_vector_across_instances() -> None:
    text = "reset your password"
    assert HashingEmbedder(64).embed([text]) == HashingEmbedder(64).embed([text])


def test_known_vector_is_stable_across_runs_and_machines() -> None:
    # BLAKE2b, not Python's salted hash(): the value must never change with PYTHONHASHSEED.
    # Pinned: if this changes, every stored collection built with the default embedder goes stale.
    assert HashingEmbedder(8).embed(["kettle"])[0] == (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0)


def test_seed_changes_the_vectors() -> None:
    text = ["refund policy for returned kettles"]
    assert HashingEmbedder(64, seed=1).embed(text) != HashingEmbedder(64, seed=2).embed(text)


def test_shared_words_are_closer_than_unrelated_text() -> None:
    query, related, unrelated = HashingEmbedder(384).embed(
        ["how do I reset my password", "To reset your password open the sign-in page", "ferry timetable"]
    )
    assert _sq_l2(query, related) < 1.0 < _sq_l2(query, unrelated)
    assert _sq_l2(query, unrelated) == pytest.approx(2.0, abs=1e-6)  # orthogonal unit vectors


def test_case_and_stop_words_do_not_matter() -> None:
    a, b = HashingEmbedder(128).embed(["Reset the PASSWORD", "reset password"])
    assert a == b


@pytest.mark.parametrize("text", ["", "   ", "?!", "the and of"])
def test_text_without_word_tokens_is_the_zero_vector(text: str) -> None:
    assert HashingEmbedder(16).embed([text]) == [(0.0,) * 16]


def test_components_are_float32_values() -> None:
    vector = HashingEmbedder(64).embed(["billing invoice history"])[0]
    assert all(float(np.float32(x)) == x for x in vector)


def test_bare_string_is_refused() -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        HashingEmbedder(8).embed("oops")  # type: ignore[arg-type]


@pytest.mark.parametrize("dim", [0, 1, -3, 2.5, True])
def test_bad_dimension_is_refused(dim: object) -> None:
    with pytest.raises(ValueError, match="at least 2"):
        HashingEmbedder(dim)  # type: ignore[arg-type]


@given(st.lists(st.text(max_size=40), max_size=5))
def test_any_texts_give_unit_or_zero_vectors_of_the_right_size(texts: list[str]) -> None:
    vectors = HashingEmbedder(24).embed(texts)
    assert len(vectors) == len(texts)
    for vector in vectors:
        assert len(vector) == 24
        norm = float(np.linalg.norm(vector))
        assert norm == 0.0 or norm == pytest.approx(1.0, abs=1e-5)
