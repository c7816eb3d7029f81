#!/usr/bin/env python3
"""llama-index-vector-stores-milvus behind the kit's stdio protocol: the library's store, and the glue.

Run it with the Python of a virtual environment holding ``requirements.txt`` (its own: the library
pins ``pymilvus < 3``, the kit runs pymilvus 3):

    rag-conformance run --adapter-cmd "<venv>/bin/python examples/peers/llamaindex/adapter.py"

What comes from LlamaIndex: the collection and its schema (``MilvusVectorStore`` with an L2 dense
field and a ``BM25BuiltInFunction`` sparse field), ingest (``add`` of ``TextNode``s), dense search
(``VectorStoreQueryMode.DEFAULT``) and hybrid search (``VectorStoreQueryMode.HYBRID``, its
``RRFRanker`` with k from the request) with their native ``similarities``, the category filter
(``MetadataFilters``), and the low-quality gate: ``SimilarityPostprocessor`` with the reference
threshold as ``similarity_cutoff``, over the node scores the store returned. Everything else is
``_glue``; README.md lists it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # _glue and _stdio

from _glue import Message, Peer, ranked
from _stdio import serve
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.vector_stores.types import (
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)
from llama_index.vector_stores.milvus import MilvusVectorStore
from llama_index.vector_stores.milvus.utils import BM25BuiltInFunction


class LlamaIndexPeer(Peer):
    name = "llama-index-vector-stores-milvus"
    homepage = "https://github.com/run-llama/llama_index"
    packages = ("llama-index-vector-stores-milvus", "llama-index-core", "pymilvus")

    def __init__(self) -> None:
        self.store: MilvusVectorStore | None = None
        self.endpoint: Message = {}
        self.collection = ""

    def library_gate(self, blocks: Sequence[Message], threshold: float) -> bool | None:
        # LlamaIndex's gate is a node post-processor over the scores the retriever gave the nodes.
        nodes = [NodeWithScore(node=TextNode(id_=_key(b), text=""), score=b.get("score")) for b in blocks]
        kept = SimilarityPostprocessor(similarity_cutoff=threshold).postprocess_nodes(nodes)
        return not kept

    def prepare(self, endpoint: Message, corpus: Message) -> None:
        self.close()
        self.endpoint = endpoint
        self.collection = f"{endpoint['collectionPrefix']}llamaindex_{corpus['name']}"
        self.store = self._store(corpus["dim"], overwrite=True)
        self.store.add(
            [
                TextNode(
                    id_=_key(chunk),
                    text=chunk["text"],
                    embedding=list(chunk["vector"]),
                    metadata=_metadata(chunk),
                )
                for chunk in corpus["chunks"]
            ]
        )

    def _store(self, dim: int, *, overwrite: bool, rrf_k: int = 60) -> MilvusVectorStore:
        options: dict[str, Any] = {}
        if self.endpoint.get("dbName"):
            options["db_name"] = self.endpoint["dbName"]
        return MilvusVectorStore(
            uri=self.endpoint["uri"],
            token=self.endpoint.get("token") or "",
            collection_name=self.collection,
            dim=dim,
            overwrite=overwrite,
            similarity_metric="L2",
            index_config={"index_type": "FLAT"},
            search_config={},
            enable_sparse=True,
            sparse_embedding_function=BM25BuiltInFunction(),
            hybrid_ranker="RRFRanker",
            hybrid_ranker_params={"k": rrf_k},
            consistency_level="Strong",
            **options,
        )

    def search(self, request: Message) -> list[Message]:
        if self.store is None:
            raise RuntimeError("search before prepare: the kit hands over the corpus first")
        category = request.get("category")
        filters = None
        if category is not None:
            filters = MetadataFilters(filters=[MetadataFilter(key="category", value=category)])
        mode = request["mode"]
        self.store.hybrid_ranker_params = {"k": request.get("rrfK", 60)}
        result = self.store.query(
            VectorStoreQuery(
                query_embedding=list(request["queryVector"]),
                query_str=request["queryText"],
                similarity_top_k=request["k"],
                mode=VectorStoreQueryMode.HYBRID if mode == "hybrid" else VectorStoreQueryMode.DEFAULT,
                filters=filters,
            )
        )
        rows = list(zip(result.nodes, result.similarities, strict=True))
        return ranked(rows, lambda row, rank: _hit(row, rank, mode))

    def close(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            store.client.drop_collection(self.collection)
            store.client.close()


def _hit(row: Any, rank: int, mode: str) -> Message:
    node, similarity = row
    return {
        "docId": node.metadata["doc_id"],
        "chunkIndex": node.metadata["chunk_index"],
        "originalRank": rank,
        "score": similarity,  # native: what the store calls the node's similarity
        "scoreLabel": mode,
    }


def _key(item: Message) -> str:
    return f"{item['docId']}#{item['chunkIndex']}"


def _metadata(chunk: Message) -> Message:
    metadata = {"doc_id": chunk["docId"], "chunk_index": chunk["chunkIndex"]}
    for key, field in (("category", "category"), ("sourceType", "source_type")):
        if chunk.get(key) is not None:
            metadata[field] = chunk[key]
    return metadata


if __name__ == "__main__":
    serve(LlamaIndexPeer())
