"""Embedders: the one Protocol the store and the CLI need, and a deterministic offline default.

The reference never downloads a model. :class:`HashingEmbedder` is the "hashing trick": every
lower-cased word token, except a short list of English stop words, is hashed to one of ``dim``
buckets with a pseudo-random sign, counts are summed and the vector is scaled to unit length. Texts
that share words are close in L2, texts that share none are orthogonal (squared distance 2 for unit
vectors). It knows no synonyms or word forms ("refund" is not "refunds"). That is enough for the
sample data, the CLI and tests; a production deployment plugs a real model in through
:class:`Embedder`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "HashingEmbedder"]

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
