"""A labelled set as values: its chunks, its queries with graded relevance, and where they came from."""

from __future__ import annotations

from collections import Counter
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

__all__ = [
    "KINDS",
    "MAX_GRADE",
    "LabelledChunk",
    "LabelledQuery",
    "LabelledSet",
    "QueryKind",
    "TrecDocids",
    "trec_docid",
]

QueryKind = Literal["standard", "paraphrase", "exact_token", "cross_category", "unanswerable"]
KINDS: tuple[str, ...] = get_args(QueryKind)
TrecDocids = Literal["evidence_key", "doc_id"]
MAX_GRADE = 3


def trec_docid(key: str, trec_docids: TrecDocids) -> str:
    """The TREC files' id of evidence key ``key``: the key, or (one chunk per document) its document id."""
    return key.rsplit("#", 1)[0] if trec_docids == "doc_id" else key


class LabelledChunk(BaseModel):
    """One chunk of the corpus: ``docId#chunkIndex`` is its evidence key, the id the labels use.

    ``vector`` is kept when the corpus file carries one (the reference ingests it as given).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", from_attributes=True)

    doc_id: str
    chunk_index: int
    text: str
    category: str | None = None
    source_type: str | None = None
    vector: tuple[float, ...] | None = None

    @property
    def evidence_key(self) -> str:
        """``docId#chunkIndex``."""
        return f"{self.doc_id}#{self.chunk_index}"


class LabelledQuery(BaseModel):
    """One labelled query. ``relevant`` maps evidence keys to grades; empty when nothing answers it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    query: str
    kind: QueryKind
    category: str | None = None
    relevant: dict[str, int]
    note: str | None = None

    @property
    def answerable(self) -> bool:
        """True when at least one chunk is labelled relevant."""
        return bool(self.relevant)


class LabelledSet(BaseModel):
    """A corpus and the queries labelled against it, validated together (:mod:`._validate`).

    ``layout`` says where it came from (the JSON Lines files, or a BEIR folder and how its documents
    became chunks); ``trec_docids`` which id the TREC files use: the chunk's evidence key, or its
    document id where every document is one chunk (so the files match the dataset's own qrels).
    ``warnings`` says what is suspicious but allowed, one sentence each (the validator's
    :func:`~evaluation.sets._warnings.set_warnings` and what the reader saw); () for a sound set.
    """

    model_config = ConfigDict(frozen=True)

    corpus: tuple[LabelledChunk, ...]
    queries: tuple[LabelledQuery, ...]
    corpus_source: str
    queries_source: str
    qrels_source: str | None = None
    layout: str = "JSON Lines (corpus and queries files)"
    trec_docids: TrecDocids = "evidence_key"
    name: str = "labelled set"
    warnings: tuple[str, ...] = ()

    @property
    def categories(self) -> tuple[str, ...]:
        """Every category that some chunk carries, sorted."""
        return tuple(sorted({c.category for c in self.corpus if c.category is not None}))

    @property
    def answerable(self) -> tuple[LabelledQuery, ...]:
        """The queries with at least one relevant chunk: the ones ranking measures are defined for."""
        return tuple(q for q in self.queries if q.relevant)

    def qrels(self) -> dict[str, dict[str, int]]:
        """query id -> evidence key -> grade, for the answerable queries (ir_measures' qrels)."""
        return {q.id: dict(q.relevant) for q in self.queries if q.relevant}

    def trec_docid(self, key: str) -> str:
        """The id the TREC files use for the chunk with evidence key ``key``."""
        return trec_docid(key, self.trec_docids)

    def kind_counts(self) -> dict[str, int]:
        """How many queries of each kind, in :data:`KINDS` order, kinds with none left out."""
        counts: Counter[str] = Counter(q.kind for q in self.queries)
        return {kind: counts[kind] for kind in KINDS if counts[kind]}
