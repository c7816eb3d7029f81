"""The kit's own oracle: expected values from first principles, on raw pymilvus and numpy.

It never asks the implementation under judgement (nor the reference) anything. It ingests the scenario
corpus into its own collection with its own schema (dense FLAT L2, BM25 through a Milvus Function) and
answers: brute-force squared L2 in float32 for every chunk, the engine's own dense search, the engine's
own BM25 search, and RRF fused in Python from those two separate searches. If an implementation's store
had a wrong metric or analyzer, an oracle sharing its code would share the bug; this one cannot.

pymilvus is imported inside the functions that need it, so importing the kit's step modules stays cheap.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..boundary._decline import NotApplicable
from ..boundary._errors import EngineDeadlineError
from ..corpus._scenario_corpus import RRF_K, ChunkKey, ScenarioCorpus
from ._engine_calls import engine_call

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = ["MilvusOracle", "Ranked", "brute_force_l2", "rrf_fuse"]

_TEXT_MAX = 1024
_MAX_LIMIT = 16384  # Milvus's largest topk
# What each search mode needs of the engine, beyond dense search: hybrid is dense + BM25, fused.
MODE_NEEDS: Mapping[str, tuple[str, ...]] = MappingProxyType({"dense": (), "hybrid": ("bm25",)})


# The engine's answers, shared by every oracle of this process that holds the same corpus on the same
# engine (``ingest``'s ``engine``). The mutation matrix runs a hundred kit runs per process against one
# engine with one seed, each in a collection of its own holding the same rows inserted the same way, and
# without this each run would ask the engine the same questions again. A run on an engine of its own
# (every ``rag-conformance run``) shares nothing.
_SHARED_ANSWERS: dict[tuple[str, str, tuple[str, ...]], dict[tuple[object, ...], list[Ranked]]] = {}


@dataclass(frozen=True)
class Ranked:
    """One entry of a ranking: the chunk, its 1-based rank and the score that ranked it."""

    key: ChunkKey
    rank: int
    score: float


def brute_force_l2(query: Sequence[float], vectors: Sequence[Sequence[float]]) -> np.ndarray:
    """Squared Euclidean distance from ``query`` to each vector, computed in float32 like the engines."""
    q = np.asarray(query, dtype=np.float32)
    m = np.asarray(vectors, dtype=np.float32)
    diff = m - q
    return np.einsum("ij,ij->i", diff, diff, dtype=np.float32)


def rrf_fuse(rankings: Iterable[Sequence[ChunkKey]], *, rrf_k: int = RRF_K, limit: int) -> list[Ranked]:
    """Reciprocal rank fusion: each chunk scores the sum of ``1 / (rrf_k + rank)``, ranks from 1.

    Sorted by fused score, best first; equal scores keep first-seen order (callers that care compare
    tied groups as sets, since engines break ties differently).
    """
    fused: dict[ChunkKey, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (rrf_k + rank)
    ordered = sorted(fused.items(), key=lambda item: -item[1])[:limit]
    return [Ranked(key, rank, score) for rank, (key, score) in enumerate(ordered, start=1)]


class MilvusOracle:
    """The scenario corpus in the kit's own collection, and the questions the scenarios need answered."""

    def __init__(
        self,
        client: MilvusClient,
        collection: str,
        corpus: ScenarioCorpus,
        lacks: Mapping[str, str] | None = None,
        answers: dict[tuple[object, ...], list[Ranked]] | None = None,
    ) -> None:
        self._client = client
        self.collection = collection
        self.corpus = corpus
        self.lacks: Mapping[str, str] = MappingProxyType(dict(lacks or {}))
        """Engine features the oracle could not use (``"bm25"``), each with what the engine said."""
        chunks = corpus.corpus.chunks
        self._keys: list[ChunkKey] = [(c.doc_id, c.chunk_index) for c in chunks]
        # One float32 matrix, made once: every truth the oracle computes starts from a brute-force L2.
        self._vectors = np.asarray([c.vector for c in chunks], dtype=np.float32)
        # The collection never changes after ingest: the engine's answers are kept, so the many scenarios
        # asking about the same question cost one engine search each (``answers``: kept with others').
        self._answers: dict[tuple[object, ...], list[Ranked]] = {} if answers is None else answers

    @classmethod
    def ingest(
        cls,
        client: MilvusClient,
        collection: str,
        corpus: ScenarioCorpus,
        *,
        engine: str | None = None,
        seal: bool = False,
    ) -> MilvusOracle:
        """Create ``collection`` (dropping a leftover of the same name) and load the corpus into it.

        ``engine`` names the engine (its address): oracles of one process with the same ``engine`` and
        the same corpus share the engine's answers, as their collections hold the same rows. ``seal``
        flushes the rows after the insert (for Milvus Lite, which keeps them in memory until asked).

        On an engine that refuses a BM25 Function (Milvus 2.3) the collection is built without one:
        :attr:`lacks` then says why, and :meth:`bm25_search` answers from the corpus's advertised
        keyword orders, which ``tests/unit/conformance/corpus/test_scenario_corpus.py`` checks against
        engines with BM25.
        """
        if client.has_collection(collection):
            client.drop_collection(collection)
        try:
            cls._create(client, collection, corpus, bm25=True)
            lacks = {}
        except EngineDeadlineError:
            raise  # no answer at all is not a refusal: asking again would wait the deadline again
        except Exception as exc:  # the engine's refusal is the answer; a dead engine fails just below
            with contextlib.suppress(Exception):
                client.drop_collection(collection)  # 2.3 creates it, then refuses the sparse index
            cls._create(client, collection, corpus, bm25=False)
            lacks = {"bm25": f"it refused the kit's BM25 Function collection ({_first_line(exc)})"}
        rows = [
            {
                "pk": i,
                "doc_id": c.doc_id,
                "chunk_index": c.chunk_index,
                "text": c.text,
                "category": c.category or "",
                "dense": list(c.vector),
            }
            for i, c in enumerate(corpus.corpus.chunks)
        ]
        # One insert: Milvus Lite computes BM25 IDF per segment, and one insert keeps one segment.
        engine_call("the kit's own insert of the corpus", lambda: client.insert(collection, rows))
        if seal:  # Lite rebuilds unsealed rows' BM25 index on every search (about 10x slower)
            engine_call("the kit's own seal of its collection", lambda: client.flush(collection))
        engine_call("the kit's own load of its collection", lambda: client.load_collection(collection))
        if engine is None:
            return cls(client, collection, corpus, lacks)
        key = (engine, _fingerprint(corpus), tuple(sorted(lacks)))
        return cls(client, collection, corpus, lacks, _SHARED_ANSWERS.setdefault(key, {}))

    @staticmethod
    def _create(client: MilvusClient, collection: str, corpus: ScenarioCorpus, *, bm25: bool) -> None:
        from pymilvus import DataType, Function, FunctionType

        schema = client.create_schema(auto_id=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=256)
        schema.add_field("chunk_index", DataType.INT64)
        analyzer = {"enable_analyzer": True, "analyzer_params": {"type": "standard"}} if bm25 else {}
        schema.add_field("text", DataType.VARCHAR, max_length=_TEXT_MAX, **analyzer)
        # "" stands for "no category": nullable fields are not available on every engine the kit runs.
        schema.add_field("category", DataType.VARCHAR, max_length=256)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=corpus.corpus.dim)
        index = client.prepare_index_params()
        # FLAT: exact search, so the engine's dense answer is comparable with brute force.
        index.add_index("dense", index_type="FLAT", metric_type="L2")
        if bm25:
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(
                Function(
                    name="text_bm25",
                    function_type=FunctionType.BM25,
                    input_field_names=["text"],
                    output_field_names=["sparse"],
                )
            )
            index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        client.create_collection(collection, schema=schema)
        # The collection is empty: nothing to build. Waiting (sync) would only add pymilvus's polling,
        # half a second per index before its first look; loading (in ingest) waits for the engine.
        client.create_index(collection, index, sync=False)

    def require_mode(self, mode: str) -> None:
        """NOT APPLICABLE when the engine lacks what ``mode`` needs (hybrid: BM25 full-text search).

        Not the implementation's fault: no implementation can run that mode on this engine.
        """
        missing = [need for need in MODE_NEEDS[mode] if need in self.lacks]
        if missing:
            why = "; ".join(f"no {need.upper()}: {self.lacks[need]}" for need in missing)
            raise NotApplicable(f"mode {mode!r} cannot run on this engine, which has {why}")

    def drop(self) -> None:
        """Drop the oracle's collection."""
        if self._client.has_collection(self.collection):
            self._client.drop_collection(self.collection)

    # -- first principles ----------------------------------------------------------------------------

    def l2(self, query_vector: Sequence[float]) -> dict[ChunkKey, float]:
        """Brute-force squared L2 from the query to every chunk of the corpus."""
        distances = brute_force_l2(query_vector, self._vectors)
        return {key: float(d) for key, d in zip(self._keys, distances, strict=True)}

    def l2_order(self, query_vector: Sequence[float], category: str | None = None) -> list[Ranked]:
        """Every chunk (of ``category``, if given) by ascending brute-force distance."""
        distances = self.l2(query_vector)
        keys = self.corpus.in_category(tuple(self._keys), category)
        ordered = sorted(keys, key=lambda key: distances[key])
        return [Ranked(key, rank, distances[key]) for rank, key in enumerate(ordered, start=1)]

    # -- the engine, asked directly ------------------------------------------------------------------

    @property
    def size(self) -> int:
        """How many chunks the oracle holds: every search of it fits in one answer of this limit."""
        return len(self._keys)

    def dense_search(
        self, query_vector: Sequence[float], limit: int, category: str | None = None
    ) -> list[Ranked]:
        """The engine's own dense ANN answer: distance is Milvus's L2 (squared).

        The engine is asked once per query for every chunk (the corpus is small); each limit is a prefix.
        """
        key = ("dense", tuple(query_vector), category)
        if key not in self._answers:
            self._answers[key] = self._dense_search(query_vector, self._limit(), category)
        return list(self._answers[key][:limit])

    def _limit(self) -> int:
        return max(1, min(self.size, _MAX_LIMIT))

    def _dense_search(self, query_vector: Sequence[float], limit: int, category: str | None) -> list[Ranked]:
        hits = engine_call(
            "the kit's own dense search",
            lambda: self._client.search(
                self.collection,
                data=[list(query_vector)],
                anns_field="dense",
                limit=limit,
                filter=_filter(category),
                output_fields=["doc_id", "chunk_index"],
                search_params={"metric_type": "L2"},
            ),
        )
        return _ranked(hits[0])

    def bm25_search(self, query_text: str, limit: int, category: str | None = None) -> list[Ranked]:
        """The engine's own BM25 answer, in the engine's order (its score sign differs per engine).

        On an engine without BM25: the corpus's advertised keyword order for that question (score NaN).
        """
        if "bm25" in self.lacks:
            return self._advertised_bm25(query_text, limit, category)
        key = ("bm25", query_text, category)
        if key not in self._answers:
            self._answers[key] = self._bm25_search(query_text, self._limit(), category)
        return list(self._answers[key][:limit])

    def _bm25_search(self, query_text: str, limit: int, category: str | None) -> list[Ranked]:
        hits = engine_call(
            "the kit's own BM25 search",
            lambda: self._client.search(
                self.collection,
                data=[query_text],
                anns_field="sparse",
                limit=limit,
                filter=_filter(category),
                output_fields=["doc_id", "chunk_index"],
                search_params={"metric_type": "BM25"},
            ),
        )
        return _ranked(hits[0])

    def _advertised_bm25(self, query_text: str, limit: int, category: str | None) -> list[Ranked]:
        query = next((q for q in self.corpus.queries.values() if q.text == query_text), None)
        if query is None:
            raise NotApplicable(
                f"the engine has no BM25 ({self.lacks['bm25']}) and the corpus advertises no keyword "
                f"order for {query_text!r}"
            )
        keys = self.corpus.in_category(query.bm25_order, category)[:limit]
        return [Ranked(key, rank, math.nan) for rank, key in enumerate(keys, start=1)]

    def rrf(
        self,
        query_vector: Sequence[float],
        query_text: str,
        limit: int,
        *,
        sub_limit: int | None = None,
        rrf_k: int = RRF_K,
        category: str | None = None,
    ) -> list[Ranked]:
        """RRF of the engine's separate dense and BM25 answers, fused here (never by the engine)."""
        per_search = sub_limit or limit
        dense = self.dense_search(query_vector, per_search, category)
        bm25 = self.bm25_search(query_text, per_search, category)
        return rrf_fuse(([r.key for r in dense], [r.key for r in bm25]), rrf_k=rrf_k, limit=limit)


def _first_line(exc: BaseException) -> str:
    text = (str(getattr(exc, "message", "") or exc) or type(exc).__name__).strip().splitlines()[0]
    return text if len(text) <= 240 else text[:239] + "…"


def _filter(category: str | None) -> str:
    if category is None:
        return ""
    escaped = category.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'category == "{escaped}"'


def _ranked(hits: Iterable[Any]) -> list[Ranked]:
    out: list[Ranked] = []
    for rank, hit in enumerate(hits, start=1):
        entity = hit["entity"]
        out.append(Ranked((str(entity["doc_id"]), int(entity["chunk_index"])), rank, float(hit["distance"])))
    return out


def _fingerprint(corpus: ScenarioCorpus) -> str:
    """A digest of the rows the oracle inserts for ``corpus``, in their order."""
    digest = hashlib.sha256()
    for c in corpus.corpus.chunks:
        digest.update(repr((c.doc_id, c.chunk_index, c.text, c.category)).encode())
        digest.update(np.asarray(c.vector, dtype=np.float32).tobytes())
    return digest.hexdigest()
