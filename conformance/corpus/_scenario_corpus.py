"""The kit's scenario corpus: hand-designed texts and vectors whose answers are known in advance.

No model is involved. Every chunk vector is a unit vector in ``DIM`` dimensions built from the cosines
it is meant to have with the kit's four query directions (axis 0: network questions, axis 1: storage
questions, axis 7: a question nothing answers well, axis 8: database replication), the rest of its length
spread over private axes.
For unit vectors the squared L2 distance Milvus reports is ``2 - 2 cos``, so choosing the cosines
chooses the dense order. Cosines differ by at least 0.02, far above float32 noise: no dense ties.

Texts are built for BM25 robustness across implementations: every text has exactly eight lowercase
words, no punctuation, no stop word of any common list, and each query term appears in a known number of
texts with distinct term counts. With equal lengths and one query term, BM25 orders matching texts by
term count for any ``k1 > 0`` and ``b``, with any analyzer that lowercases and splits on spaces.

The advertised orders below are written by hand, not computed here;
``tests/unit/conformance/corpus/test_scenario_corpus.py`` checks them against numpy and against the kit's own
Milvus oracle.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Protocol

from ..boundary._protocol import Corpus, CorpusChunk
from ._knowledge_base import EXTRA_DIMS, KnowledgeBase, generate

__all__ = ["DIM", "ChunkKey", "ScenarioCorpus", "ScenarioQuery", "build_corpus", "key_of"]

DIM = 9
RRF_K = 60
_PRIVATE_AXES = (2, 3, 4, 5, 6)  # axes no query uses; they absorb what makes each vector unit length

ChunkKey = tuple[str, int]
"""A chunk's identity in the kit: ``(doc_id, chunk_index)``."""


@dataclass(frozen=True)
class _Doc:
    doc_id: str
    category: str
    text: str
    cos_network: float  # cosine with the "failover" question (axis 0)
    cos_storage: float  # cosine with the "snapshot" question (axis 1)
    cos_far: float  # cosine with the "compliance" question (axis 7)
    cos_replication: float  # cosine with the "replication" question (axis 8)
    chunk_index: int = 0


# Term counts: "failover" 3/2/1 in ops-failover-runbook / net-failover-drills / net-failover-basics;
# "snapshot" 2/1 in sto-snapshot-policy / sto-volume-quotas; "replication" 3/2/1 in
# ops-replication-checklist / db-replication-guide#0 / db-replication-guide#2. No other text holds any.
# db-replication-guide has three chunks, all near the "replication" question: a per-document cap of 2
# binds on its results. The documents added for "replication" sit below every older one on the older
# questions' axes (and the older ones below them on axis 8), so the older questions are unchanged.
_DOCS: tuple[_Doc, ...] = (
    _Doc("net-failover-basics", "network",
         "failover basics explain gateway pairs sharing virtual addresses", 0.95, 0.02, 0.10, -0.10),
    _Doc("net-routing-tables", "network",
         "routing tables map destination prefixes toward neighbor routers", 0.90, 0.04, 0.12, -0.08),
    _Doc("net-failover-drills", "network",
         "failover drills rehearse failover spanning redundant gateway links", 0.80, 0.06, 0.14, -0.06),
    _Doc("net-dns-caching", "network",
         "dns resolvers cache answers honoring record lifetime limits", 0.70, 0.08, 0.16, -0.04),
    _Doc("net-load-balancing", "network",
         "load balancers spread incoming requests using health checks", 0.60, 0.10, 0.18, -0.02),
    _Doc("ops-failover-runbook", "operations",
         "failover runbook failover checklist failover pager escalation steps", 0.45, 0.12, 0.20, 0.00),
    _Doc("sto-snapshot-policy", "storage",
         "snapshot policy schedules nightly snapshot copies guarding volumes", 0.10, 0.90, 0.22, 0.02),
    _Doc("sto-volume-quotas", "storage",
         "volume quotas cap capacity including snapshot reserve space", 0.15, 0.75, 0.24, 0.04),
    _Doc("sto-backup-retention", "storage",
         "backup retention rules keep weekly archives cold storage", 0.20, 0.60, 0.26, 0.06),
    _Doc("bil-invoice-cycles", "billing",
         "invoice cycles close monthly customer accounts receive statements", 0.05, 0.30, 0.28, 0.08),
    _Doc("bil-refund-rules", "billing",
         "refund rules require manager approval beyond thirty days", 0.25, 0.20, 0.30, 0.10),
    _Doc("db-replication-guide", "database",
         "replication guide explains replication setup spanning database clusters", 0.03, 0.00, 0.08, 0.93),
    _Doc("db-replication-guide", "database",
         "guide chapter configures primary nodes accepting client writes", 0.01, -0.02, 0.06, 0.89,
         chunk_index=1),
    _Doc("db-cluster-topology", "database",
         "cluster topology diagrams depict primary replica placement choices", -0.01, -0.04, 0.04, 0.83),
    _Doc("db-lag-monitor", "database",
         "lag monitor tracks replica delay using heartbeat timestamps", -0.03, -0.06, 0.02, 0.76),
    _Doc("db-replication-guide", "database",
         "guide appendix lists replication settings tuning durability tradeoffs", -0.05, -0.08, 0.00, 0.70,
         chunk_index=2),
    _Doc("ops-disk-dashboards", "operations",
         "monitoring dashboards graph disk latency plus queue depth", -0.07, -0.10, -0.02, 0.62),
    _Doc("ops-replication-checklist", "operations",
         "replication checklist replication drills replication rollback weekly steps", -0.09, -0.12, -0.04,
         -0.14),
)  # fmt: skip


@dataclass(frozen=True)
class ScenarioQuery:
    """A question the scenarios ask, with everything the kit knows about its answer in advance.

    Orders are unfiltered, over the whole corpus, best first. ``rrf_order`` is the top ``k`` of RRF
    (``k = 60``) over a dense and a BM25 sub-search each limited to ``k``; the corpus is built so that
    larger sub-search limits give the same top ``k``.
    """

    name: str
    text: str
    vector: tuple[float, ...]
    k: int
    dense_order: tuple[ChunkKey, ...]
    bm25_order: tuple[ChunkKey, ...]
    rrf_order: tuple[ChunkKey, ...]

    @property
    def dense_top_k(self) -> tuple[ChunkKey, ...]:
        return self.dense_order[: self.k]

    @property
    def bm25_only(self) -> tuple[ChunkKey, ...]:
        """Hybrid hits that only the keyword sub-search finds (outside the dense top ``k``)."""
        return tuple(key for key in self.rrf_order if key not in self.dense_top_k)

    @property
    def bm25_first_outside_dense(self) -> ChunkKey | None:
        """The chunk BM25 ranks first when dense search at ``k`` does not find it, else ``None``."""
        if self.bm25_order and self.bm25_order[0] not in self.dense_top_k:
            return self.bm25_order[0]
        return None


@dataclass(frozen=True)
class ScenarioCorpus:
    """The wire :class:`Corpus` handed to implementations, plus the named questions about it.

    With ``knowledge_base`` (a run's seed), the corpus also holds the generated part the property
    scenarios search (:mod:`conformance.corpus._knowledge_base`); the scenarios' answers are the same with it.
    """

    corpus: Corpus
    queries: Mapping[str, ScenarioQuery]
    knowledge_base: KnowledgeBase | None = None
    _index: dict[ChunkKey, CorpusChunk] = field(default_factory=dict, repr=False, compare=False)

    def query(self, name: str) -> ScenarioQuery:
        try:
            return self.queries[name]
        except KeyError:
            raise KeyError(
                f"the scenario corpus has no question {name!r}; known: {sorted(self.queries)}"
            ) from None

    def chunk(self, key: ChunkKey) -> CorpusChunk:
        if not self._index:
            self._index.update((key_of(c), c) for c in self.corpus.chunks)
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"no chunk {key!r} in the scenario corpus") from None

    def category_of(self, key: ChunkKey) -> str | None:
        return self.chunk(key).category

    def in_category(self, order: tuple[ChunkKey, ...], category: str | None) -> tuple[ChunkKey, ...]:
        """``order`` restricted to one category (all of it when ``category`` is ``None``)."""
        if category is None:
            return order
        return tuple(key for key in order if self.category_of(key) == category)

    @property
    def categories(self) -> frozenset[str]:
        return frozenset(c.category for c in self.corpus.chunks if c.category is not None)


class _Keyed(Protocol):
    @property
    def doc_id(self) -> str: ...
    @property
    def chunk_index(self) -> int: ...


def key_of(item: _Keyed) -> ChunkKey:
    """The kit's key of anything with ``doc_id`` and ``chunk_index`` (chunks, hits, blocks)."""
    return (item.doc_id, item.chunk_index)


def _unit_vector(doc_index: int, cosines: Mapping[int, float]) -> tuple[float, ...]:
    values = [0.0] * DIM
    for axis, cos in cosines.items():
        values[axis] = cos
    rest = 1.0 - sum(c * c for c in cosines.values())
    # Two private axes per doc, chosen by its index, so no two docs are the same vector.
    first = _PRIVATE_AXES[doc_index % len(_PRIVATE_AXES)]
    second = _PRIVATE_AXES[(doc_index + 2) % len(_PRIVATE_AXES)]
    values[first] = math.sqrt(rest * 0.7)
    values[second] = math.sqrt(rest * 0.3)
    return tuple(values)


def _axis(axis: int) -> tuple[float, ...]:
    return tuple(1.0 if i == axis else 0.0 for i in range(DIM))


def _keys(*doc_ids: str) -> tuple[ChunkKey, ...]:
    """Chunk keys; ``"doc#2"`` names chunk 2 of ``doc``, a bare id chunk 0."""
    out = []
    for name in doc_ids:
        doc, _, index = name.partition("#")
        out.append((doc, int(index or 0)))
    return tuple(out)


# The documents added for "replication", in the order every older question ranks them (last).
_NEW = (
    "db-replication-guide", "db-replication-guide#1", "db-cluster-topology", "db-lag-monitor",
    "db-replication-guide#2", "ops-disk-dashboards", "ops-replication-checklist",
)  # fmt: skip


def _queries() -> dict[str, ScenarioQuery]:
    failover = ScenarioQuery(
        name="failover",
        text="failover",
        vector=_axis(0),
        k=4,
        dense_order=_keys(
            "net-failover-basics", "net-routing-tables", "net-failover-drills", "net-dns-caching",
            "net-load-balancing", "ops-failover-runbook", "bil-refund-rules", "sto-backup-retention",
            "sto-volume-quotas", "sto-snapshot-policy", "bil-invoice-cycles", *_NEW,
        ),
        bm25_order=_keys("ops-failover-runbook", "net-failover-drills", "net-failover-basics"),
        # basics 1/61+1/63, drills 1/63+1/62, runbook 1/61 (BM25 only), routing 1/62: differs from dense.
        rrf_order=_keys(
            "net-failover-basics", "net-failover-drills", "ops-failover-runbook", "net-routing-tables",
        ),
    )  # fmt: skip
    snapshot = ScenarioQuery(
        name="snapshot",
        text="snapshot",
        vector=_axis(1),
        k=4,
        dense_order=_keys(
            "sto-snapshot-policy", "sto-volume-quotas", "sto-backup-retention", "bil-invoice-cycles",
            "bil-refund-rules", "ops-failover-runbook", "net-load-balancing", "net-dns-caching",
            "net-failover-drills", "net-routing-tables", "net-failover-basics", *_NEW,
        ),
        bm25_order=_keys("sto-snapshot-policy", "sto-volume-quotas"),
        rrf_order=_keys(
            "sto-snapshot-policy", "sto-volume-quotas", "sto-backup-retention", "bil-invoice-cycles",
        ),
    )  # fmt: skip
    # cos_far grows along the first eleven documents and falls along the rest.
    far = (*reversed([(d.doc_id, d.chunk_index) for d in _DOCS[:11]]), *_keys(*_NEW))
    compliance = ScenarioQuery(
        name="compliance",
        text="compliance audit",  # neither word is in any text: BM25 finds nothing
        vector=_axis(7),
        k=4,
        dense_order=far,
        bm25_order=(),
        rrf_order=far[:4],
    )
    replication = ScenarioQuery(
        name="replication",
        text="replication",
        vector=_axis(8),
        k=6,
        dense_order=_keys(
            *_NEW[:6], "bil-refund-rules", "bil-invoice-cycles", "sto-backup-retention", "sto-volume-quotas",
            "sto-snapshot-policy", "ops-failover-runbook", "net-load-balancing", "net-dns-caching",
            "net-failover-drills", "net-routing-tables", "net-failover-basics", "ops-replication-checklist",
        ),
        bm25_order=_keys("ops-replication-checklist", "db-replication-guide", "db-replication-guide#2"),
        # k=60: guide#0 1/61+1/62, guide#2 1/65+1/63, checklist 1/61 (BM25 only: dense ranks it last),
        # guide#1 1/62, topology 1/63, lag 1/64. With k=1 checklist (1/2) passes guide#2 (1/6+1/4): RRF's
        # k matters here, whatever the sub-search limits.
        rrf_order=_keys(
            "db-replication-guide", "db-replication-guide#2", "ops-replication-checklist",
            "db-replication-guide#1", "db-cluster-topology", "db-lag-monitor",
        ),
    )  # fmt: skip
    return {q.name: q for q in (failover, snapshot, compliance, replication)}


def build_corpus(name: str = "scenario_corpus", *, seed: int | None = None) -> ScenarioCorpus:
    """The scenario corpus; the same value on every call (no randomness, no model).

    With ``seed``, the generated knowledge base of that seed is added (and every vector, the questions'
    too, gains its dimensions): the corpus a run hands the implementation.
    """
    vectors = [
        _unit_vector(i, {0: doc.cos_network, 1: doc.cos_storage, 7: doc.cos_far, 8: doc.cos_replication})
        for i, doc in enumerate(_DOCS)
    ]
    chunks = tuple(
        CorpusChunk(
            doc_id=doc.doc_id,
            chunk_index=doc.chunk_index,
            text=doc.text,
            vector=vector,
            category=doc.category,
            source_type="runbook" if doc.doc_id.startswith("ops-") else "article",
        )
        for doc, vector in zip(_DOCS, vectors, strict=True)
    )
    queries = _queries()
    if seed is None:
        return ScenarioCorpus(Corpus(name=name, dim=DIM, chunks=chunks), MappingProxyType(queries))
    kb = generate(seed, scenario_dim=DIM, scenario_vectors=vectors)
    dim = DIM + EXTRA_DIMS
    padded = tuple(c.model_copy(update={"vector": _padded(c.vector, dim)}) for c in chunks)
    queries = {n: replace(q, vector=_padded(q.vector, dim)) for n, q in queries.items()}
    corpus = Corpus(name=name, dim=dim, chunks=(*padded, *kb.chunks))
    return ScenarioCorpus(corpus, MappingProxyType(queries), kb)


def _padded(vector: tuple[float, ...], dim: int) -> tuple[float, ...]:
    return vector + (0.0,) * (dim - len(vector))
