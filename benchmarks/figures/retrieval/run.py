"""Figures 1, 2 and 5: lookup vs bare hybrid_search, reference vs legacy pipeline, ingest and RSS.

One engine and one collection per (engine, size). Every variant searches the same collection with the
same client, the same k (``rag.retrieve-k``) and the same queries, interleaved query by query.

Engines: ``lite`` is Milvus Lite 3.x of this venv (pure Python); ``lite-2.5.1`` is Milvus Lite 2.5.1,
the C++ core, from the kit's engine cache, reached directly (no GetVersion forwarder in between, whose
hop would count as engine time); ``uri:...`` is any server. An engine that cannot run here gets a
column that says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks._targets import PIPELINE_SIZE, PIPELINE_TARGET, lookup_target
from benchmarks.figures.old_reference import OLD_COMMIT, call_old
from benchmarks.figures.retrieval.corpus import Query, build_corpus, build_queries
from benchmarks.figures.retrieval.legacy import LegacyPipeline, ParallelProbeLegacy
from benchmarks.figures.retrieval.peers import run_peers
from benchmarks.figures.retrieval.stages import stage_times
from benchmarks.instruments.affinity import separate_cores
from benchmarks.instruments.profile import client_time, profile_calls
from benchmarks.instruments.progress import progress_bar, say
from benchmarks.instruments.stats import interleave, peak_rss_mb, ratio, summarize
from conformance.engines import EngineError, start_engine
from conformance.engines._local import LOCAL_ENGINES, start_local_engine
from reference import MilvusKnowledgeStore, Settings, StoreError, lookup_knowledge
from reference.store._schema import DENSE_FIELD, DOC_FIELD, INDEX_FIELD, OUTPUT_FIELDS, SPARSE_FIELD

__all__ = ["PEER_ENGINE", "PIPELINE_TARGET", "PIPELINE_TARGET_SIZE", "run_retrieval"]

PEER_ENGINE = "lite-2.5.1"  # the peers are timed on this engine's server, after the reference
PIPELINE_TARGET_SIZE = PIPELINE_SIZE  # the reference / legacy target applies from this size
_BM25 = {"metric_type": "BM25"}
# Index types an engine cannot build, and what it builds instead (measured: Lite 2.5.1 refuses HNSW).
_INDEX_INSTEAD = {
    ("lite-2.5.1", "HNSW"): ("FLAT", "Lite 2.5.1's local mode builds only FLAT, IVF_FLAT and AUTOINDEX"),
}
PROFILED = ("lookup", "bare_hybrid_same_fields")  # profiled on every run: where the client time goes


def _start(engine: str) -> Any:
    if engine in LOCAL_ENGINES:
        return start_local_engine(engine, direct=True)
    return start_engine(engine)


def _bare(
    store: MilvusKnowledgeStore, settings: Settings, output_fields: list[str]
) -> Callable[[Query], Any]:
    """hybrid_search exactly as a caller without the reference would send it; the result untouched."""
    from pymilvus import AnnSearchRequest, RRFRanker

    k = settings.retrieve_k
    params = {"metric_type": "L2", "params": {"ef": max(k, 64)} if store.index_type == "HNSW" else {}}

    def call(query: Query) -> int:
        requests = [
            AnnSearchRequest(data=[list(query.vector)], anns_field=DENSE_FIELD, param=params, limit=k),
            AnnSearchRequest(data=[query.text], anns_field=SPARSE_FIELD, param=_BM25, limit=k),
        ]
        result = store.client.hybrid_search(
            store.collection, requests, RRFRanker(settings.rrf_k), limit=k, output_fields=output_fields
        )
        return len(result[0])

    return call


def _wait_for_indexes(store: MilvusKnowledgeStore, tag: str, timeout: float = 3600.0) -> float:
    """Wait until the engine reports every index built, so queries time the search, not the build.

    An earlier attempt at 100k timed about 5 s per query while the second segment's HNSW index file did
    not exist yet; when the flush already built the indexes, this returns at once.
    """
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        states = [
            store.client.describe_index(store.collection, n)
            for n in store.client.list_indexes(store.collection)
        ]
        pending = sum(int(s.get("pending_index_rows", 0)) for s in states)
        if pending == 0 and all(s.get("state", "Finished") == "Finished" for s in states):
            break
        say(f"{tag} waiting for the engine to index {pending:,} rows")
        time.sleep(5.0)
    return time.perf_counter() - started


def _variants(store: MilvusKnowledgeStore, settings: Settings, pool: ThreadPoolExecutor) -> dict[str, Any]:
    legacy = LegacyPipeline(store, settings)
    parallel = ParallelProbeLegacy(store, settings, pool)

    def lookup(q: Query) -> Any:
        return lookup_knowledge(store, q.text, q.vector, settings=settings, hints=q.hints)

    return {
        "lookup": lookup,
        # The same call with the tuned hot path of git 02ce19c swapped in (benchmarks/figures/old_reference).
        "lookup_old": lambda q: call_old(lambda: lookup(q)),
        "bare_hybrid_same_fields": _bare(store, settings, [*OUTPUT_FIELDS, DENSE_FIELD]),
        "bare_hybrid_ids_only": _bare(store, settings, [DOC_FIELD, INDEX_FIELD]),
        "legacy_parallel_probe": lambda q: parallel.lookup(q.text, q.vector, mode="hybrid", hints=q.hints)[1],
        "legacy_sequential_probe": lambda q: legacy.lookup(q.text, q.vector, mode="hybrid", hints=q.hints)[1],
    }


def _evidence_diff(reference: list[Any], legacy: list[Any]) -> dict[str, float]:
    """How often the two pipelines hand the caller different top-5 evidence, and different gates."""
    n = len(reference) or 1
    ref_keys = [[b.evidence_key for b in r.result.blocks[:5]] for r in reference]
    old_keys = [[b.evidence_key for b in r.blocks[:5]] for r in legacy]
    share = lambda flags: round(sum(flags) / n, 4)  # noqa: E731 - a local one-liner
    return {
        "top5_set_differs": share(set(a) != set(b) for a, b in zip(ref_keys, old_keys, strict=True)),
        "top5_order_differs": share(a != b for a, b in zip(ref_keys, old_keys, strict=True)),
        "top1_differs": share(a[:1] != b[:1] for a, b in zip(ref_keys, old_keys, strict=True)),
        "legacy_top5_has_bm25_only": share(
            any(b.score_label == "bm25_only_no_dense" for b in r.blocks[:5]) for r in legacy
        ),
        "relevance_level_differs": share(
            str(a.result.relevance_level) != b.relevance_level for a, b in zip(reference, legacy, strict=True)
        ),
        "low_quality_differs": share(
            a.result.is_low_quality != b.is_low_quality for a, b in zip(reference, legacy, strict=True)
        ),
    }


def run_retrieval(
    milvus: str,
    size: int,
    *,
    queries: int,
    warmup: int,
    index: str,
    seed: int,
    profile_queries: int,
    pin: bool = True,
    peers: list[str] | None = None,
) -> dict[str, Any]:
    """Build the corpus, start (or reach) the engine, ingest, time every variant; the figures as a dict.

    With ``pin``, queries are timed with this process and the engine on separate cores
    (:mod:`benchmarks.instruments.affinity`). An engine that cannot be started or cannot hold the
    collection gives ``{"not_run": why}``.
    """
    tag = f"[{milvus} {size:,}]"
    started = time.perf_counter()
    index, index_note = _INDEX_INSTEAD.get((milvus, index), (index, None))
    try:
        figures = _measure(milvus, size, tag, queries, warmup, index, seed, profile_queries, pin, peers or [])
    except (EngineError, StoreError) as exc:
        say(f"{tag} not run: {exc}")
        return {"engine": milvus, "size": size, "not_run": str(exc).splitlines()[0][:400]}
    if index_note:
        figures["index_note"] = index_note
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures


def _measure(
    milvus: str,
    size: int,
    tag: str,
    queries: int,
    warmup: int,
    index: str,
    seed: int,
    profile_queries: int,
    pin: bool,
    peers: list[str],
) -> dict[str, Any]:
    started = time.perf_counter()
    corpus = build_corpus(size, seed=seed)
    chunks = list(corpus.chunks())
    asked = build_queries(corpus, warmup + queries, seed=seed + 1)
    say(f"{tag} corpus of {size:,} chunks built in {time.perf_counter() - started:.1f} s")
    settings = Settings()
    engine = _start(milvus)
    try:
        store = MilvusKnowledgeStore(
            engine.client(),
            collection=engine.collection_name(f"bench{size}"),
            dim=384,
            settings=settings,
            index_type=index,  # type: ignore[arg-type]
        )
        store.ensure_collection()  # creating the collection is not ingest throughput
        with progress_bar(f"{tag} ingest", size, unit="chunk") as bar:
            t0 = time.perf_counter()
            store.ingest(chunks, progress=lambda total: bar.update(total - bar.n))
            ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.client.flush(store.collection)  # what an ingest job does before serving: seal, index
        flush_s = time.perf_counter() - t0
        index_s = _wait_for_indexes(store, tag)
        with separate_cores(engine.pid, enabled=pin) as affinity, ThreadPoolExecutor(max_workers=1) as pool:
            if affinity["pinned"]:
                say(f"{tag} client on cores {affinity['client_cores']}, engine on {affinity['engine_cores']}")
            variants = _variants(store, settings, pool)
            with progress_bar(f"{tag} queries x{len(variants)}", len(asked), unit="query") as bar:
                samples = interleave(
                    variants,
                    asked,
                    warmup=warmup,
                    engine_pid=engine.pid,
                    on_item=bar.update,
                    keep_results=True,
                )
            figures: dict[str, Any] = {
                "engine": milvus,
                "engine_version": engine.server_version(),
                "size": size,
                "queries": queries,
                "warmup_queries": warmup,
                "k": settings.retrieve_k,
                "index": index,
                "affinity": affinity,
                "ingest": {
                    "rows": size,
                    "seconds": round(ingest_s, 3),
                    "rows_per_s": round(size / ingest_s, 1),
                    "flush_seconds": round(flush_s, 3),
                    "index_wait_seconds": round(index_s, 3),
                    "batch_size": 256,
                },
                "engine_memory": peak_rss_mb(engine.pid),
                "latency_ms": {name: summarize(s) for name, s in samples.items()},
                "lookup_vs_bare": {
                    **ratio(samples["lookup"], samples["bare_hybrid_same_fields"]),
                    "vs_ids_only": ratio(samples["lookup"], samples["bare_hybrid_ids_only"]),
                    "target": lookup_target(milvus, size),
                },
                "old_lookup": {
                    "commit": OLD_COMMIT,
                    "vs_bare": ratio(samples["lookup_old"], samples["bare_hybrid_same_fields"]),
                    "new_vs_old": ratio(samples["lookup"], samples["lookup_old"]),
                },
                "reference_vs_legacy": {
                    **ratio(samples["lookup"], samples["legacy_parallel_probe"]),
                    "vs_sequential_probe": ratio(samples["lookup"], samples["legacy_sequential_probe"]),
                    "target": PIPELINE_TARGET,
                    "target_applies": size >= PIPELINE_TARGET_SIZE,
                },
                "evidence_diff": _evidence_diff(
                    samples["lookup"].results, samples["legacy_parallel_probe"].results
                ),
            }
            sample = asked[warmup:][:profile_queries]
            figures["profiles"] = _profiles(figures, variants, sample, tag)
            if sample:
                say(f"{tag} timing the lookup's stages on {len(sample)} queries, then replayed warm")
                figures["stages"] = stage_times(variants["lookup"], store.client, sample)
            if "lookup" in figures["profiles"]:
                figures["client_time"] = figures["profiles"]["lookup"].pop("client_time")
                figures["profiles"]["bare_hybrid_same_fields"].pop("client_time", None)
            if peers and milvus == PEER_ENGINE:
                # Same server and corpus; each peer's own collection, ingested through the library.
                # The child inherits this process's core (pinned above), as the reference did.
                figures["peers"] = run_peers(
                    engine.endpoint.uri,
                    engine.prefix,
                    corpus,
                    asked,
                    size=size,
                    k=settings.retrieve_k,
                    rrf_k=settings.rrf_k,
                    warmup=warmup,
                    libraries=peers,
                )
    finally:
        engine.close()
    return figures


def _profiles(
    figures: dict[str, Any], variants: dict[str, Any], sample: list[Query], tag: str
) -> dict[str, Any]:
    """Profile lookup and the bare call always, and the legacy pipeline when its target is missed.

    Client side only: the engine's CPU is in ``latency_ms``.
    """
    wanted = list(PROFILED)
    legacy = figures["reference_vs_legacy"]
    if legacy["target_applies"] and legacy["p50"] > PIPELINE_TARGET:
        wanted += ["legacy_parallel_probe"]
    profiles = {}
    for name in wanted:
        if sample:
            say(f"{tag} profiling {name} on {len(sample)} queries")
            profiles[name] = profile_calls(variants[name], sample, extra=client_time)
    return profiles
