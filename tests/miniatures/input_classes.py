"""Faults that only inputs of one class show, and a conforming cache (issue 33's escapes).

Each fault passed the kit while its input class was drawn only by some seeds, or never: ids that collide
when concatenated, a backslash in a category, exact dense ties watched at the engine, a retry that is low
quality too, canonical labels handed to ``canonicalize_label``, hints that match nothing on a good filtered
result, a hint list long enough to cross ranks, a document over several categories under a cap, hybrid
candidates without a fused score, a retry whose hits overlap the filtered walk. Every run now draws each
class in its explicit part (``features/spec/input-model.md``). Each class here is a
:class:`~tests.miniatures.from_the_spec.FromTheSpec` with one step replaced; its docstring quotes the
spec's words it breaks. :class:`CachedSearch` conforms: answering an identical request again from memory
is not another kind of engine call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import reference
from conformance.boundary._protocol import SearchRequest
from tests.miniatures.from_the_spec import FromTheSpec

__all__ = ["CachedSearch", "DenseFromMemory"]


class CachedSearch(FromTheSpec):
    """Conforms. Memoizes every engine search on the whole request, and drops the memory on each prepare:
    an identical request is answered again without reaching Milvus, with the dense search's own answer.

    Freedom: "mode dense SHALL call dense ANN only" forbids other kinds of calls (hybrid, keyword, a scalar
    query for other rows); an answer that equals the dense search's, repeated from memory, makes none.
    """

    def __init__(self) -> None:
        super().__init__()
        self._memory: dict[str, list[Any]] = {}

    def prepare(self, endpoint: Any, corpus: Any) -> None:
        self._memory.clear()
        super().prepare(endpoint, corpus)

    def engine_search(self, request: SearchRequest) -> list[Any]:
        key = request.model_dump_json()
        if key not in self._memory:
            self._memory[key] = super().engine_search(request)
        return list(self._memory[key])


class DenseFromMemory(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only" ("a same-collection baseline that runs dense
    ANN only"). Dense mode never asks Milvus: it keeps the corpus handed to ``prepare`` and ranks it by
    squared L2 in numpy (float32), the category filter applied in memory. Its answers equal the engine's;
    no dense ANN search is ever made, not even the first time a request is asked.
    """

    def prepare(self, endpoint: Any, corpus: Any) -> None:
        super().prepare(endpoint, corpus)
        self._chunks = list(corpus.chunks)
        self._vectors = np.asarray([c.vector for c in corpus.chunks], dtype=np.float32)

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "dense":
            return super().engine_search(request)
        query = np.asarray(request.query_vector, dtype=np.float32)
        distances = ((self._vectors - query) ** 2).sum(axis=1, dtype=np.float32)
        order = [
            int(i)
            for i in np.argsort(distances, kind="stable")
            if request.category is None or self._chunks[int(i)].category == request.category
        ][: request.k]
        return [
            reference.Candidate(
                doc_id=self._chunks[i].doc_id,
                chunk_index=self._chunks[i].chunk_index,
                text=self._chunks[i].text,
                original_rank=rank,
                score=float(distances[i]),
                score_label="dense",
                raw_score=float(distances[i]),
                category=self._chunks[i].category,
                source_type=self._chunks[i].source_type,
            )
            for rank, i in enumerate(order, start=1)
        ]
