"""A small knowledge base whose every chunk text names its document, version and index, and checks
of what a store answers from it: one whole version per document, never a mix."""

from __future__ import annotations

import re
import zlib

import numpy as np

from reference import Chunk, Settings, lookup_knowledge
from reference.store._store import MilvusKnowledgeStore

__all__ = ["DIM", "DOCS", "answered", "stored", "texts", "version", "whole_versions"]

DIM = 4
DOCS = ("alpha", "beta", "gamma")
_VERSION = re.compile(r"^(\w+) v(\d+) chunk (\d+)$")
# Every stored row comes back from a search: the collection never holds more than this many.
ALL = 64


def version(doc: str, v: int, size: int) -> list[Chunk]:
    """Document ``doc`` at version ``v``: ``size`` chunks whose text names doc, version and index."""
    rng = np.random.default_rng(zlib.crc32(f"{doc} v{v}".encode()))  # the same in every process
    return [
        Chunk(
            doc_id=doc,
            chunk_index=i,
            text=f"{doc} v{v} chunk {i}",
            vector=tuple(float(x) for x in rng.normal(size=DIM)),
            category="kb",
        )
        for i in range(size)
    ]


def stored(store: MilvusKnowledgeStore) -> set[tuple[str, int, str]]:
    """Every row of the collection, as (docId, chunkIndex, text)."""
    rows = store.client.query(
        store.collection,
        filter="chunk_index >= 0",
        output_fields=["doc_id", "chunk_index", "text"],
        limit=ALL,
    )
    return {(r["doc_id"], int(r["chunk_index"]), r["text"]) for r in rows}


def texts(chunks: list[Chunk]) -> set[tuple[str, int, str]]:
    return {(c.doc_id, c.chunk_index, c.text) for c in chunks}


QUERIES = [tuple(float(x) for x in np.random.default_rng(seed).normal(size=DIM)) for seed in range(4)]


def answered(store: MilvusKnowledgeStore) -> dict[str, set[tuple[int, int]]]:
    """What searches of every stored row answer per document: {docId: {(version, chunkIndex)}}, checking
    on the way that no reply (dense, hybrid, lookup) holds two versions of one document."""
    seen: dict[str, set[tuple[int, int]]] = {}
    for mode in ("dense", "hybrid"):
        for query in QUERIES:
            reply: dict[str, set[tuple[int, int]]] = {}
            for hit in store.search("alpha beta gamma v1 v2 chunk", query, mode=mode, k=ALL):
                doc, v, i = _parse(hit.text)
                reply.setdefault(doc, set()).add((v, i))
            for doc, hits in reply.items():
                assert len({v for v, _ in hits}) == 1, f"{mode} reply mixes versions of {doc}: {hits}"
            if seen:
                assert reply == seen, f"two searches of every row disagree: {reply} vs {seen}"
            seen = reply
    settings = Settings(retrieve_k=ALL, return_n=ALL, max_chunks_per_document=ALL, reference_threshold=0.0)
    for query in QUERIES:
        result = lookup_knowledge(store, "alpha v2", query, settings=settings, category="kb").result
        versions: dict[str, set[int]] = {}
        for block in result.blocks:
            doc, v, _ = _parse(block.excerpt)
            versions.setdefault(doc, set()).add(v)
        assert all(len(vs) == 1 for vs in versions.values()), f"a lookup mixes versions: {versions}"
    return seen


def _parse(text: str) -> tuple[str, int, int]:
    match = _VERSION.match(text)
    assert match, text
    return match.group(1), int(match.group(2)), int(match.group(3))


def whole_versions(store: MilvusKnowledgeStore, sizes: dict[tuple[str, int], int]) -> dict[str, int]:
    """Each document's answered version, checking it is answered WHOLE (every chunk of that version)."""
    found = {}
    for doc, hits in answered(store).items():
        (v,) = {v for v, _ in hits}
        assert {i for _, i in hits} == set(range(sizes[(doc, v)])), f"{doc} v{v} answered in part: {hits}"
        found[doc] = v
    return found
