#!/usr/bin/env python3
"""milvus-haystack behind the kit's stdio protocol: the library's store and retrievers, and the glue.

Run it with the Python of a virtual environment holding ``requirements.txt``:

    rag-conformance run --adapter-cmd "<venv>/bin/python examples/peers/haystack/adapter.py"

What comes from milvus-haystack: the collection and its schema (``MilvusDocumentStore`` with an L2
dense field and a ``BM25BuiltInFunction`` sparse field), ingest (``write_documents``), dense search
(``MilvusEmbeddingRetriever``) and hybrid search (``MilvusHybridRetriever`` with pymilvus's
``RRFRanker``, k from the request) with the ``Document.score`` they return, the category filter
(Haystack filter syntax), and dense quality: the store's distance-to-score function, which the dense
retriever already applied to ``Document.score``. Everything else is ``_glue``; README.md lists it.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # _glue and _stdio

from _glue import Message, Peer, connection_args, ranked
from _stdio import serve
from haystack import Document
from haystack.document_stores.types import DuplicatePolicy
from milvus_haystack import MilvusDocumentStore, MilvusEmbeddingRetriever, MilvusHybridRetriever
from milvus_haystack.function import BM25BuiltInFunction
from pymilvus import RRFRanker

DENSE_INDEX = {"metric_type": "L2", "index_type": "FLAT", "params": {}}


def _score_function() -> Any:
    """The function the dense retriever applies to Milvus's distance to make ``Document.score``.

    ``MilvusDocumentStore._select_score_fn`` reads only the store's ``index_params``; evaluating it on
    this adapter's index parameters gives it before any collection exists (the kit asks the
    normalizer before it provisions Milvus).
    """
    return MilvusDocumentStore._select_score_fn(types.SimpleNamespace(index_params=DENSE_INDEX))  # type: ignore[arg-type]


class HaystackPeer(Peer):
    name = "milvus-haystack"
    homepage = "https://github.com/milvus-io/milvus-haystack"
    packages = ("milvus-haystack", "haystack-ai", "pymilvus")

    def __init__(self) -> None:
        self.score = _score_function()
        self.store: MilvusDocumentStore | None = None

    def dense_quality(self, distance: float | None, max_l2: float) -> float:
        # Haystack's score function ignores maxL2Distance; a null distance has no score.
        return 0.0 if distance is None else float(self.score(distance))

    def prepare(self, endpoint: Message, corpus: Message) -> None:
        self.close()
        connection = connection_args(endpoint)
        self.store = MilvusDocumentStore(
            connection_args=connection,
            collection_name=f"{endpoint['collectionPrefix']}haystack_{corpus['name']}",
            consistency_level="Strong",
            index_params=dict(DENSE_INDEX),
            sparse_vector_field="sparse",
            builtin_function=[BM25BuiltInFunction(input_field_names="text", output_field_names="sparse")],
            drop_old=True,
        )
        documents = [
            Document(
                id=f"{c['docId']}#{c['chunkIndex']}",
                content=c["text"],
                embedding=list(c["vector"]),
                meta=_metadata(c),
            )
            for c in corpus["chunks"]
        ]
        self.store.write_documents(documents, policy=DuplicatePolicy.OVERWRITE)

    def search(self, request: Message) -> list[Message]:
        if self.store is None:
            raise RuntimeError("search before prepare: the kit hands over the corpus first")
        category = request.get("category")
        filters = None
        if category is not None:
            filters = {"field": "meta.category", "operator": "==", "value": category}
        vector = list(request["queryVector"])
        k = request["k"]
        if request["mode"] == "dense":
            retriever = MilvusEmbeddingRetriever(document_store=self.store, filters=filters, top_k=k)
            documents = retriever.run(query_embedding=vector)["documents"]
        else:
            hybrid = MilvusHybridRetriever(
                document_store=self.store,
                filters=filters,
                top_k=k,
                reranker=RRFRanker(request.get("rrfK", 60)),
            )
            documents = hybrid.run(query_embedding=vector, query_text=request["queryText"])["documents"]
        mode = request["mode"]
        return ranked(documents, lambda document, rank: _hit(document, rank, mode))

    def close(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            store.client.drop_collection(store.collection_name)
            store.client.close()


def _hit(document: Any, rank: int, mode: str) -> Message:
    hit = {
        "docId": document.meta["doc_id"],
        "chunkIndex": document.meta["chunk_index"],
        "originalRank": rank,
        "score": document.score,  # native: Document.score as the retriever returned it
        "scoreLabel": mode,
    }
    if mode == "dense":
        hit["_quality"] = document.score  # the retriever already applied the library's score function
    return hit


def _metadata(chunk: Message) -> Message:
    metadata = {"doc_id": chunk["docId"], "chunk_index": chunk["chunkIndex"]}
    for key, field in (("category", "category"), ("sourceType", "source_type")):
        if chunk.get(key) is not None:
            metadata[field] = chunk[key]
    return metadata


if __name__ == "__main__":
    serve(HaystackPeer())
