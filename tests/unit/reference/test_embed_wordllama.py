"""WordLlamaEmbedder and make_embedder: a real model from the wheel's own files, never a download."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import numpy as np
import pytest

from reference import (
    Embedder,
    EmbedderError,
    EmbedderUnavailableError,
    HashingEmbedder,
    WordLlamaEmbedder,
    describe_embedder,
    make_embedder,
)
from reference import _embed as embed_module

pytest.importorskip("wordllama", reason="the embed extra (wordllama) is not installed")


@pytest.fixture(scope="module")
def model() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every outgoing connection fails the test's expectations loudly; attempts are recorded."""
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network access attempted in a test that must stay offline")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


def _cos(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return float(np.dot(a, b))  # both unit length


def test_satisfies_the_embedder_protocol(model: WordLlamaEmbedder) -> None:
    embedder: Embedder = model  # a type error here means the Protocol drifted
    assert isinstance(embedder, Embedder)
    assert model.dim == 256


def test_loads_from_the_wheel_without_any_connection(no_network: list[object]) -> None:
    fresh = WordLlamaEmbedder()
    assert len(fresh.embed(["offline"])[0]) == 256
    assert no_network == []


def test_vectors_are_unit_length_float32(model: WordLlamaEmbedder) -> None:
    vectors = model.embed(["Refunds go back to the original payment method.", "reset my password"])
    for vector in vectors:
        assert len(vector) == 256
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
        assert all(float(np.float32(x)) == x for x in vector)


def test_same_text_same_vector_alone_or_in_a_batch(model: WordLlamaEmbedder) -> None:
    text = "the kettle shows E03"
    alone = model.embed([text])[0]
    batched = model.embed(["a much longer first text that pads the batch to more tokens", text])[1]
    assert alone == model.embed([text])[0]
    assert np.allclose(alone, batched, atol=1e-6)


def test_empty_text_is_the_zero_vector_not_nan(model: WordLlamaEmbedder) -> None:
    [vector] = model.embed([""])
    assert vector == (0.0,) * 256


def test_empty_batch_and_bare_string(model: WordLlamaEmbedder) -> None:
    assert model.embed([]) == []
    with pytest.raises(TypeError, match="sequence of texts"):
        model.embed("oops")  # type: ignore[arg-type]


def test_it_is_semantic_where_the_hashing_embedder_is_not(model: WordLlamaEmbedder) -> None:
    # The example: "refund failed" shares no word with either chunk below.
    query, refund, two_factor = (
        "refund failed",
        "Money is returned to the card you paid with within five business days.",
        "Two-factor codes are sent by text message to your phone.",
    )
    q, r, t = model.embed([query, refund, two_factor])
    assert _cos(q, r) > _cos(q, t)
    hq, hr, ht = HashingEmbedder(256).embed([query, refund, two_factor])
    assert _cos(hq, hr) == _cos(hq, ht) == 0.0  # no shared word: orthogonal, no preference


def test_missing_model_files_are_an_error_not_a_download(tmp_path: Path, no_network: list[object]) -> None:
    with pytest.raises(EmbedderUnavailableError, match="model files are missing") as info:
        WordLlamaEmbedder(model_dir=tmp_path)
    assert str(tmp_path / "weights" / "l2_supercat_256.safetensors") in str(info.value)
    assert "Nothing is downloaded" in str(info.value)
    assert no_network == []


def test_missing_package_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)  # import now raises ImportError
    with pytest.raises(EmbedderUnavailableError, match=r"rag-quality-conformance\[embed\]"):
        WordLlamaEmbedder()


def test_make_embedder_auto_prefers_the_real_model() -> None:
    assert isinstance(make_embedder(), WordLlamaEmbedder)
    assert isinstance(make_embedder("auto", dim=256), WordLlamaEmbedder)


def test_make_embedder_auto_with_another_dimension_is_hashing() -> None:
    embedder = make_embedder("auto", dim=64)
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dim == 64


def test_make_embedder_auto_without_wordllama_is_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed_module, "wordllama_installed", lambda: False)
    embedder = make_embedder()
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dim == 384


def test_make_embedder_refuses_what_it_cannot_build() -> None:
    with pytest.raises(EmbedderError, match="256-dimensional vectors, not 64"):
        make_embedder("wordllama", dim=64)
    with pytest.raises(EmbedderError, match="unknown embedder 'bert'"):
        make_embedder("bert")


def test_describe_names_the_model_and_dimension(model: WordLlamaEmbedder) -> None:
    assert describe_embedder(model).startswith("wordllama l2_supercat (256-d")
    assert "offline" in describe_embedder(model)
    assert describe_embedder(HashingEmbedder(32)).startswith("hashing (32-d")
