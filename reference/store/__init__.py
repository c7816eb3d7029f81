"""The reference's Milvus store: one engine search per query, dense or hybrid.

- ``_store``: :class:`MilvusKnowledgeStore`: connect, ingest, delete a document, search (dense ANN, or
  dense + BM25 fused by RRF in one ``hybrid_search``), drop; a deadline on every engine call, and
  recovery from an engine restart.
- ``_writes``: a document is the unit of change: check every chunk, write a new generation, then delete
  the older ones; ``delete_document``.
- ``_collection``: creating the collection (the richest schema the engine keeps), checking one that
  exists.
- ``_parts``: what ``_writes`` and ``_collection`` read of the store, as a Protocol (no import circle).
- ``_schema``: the collection's fields, the BM25 Function, the category filter.
- ``_features``: what the engine accepts (nullable fields, BM25, hybrid search), found when the
  collection is made, and the smaller schemas for engines that lack a part.
- ``_hits``: engine replies as candidates, checked in one pass, with the stored vectors read from the
  reply's bytes.
- ``_vectors``: the query vector as sent, and squared L2 in float32 on the client.
- ``_ingest``: :class:`Chunk`, JSON Lines reading and the bundled sample.
- ``_errors``: engine failures as the reference's typed errors, with any token removed.

Public names are re-exported by :mod:`reference`.
"""
