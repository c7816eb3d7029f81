"""A deterministic benchmark corpus: English-like chunks with a Zipf word distribution, 384-dim vectors.

No model is downloaded. Every word of a generated vocabulary gets a seeded random unit vector; a text's
vector is the IDF-like weighted sum of its words' vectors, normalised. Frequent words weigh little, so,
as with a real embedding model, texts that share rare words are close and BM25 and dense search agree
often but not always. Queries are a few words of one chunk plus noise (a paraphrase the words alone do
not explain), so a query has a known source chunk without being a copy of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from reference import Chunk, L0Hints

__all__ = ["BenchCorpus", "Query", "build_corpus", "build_queries"]

# The most frequent English words take the top Zipf ranks, as they do in real text: BM25 must cope with
# query terms that match most of the collection.
_FUNCTION_TEXT = (
    "the of and to a in is that for it as was with be by on not he this are or his from at which but "
    "have an they you were her she there been one all we their has would when if so no what can more "
    "will out up into do about than its only time other new some could these two may first then also"
)
FUNCTION_WORDS = tuple(_FUNCTION_TEXT.split())
_ONSETS = ("b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "st", "tr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou")
_CODAS = ("", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck")
CATEGORIES = ("account", "billing", "shipping", "returns", "security", "devices", "network", "storage")
SOURCE_TYPES = ("manual", "faq", "ticket", "wiki")
SALIENT_WORDS = 12  # words that make a chunk's vector (and that its queries are drawn from)
CHUNKS_PER_DOC = 4  # several chunks per document, so the per-document cap has work to do


@dataclass(frozen=True)
class BenchCorpus:
    """Chunks as parallel arrays (cheap to build at 100k), and the vocabulary that made them."""

    texts: list[str]
    vectors: np.ndarray  # (n, dim) float32, unit length
    categories: list[str]
    source_types: list[str]
    vocabulary: list[str]
    word_vectors: np.ndarray  # (vocabulary, dim) float32
    word_weights: np.ndarray  # (vocabulary,) IDF-like: rare words weigh more
    salient: list[np.ndarray]  # word ids that make each chunk's vector

    def __len__(self) -> int:
        return len(self.texts)

    def doc_id(self, row: int) -> str:
        return f"doc{row // CHUNKS_PER_DOC:06d}"

    def chunks(self) -> Iterator[Chunk]:
        """The corpus as reference chunks with their vectors."""
        for row, text in enumerate(self.texts):
            yield Chunk(
                doc_id=self.doc_id(row),
                chunk_index=row % CHUNKS_PER_DOC,
                text=text,
                vector=tuple(self.vectors[row].tolist()),
                category=self.categories[row],
                source_type=self.source_types[row],
            )


@dataclass(frozen=True)
class Query:
    """One benchmark question: text, unit vector, L0 hints (for the legacy boosts) and its source row."""

    text: str
    vector: tuple[float, ...]
    hints: L0Hints
    source_row: int


def _syllable(rng: np.random.Generator) -> str:
    return _ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]


def _vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    words = list(dict.fromkeys(FUNCTION_WORDS))
    seen = set(words)
    while len(words) < size:
        syllables = int(rng.integers(1, 4))
        word = "".join(_syllable(rng) for _ in range(syllables)) + _CODAS[rng.integers(len(_CODAS))]
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


def build_corpus(
    size: int, *, dim: int = 384, seed: int = 0, vocabulary: int = 30_000, zipf_s: float = 1.07
) -> BenchCorpus:
    """``size`` chunks of 40 to 120 words (Zipf-Mandelbrot ranks), deterministic for ``(size, dim, seed)``."""
    rng = np.random.default_rng(seed)
    words = _vocabulary(vocabulary, rng)
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    frequency = 1.0 / (ranks + 2.7) ** zipf_s
    cumulative = np.cumsum(frequency / frequency.sum())
    weights = np.log1p(ranks / 8.0).astype(np.float32)  # ~ IDF: log of the rank grows like -log p
    word_vectors = _unit(rng.standard_normal((len(words), dim), dtype=np.float32))

    lengths = rng.integers(40, 121, size=size)
    flat = np.minimum(np.searchsorted(cumulative, rng.random(int(lengths.sum()))), len(words) - 1)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    tokens = [flat[offsets[i] : offsets[i + 1]] for i in range(size)]
    texts = [_sentences(words, row_tokens, rng) for row_tokens in tokens]

    # A chunk's vector comes from its SALIENT words (the rarest distinct ones) only: summing all ~80
    # word vectors of 100k chunks costs minutes in numpy, and the rare words dominate an IDF-weighted
    # sum anyway. Queries are drawn from the same salient words.
    function_ids = len(dict.fromkeys(FUNCTION_WORDS))
    salient = [_salient(row_tokens, function_ids) for row_tokens in tokens]
    vectors = np.empty((size, dim), dtype=np.float32)
    for row, ids in enumerate(salient):
        vectors[row] = weights[ids] @ word_vectors[ids]  # a (k,) x (k, dim) product per chunk
    vectors = _unit(vectors)
    categories = [CATEGORIES[i] for i in rng.integers(len(CATEGORIES), size=size)]
    source_types = [SOURCE_TYPES[i] for i in rng.integers(len(SOURCE_TYPES), size=size)]
    return BenchCorpus(texts, vectors, categories, source_types, words, word_vectors, weights, salient)


def _salient(row_tokens: np.ndarray, function_ids: int) -> np.ndarray:
    # Word ids are Zipf ranks, so the largest distinct ids are the rarest words of the chunk.
    distinct = np.unique(row_tokens)
    return distinct[distinct >= function_ids][-SALIENT_WORDS:]


def _sentences(words: list[str], ids: np.ndarray, rng: np.random.Generator) -> str:
    out, start = [], 0
    while start < len(ids):
        stop = start + int(rng.integers(8, 17))
        sentence = " ".join(words[i] for i in ids[start:stop])
        out.append(sentence[:1].upper() + sentence[1:] + ".")
        start = stop
    return " ".join(out)


def build_queries(corpus: BenchCorpus, count: int, *, seed: int = 1, noise: float = 0.35) -> list[Query]:
    """``count`` questions of 2 to 6 salient words of one random chunk, sometimes plus a stray word."""
    rng = np.random.default_rng(seed)
    function_ids = len(dict.fromkeys(FUNCTION_WORDS))
    queries = []
    for _ in range(count):
        row = int(rng.integers(len(corpus)))
        content = corpus.salient[row]
        picked = list(rng.choice(content, size=min(len(content), int(rng.integers(2, 7))), replace=False))
        if rng.random() < 0.3:
            picked.append(int(rng.integers(function_ids, len(corpus.vocabulary))))  # off-topic word
        lead = ["how", "what", "when"][int(rng.integers(3))]
        text = " ".join([lead, "the", *(corpus.vocabulary[i] for i in picked)])
        ids = np.asarray(picked)
        vector = (corpus.word_vectors[ids] * corpus.word_weights[ids, None]).sum(axis=0)
        vector = _unit(vector)[None][0] + noise * _unit(rng.standard_normal(vector.shape[0]))
        hints = L0Hints(
            domain=corpus.categories[row],
            keywords=tuple(corpus.vocabulary[i] for i in picked[:2]),
        )
        queries.append(Query(text, tuple(_unit(vector).tolist()), hints, row))
    return queries
