"""One peer's hybrid query path beside a bare ``hybrid_search``, timed inside the peer's own venv.

Run by :mod:`benchmarks.figures.retrieval.peers` as
``<peer venv>/bin/python benchmarks/children/peer_child.py JOB.json``: it imports only the standard
library, numpy, pymilvus and the peer's library (the venv has no kit), and builds the store through the
peer's adapter in ``examples/peers/<library>/adapter.py`` (its ``prepare``: the collection, schema and
ingest the conformance run judges). Then, per query:

- ``peer``: the library's hybrid query, the call its adapter makes (LangChain
  ``similarity_search_with_score`` with ``ranker_type="rrf"``, LlamaIndex ``MilvusVectorStore.query``
  in hybrid mode, Haystack ``MilvusHybridRetriever.run``);
- ``bare``: ``MilvusClient.hybrid_search`` on the library's own client with the very request the library
  sent for that query (sub-requests, ranker, limit, output fields), recorded in an untimed first pass,
  the result left untouched.

The two are interleaved query by query, the order alternating. The JSON printed on stdout holds the
wall times, this process's CPU time per call, the library's versions and the recorded request's shape.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pymilvus
from pymilvus import AnnSearchRequest

PEERS = Path(__file__).resolve().parents[2] / "examples" / "peers"
PEER_CLASSES = {"langchain": "LangChainPeer", "llamaindex": "LlamaIndexPeer", "haystack": "HaystackPeer"}
PACKAGES = {
    "langchain": ("langchain-milvus", "langchain-core", "pymilvus"),
    "llamaindex": ("llama-index-vector-stores-milvus", "llama-index-core", "pymilvus"),
    "haystack": ("milvus-haystack", "haystack-ai", "pymilvus"),
}


def _adapter(library: str) -> Any:
    path = PEERS / library / "adapter.py"
    spec = importlib.util.spec_from_file_location(f"peer_adapter_{library}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _corpus(folder: Path, name: str) -> dict[str, Any]:
    vectors = np.load(folder / "vectors.npy")
    rows = [json.loads(line) for line in (folder / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    for row, vector in zip(rows, vectors, strict=True):
        row["vector"] = vector.tolist()
    return {"name": name, "dim": int(vectors.shape[1]), "chunks": rows}


def _peer_query(library: str, adapter: Any, peer: Any, k: int, rrf_k: int) -> Any:
    """The library's hybrid query as one call of (text, vector); built once, outside the timing."""
    if library == "langchain":
        store = peer.hybrid

        def langchain(text: str, vector: list[float]) -> Any:
            peer.embeddings.vector = vector  # the adapter's Embeddings answers the query with it
            # ranker_type="rrf" builds pymilvus's RRFRanker; the adapter's Function(RERANK) form is
            # refused by Lite 2.5.1 ("unsupported rank type").
            return store.similarity_search_with_score(
                text, k=k, fetch_k=k, ranker_type="rrf", ranker_params={"k": rrf_k}
            )

        return langchain
    if library == "llamaindex":
        store = peer.store
        store.hybrid_ranker_params = {"k": rrf_k}
        query_class, mode = adapter.VectorStoreQuery, adapter.VectorStoreQueryMode.HYBRID

        def llamaindex(text: str, vector: list[float]) -> Any:
            return store.query(
                query_class(query_embedding=vector, query_str=text, similarity_top_k=k, mode=mode)
            )

        return llamaindex
    if library == "haystack":
        retriever = adapter.MilvusHybridRetriever(
            document_store=peer.store, top_k=k, reranker=adapter.RRFRanker(rrf_k)
        )

        def haystack(text: str, vector: list[float]) -> Any:
            return retriever.run(query_embedding=vector, query_text=text)

        return haystack
    raise SystemExit(f"unknown library {library!r}; known: {', '.join(PACKAGES)}")


class _Recorder:
    """Wraps ``MilvusClient.hybrid_search`` for the untimed pass: what the library sends, per query."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
        self.original = pymilvus.MilvusClient.hybrid_search
        self.reply_fields: list[str] | None = None

    def __enter__(self) -> _Recorder:
        original, calls = self.original, self.calls

        def recording(client: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append((client, args, kwargs))
            result = original(client, *args, **kwargs)
            if self.reply_fields is None and len(result) and len(result[0]):
                self.reply_fields = sorted(result[0][0].get("entity", {}))  # what came back, by name
            return result

        pymilvus.MilvusClient.hybrid_search = recording  # type: ignore[method-assign]
        return self

    def __exit__(self, *_: Any) -> None:
        pymilvus.MilvusClient.hybrid_search = self.original  # type: ignore[method-assign]


def _bare(call: tuple[Any, tuple[Any, ...], dict[str, Any]]) -> Any:
    """The recorded request sent again, its sub-requests made afresh as a caller would make them."""
    client, args, kwargs = call
    kwargs = dict(kwargs)
    collection, rest = (args[0], args[1:]) if args else (kwargs.pop("collection_name"), ())
    reqs = rest[0] if rest else kwargs.pop("reqs")
    others = rest[1:]
    shapes = [(r.data, r.anns_field, r.param, r.limit, getattr(r, "expr", None) or None) for r in reqs]

    def bare() -> int:
        requests = [
            AnnSearchRequest(data=data, anns_field=field, param=param, limit=limit, expr=expr)
            for data, field, param, limit, expr in shapes
        ]
        return len(client.hybrid_search(collection, requests, *others, **kwargs)[0])

    return bare


def _shape(call: tuple[Any, tuple[Any, ...], dict[str, Any]]) -> dict[str, Any]:
    """What the library asked the engine for, as JSON: to compare with the reference's request."""
    _, args, kwargs = call
    reqs = args[1] if len(args) > 1 else kwargs.get("reqs", [])
    ranker = args[2] if len(args) > 2 else kwargs.get("ranker")
    try:
        ranker_params = ranker.dict()  # pymilvus's rankers describe themselves
    except Exception:
        ranker_params = repr(ranker)
    return {
        "sub_requests": [
            {
                "anns_field": r.anns_field,
                "data": "text" if isinstance(r.data[0], str) else "vector",
                "param": r.param,
                "limit": r.limit,
            }
            for r in reqs
        ],
        "ranker": type(ranker).__name__,
        "ranker_params": json.loads(json.dumps(ranker_params, default=str)),
        "limit": args[3] if len(args) > 3 else kwargs.get("limit"),
        "output_fields": kwargs.get("output_fields"),
    }


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    library, k, rrf_k = job["library"], job["k"], job["rrf_k"]
    adapter = _adapter(library)
    peer = getattr(adapter, PEER_CLASSES[library])()
    started = time.perf_counter()
    corpus = _corpus(Path(job["corpus_dir"]), job["name"])
    endpoint = {"uri": job["uri"], "collectionPrefix": job["prefix"]}
    peer.prepare(endpoint, corpus)
    ingest_s = time.perf_counter() - started
    del corpus
    queries = json.loads(Path(job["queries"]).read_text(encoding="utf-8"))
    query = _peer_query(library, adapter, peer, k, rrf_k)
    with _Recorder() as recorder:  # untimed: one peer query each, which also warms the path up
        for q in queries:
            query(q["text"], q["vector"])
    if len(recorder.calls) != len(queries):
        raise SystemExit(f"{library}: {len(recorder.calls)} hybrid_search calls for {len(queries)} queries")
    bares = [_bare(call) for call in recorder.calls]
    wall: dict[str, list[float]] = {"peer": [], "bare": []}
    cpu = {"peer": 0.0, "bare": 0.0}
    for index, (q, bare) in enumerate(zip(queries, bares, strict=True)):
        calls = {"peer": lambda q=q: query(q["text"], q["vector"]), "bare": bare}
        order = ["peer", "bare"] if index % 2 == 0 else ["bare", "peer"]
        for name in order:
            cpu0, t0 = time.process_time(), time.perf_counter()
            calls[name]()
            elapsed = time.perf_counter() - t0
            if index >= job["warmup"]:
                wall[name].append(elapsed)
                cpu[name] += time.process_time() - cpu0
    peer.close()
    out = {
        "library": library,
        "versions": {name: metadata.version(name) for name in PACKAGES[library]},
        "ingest_seconds": round(ingest_s, 1),
        "wall_s": wall,
        "client_cpu_s": cpu,
        "request": {**_shape(recorder.calls[0]), "reply_fields": recorder.reply_fields},
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
