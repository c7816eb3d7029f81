"""Embedders: the one Protocol the store and the CLI need, a deterministic fallback and a real model.

The reference never downloads a model. :class:`WordLlamaEmbedder` is a real (small, static) embedding
model whose weights and tokenizer ship inside the ``wordllama`` wheel (the optional ``embed`` extra);
it is loaded from those files only, by the evaluation package (the kit's upgrade check embeds with it
too). :class:`HashingEmbedder` is the "hashing trick": every
lower-cased word token, except a short list of English stop words, is hashed to one of ``dim``
buckets with a pseudo-random sign, counts are summed and the vector is scaled to unit length. Texts
that share words are close in L2, texts that share none are orthogonal (squared distance 2 for unit
vectors). It knows no synonyms or word forms ("refund" is not "refunds"). That is enough for the
sample data, the CLI and tests; a production deployment plugs a real model in through
:class:`Embedder`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

import evaluation as _shared

from ._errors import RetrievalQualityError

__all__ = [
    "EMBEDDER_NAMES",
    "Embedder",
    "EmbedderError",
    "EmbedderUnavailableError",
    "HashingEmbedder",
    "WordLlamaEmbedder",
    "describe_embedder",
    "make_embedder",
    "wordllama_installed",
]

EMBEDDER_NAMES: tuple[str, ...] = ("auto", "wordllama", "hashing")
HASHING_DEFAULT_DIM = 384


class EmbedderError(RetrievalQualityError):
    """An embedder that cannot be built as asked (unknown name, a dimension the model does not have)."""


class EmbedderUnavailableError(EmbedderError, _shared.EmbedderUnavailableError):
    """The model is not installed or its files are missing. The reference never downloads one instead."""


# Word characters, Unicode-aware: close to what Milvus's ``standard`` analyzer keeps as tokens.
_TOKEN = re.compile(r"\w+", re.UNICODE)

# Frequent English function words carry no topic; left in, they dominate short queries and pull every
# pair of texts together. A fixed list (not learned IDF) keeps the embedder stateless and deterministic.
STOP_WORDS = frozenset(
    """a about after all an and any are as at be because been before but by can could did do does
    for from had has have how i if in into is it its may me must my no not of on or our so than that
    the their them then there these they this to too under until up us was we were what when where
    which while who why will with would you your""".split()  # noqa: SIM905 - a word list reads better as text
)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into dense vectors of a fixed dimension ``dim``, one vector per text, in order."""

    dim: int

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """One vector of length ``dim`` per text."""
        ...


class HashingEmbedder:
    """Deterministic, offline, unit-length hashed word features.

    The same ``(dim, seed, text)`` always gives the same vector, on every machine and Python version
    (the hash is BLAKE2b keyed by the seed, not Python's salted ``hash``). Components are float32
    values stored as Python floats, so a distance computed on the client in float32 agrees with the
    engine's. A text with no word token (empty, whitespace, punctuation, stop words only) has no
    direction: it embeds to the zero vector, equally far (squared distance 1) from every unit vector.
    """

    def __init__(self, dim: int = 384, *, seed: int = 0) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 2:
            # Not a RetrievalQualityError subclass on purpose: this is a programming error, like
            # passing a negative size to any constructor.
            raise ValueError(f"HashingEmbedder dim is {dim!r}; use an integer of at least 2 (e.g. 384)")
        self.dim = dim
        self.seed = seed
        self._key = seed.to_bytes(8, "little", signed=True)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim}, seed={self.seed})"

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """Embed each text; see the class docstring for the construction."""
        if isinstance(texts, str):
            # A bare string is a sequence of characters; embedding each character is never intended.
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> tuple[float, ...]:
        vector = np.zeros(self.dim, dtype=np.float64)
        for token in _TOKEN.findall(text.casefold()):
            if token in STOP_WORDS:
                continue
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8, key=self._key).digest()
            value = int.from_bytes(digest, "little")
            # Low bit picks the sign so colliding tokens tend to cancel rather than pile up.
            vector[(value >> 1) % self.dim] += 1.0 if value & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm > 0.0:
            vector /= norm
        return tuple(float(x) for x in vector.astype(np.float32))


class WordLlamaEmbedder(_shared.WordLlamaEmbedder):
    """wordllama's ``l2_supercat`` model (256 dimensions), from the files inside the installed wheel.

    The evaluation package's model (:class:`evaluation.WordLlamaEmbedder`, so the kit's upgrade check
    embeds a labelled set exactly as the reference does), raising the reference's
    :class:`EmbedderUnavailableError` when it cannot be loaded.
    """

    def __init__(self, *, model_dir: str | os.PathLike[str] | None = None) -> None:
        try:
            super().__init__(model_dir=model_dir)
        except _shared.EmbedderUnavailableError as exc:
            raise EmbedderUnavailableError(str(exc)) from None


def wordllama_installed() -> bool:
    """Whether the ``wordllama`` package can be imported (its files are checked only when loading)."""
    return _shared.wordllama_installed()


def make_embedder(name: str = "auto", *, dim: int | None = None) -> Embedder:
    """Build an embedder by name: ``wordllama``, ``hashing``, or ``auto``.

    ``auto`` is the real model when wordllama is installed and ``dim`` is unset or 256, otherwise the
    hashing embedder (of ``dim``, default 384): a ``dim`` only the hashing embedder can make asks for it.
    An explicit ``wordllama`` with another ``dim`` is an :class:`EmbedderError`.
    """
    if name not in EMBEDDER_NAMES:
        raise EmbedderError(f"unknown embedder {name!r}; use one of {', '.join(EMBEDDER_NAMES)}")
    if name == "auto":
        name = "wordllama" if wordllama_installed() and dim in (None, 256) else "hashing"
    if name == "hashing":
        return HashingEmbedder(HASHING_DEFAULT_DIM if dim is None else dim)
    if dim not in (None, 256):
        raise EmbedderError(
            f"the wordllama model makes 256-dimensional vectors, not {dim}; leave the dimension out, "
            "or use the hashing embedder for other dimensions"
        )
    return WordLlamaEmbedder()


def describe_embedder(embedder: Embedder) -> str:
    """One line for people: which model, which dimension, and that it runs offline."""
    if isinstance(embedder, _shared.WordLlamaEmbedder):
        return embedder.describe()
    if isinstance(embedder, HashingEmbedder):
        return f"hashing ({embedder.dim}-d, seed {embedder.seed}; shared words only, not a semantic model)"
    return f"{type(embedder).__name__} ({embedder.dim}-d)"
