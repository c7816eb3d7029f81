#!/usr/bin/env python3
"""langchain-milvus behind the kit's stdio protocol: the library's store and searches, and the glue.

Run it with the Python of a virtual environment holding ``requirements.txt``:

    rag-conformance run --adapter-cmd "<venv>/bin/python examples/peers/langchain/adapter.py"

What comes from langchain-milvus: the collection and its schema (``Milvus`` with a dense field and a
``BM25BuiltInFunction`` sparse field), ingest (``add_embeddings``), hybrid search
(``similarity_search_with_score`` with an RRF ``reranker``, k from the request) and its native fused
scores, dense search on the same collection (a second ``Milvus`` over the dense field,
``similarity_search_with_score_by_vector``) and its native L2 distances, and dense quality (the
relevance function ``similarity_search_with_relevance_scores`` applies). Everything else is
``_glue``; README.md lists it.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # _glue and _stdio

from _glue import Message, Peer, connection_args, ranked
from _stdio import serve
from langchain_core.embeddings import Embeddings
from langchain_milvus import BM25BuiltInFunction, Milvus
from pymilvus import Function, FunctionType

DENSE_INDEX = {"metric_type": "L2", "index_type": "FLAT", "params": {}}
SPARSE_INDEX = {"metric_type": "BM25", "index_type": "SPARSE_INVERTED_INDEX", "params": {}}
# The library's default sparse search params carry drop_ratio_build 0.2, which Milvus Lite rejects.
SEARCH_PARAMS = [{"metric_type": "L2", "params": {}}, {"metric_type": "BM25", "params": {}}]


class QueryVector(Embeddings):
    """Glue: the kit sends the query's vector with each request; LangChain asks an Embeddings for it.

    Hybrid search embeds the query text through the store's embedding function; this one answers with
    the vector of the request being served. Documents are never embedded: ingest hands over the
    corpus's vectors with ``add_embeddings``.
    """

    def __init__(self) -> None:
        self.vector: list[float] | None = None

    def embed_query(self, text: str) -> list[float]:
        if self.vector is None:
            raise RuntimeError("no query vector: the glue sets it before every search")
        return self.vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the adapter ingests the kit's vectors with add_embeddings, never embeds text")


def _relevance_function() -> Any:
    """The function ``similarity_search_with_relevance_scores`` applies to this adapter's dense store.

    ``Milvus._select_relevance_score_fn`` reads only the store's index configuration; evaluating it on
    that configuration gives the same function without a live collection (the kit asks the normalizer
    before it provisions Milvus).
    """
    config = types.SimpleNamespace(
        _get_indexes=lambda: [DENSE_INDEX],
        _is_multi_embedding=False,
        _is_multi_function=False,
        _is_sparse=False,
        index_params=DENSE_INDEX,
        _as_list=Milvus._as_list,
    )
    return Milvus._select_relevance_score_fn(config)  # type: ignore[arg-type]


class LangChainPeer(Peer):
    name = "langchain-milvus"
    homepage = "https://github.com/langchain-ai/langchain-milvus"
    packages = ("langchain-milvus", "langchain-core", "pymilvus")

    def __init__(self) -> None:
        self.embeddings = QueryVector()
        self.relevance = _relevance_function()
        self.hybrid: Milvus | None = None
        self.dense: Milvus | None = None

    def dense_quality(self, distance: float | None, max_l2: float) -> float:
        # LangChain's relevance function ignores maxL2Distance; a null distance has no relevance.
        return 0.0 if distance is None else float(self.relevance(distance))

    def prepare(self, endpoint: Message, corpus: Message) -> None:
        self.close()
        connection = connection_args(endpoint)
        common: dict[str, Any] = {
            "connection_args": connection,
            "collection_name": f"{endpoint['collectionPrefix']}langchain_{corpus['name']}",
            "consistency_level": "Strong",
            "enable_dynamic_field": True,  # category may be null: dynamic fields take missing keys
        }
        self.hybrid = Milvus(
            embedding_function=self.embeddings,
            builtin_function=BM25BuiltInFunction(),
            vector_field=["dense", "sparse"],
            index_params=[DENSE_INDEX, SPARSE_INDEX],
            search_params=SEARCH_PARAMS,
            drop_old=True,
            **common,
        )
        chunks = corpus["chunks"]
        self.hybrid.add_embeddings(
            texts=[c["text"] for c in chunks],
            embeddings=[list(c["vector"]) for c in chunks],
            metadatas=[_metadata(c) for c in chunks],
            ids=[f"{c['docId']}#{c['chunkIndex']}" for c in chunks],
        )
        # Dense mode on the same collection: the multi-vector store only runs hybrid searches
        # ("_collection_search does not support multi-vector search"), a store over the dense field can.
        self.dense = Milvus(
            embedding_function=self.embeddings,
            vector_field="dense",
            index_params=DENSE_INDEX,
            search_params=SEARCH_PARAMS[0],
            **common,
        )

    def search(self, request: Message) -> list[Message]:
        if self.hybrid is None or self.dense is None:
            raise RuntimeError("search before prepare: the kit hands over the corpus first")
        category = request.get("category")
        # A Milvus string literal takes \" and \\ escapes but not \uXXXX: keep non-ASCII as it is.
        expr = f"category == {json.dumps(category, ensure_ascii=False)}" if category is not None else None
        k = request["k"]
        if request["mode"] == "dense":
            rows = self.dense.similarity_search_with_score_by_vector(request["queryVector"], k=k, expr=expr)
            return ranked(rows, lambda row, rank: self._hit(row, rank, "dense"))
        self.embeddings.vector = list(request["queryVector"])
        rrf = Function(
            name="rrf",
            input_field_names=[],
            function_type=FunctionType.RERANK,
            params={"reranker": "rrf", "k": request.get("rrfK", 60)},
        )
        rows = self.hybrid.similarity_search_with_score(
            request["queryText"],
            k=k,
            fetch_k=k,  # per sub-request; the library's default is 4
            expr=expr,
            reranker=rrf,  # the library's ranker_type="rrf" does the same, and is deprecated
        )
        return ranked(rows, lambda row, rank: self._hit(row, rank, "hybrid"))

    def _hit(self, row: Any, rank: int, label: str) -> Message:
        document, score = row
        return {
            "docId": document.metadata["doc_id"],
            "chunkIndex": document.metadata["chunk_index"],
            "originalRank": rank,
            "score": score,  # native: L2 distance (dense) or the fused RRF score (hybrid)
            "scoreLabel": label,
        }

    def close(self) -> None:
        hybrid, dense, self.hybrid, self.dense = self.hybrid, self.dense, None, None
        if dense is not None:
            dense.client.close()
        if hybrid is not None:
            hybrid.drop()
            hybrid.client.close()


def _metadata(chunk: Message) -> Message:
    metadata = {"doc_id": chunk["docId"], "chunk_index": chunk["chunkIndex"]}
    for key, field in (("category", "category"), ("sourceType", "source_type")):
        if chunk.get(key) is not None:
            metadata[field] = chunk[key]
    return metadata


if __name__ == "__main__":
    serve(LangChainPeer())
