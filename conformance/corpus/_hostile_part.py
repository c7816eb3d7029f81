"""The hostile part of the knowledge base, and the searches and lookups that ask it (issue 51).

Search and lookup go through one prepared corpus, so the catalogue's classes are packed into it: chunk
``i`` of the hostile part carries the ``i``-th value of every string field's list (docId, category,
source type, text), each list cycled until every value is stored; one chunk in three is stored longer
than unit length. The requests are built the same way from the request models: row ``i`` sets each field
to the ``i``-th value of its list (query text, vector length, k, RRF k, hints, settings), so a field
added to :class:`SearchRequest` or :class:`LookupRequest` draws its classes with no case written.

Texts are one class value each and share no word with another text or any query of the knowledge base:
a question holding one of them finds that chunk alone by BM25, under any analyzer. Vectors lean away
from the scenario questions like the rest of the knowledge base; the longer ones lie further still.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..boundary._protocol import CorpusChunk, LookupRequest, SearchRequest
from ._hostile import class_values, field_types

__all__ = ["LONGER", "TIE_GAPS", "hostile_chunks", "hostile_lookups", "hostile_searches", "tie_pairs"]

LONGER = 1.75  # the length of every third stored vector of the hostile part


def _cycled(path: str, model: Any) -> list[Any]:
    spec = next(s for s in field_types(model) if s.path == path)
    values = [x for v in class_values(spec.path, spec.types, listed=spec.listed) for x in v]
    return [y for x in values for y in (x if isinstance(x, tuple) else (x,))]  # pairs: both stored


def hostile_chunks(
    start: int, vector: Callable[[int, np.ndarray], tuple[float, ...]], np_rng: np.random.Generator, dims: int
) -> list[CorpusChunk]:
    """The hostile chunks, numbered from ``start`` (the knowledge base's own vector builder leans them)."""
    from ..boundary._protocol import Corpus

    ids = _cycled("chunks.doc_id", Corpus)
    categories = [c for c in _cycled("chunks.category", Corpus) if c is not None]
    sources = _cycled("chunks.source_type", Corpus)
    texts = _cycled("chunks.text", Corpus)
    count = max(len(ids), len(categories), len(sources), len(texts))
    out = []
    seen: dict[str, int] = {}
    for i in range(count):
        doc = ids[i % len(ids)]
        index = seen.get(doc, -1) + 1
        seen[doc] = index
        part = np_rng.normal(size=dims)
        v = np.asarray(vector(start + i, part / np.linalg.norm(part)))
        if i % 3 == 2:
            v = v * LONGER
        out.append(
            CorpusChunk(
                doc_id=doc,
                chunk_index=index,
                text=texts[i]
                if i < len(texts)
                else f"spare{i}",  # never a text twice: BM25 ties are the engine's
                vector=tuple(float(x) for x in v),
                category=categories[i % len(categories)],
                source_type=sources[i % len(sources)],
            )
        )
    # Chunk indexes at their bounds (0 and 1 are every document's first two): the last chunks take the rest.
    keys = {(c.doc_id, c.chunk_index) for c in out}
    wanted = [b for b in _cycled("chunks.chunk_index", Corpus) if b not in {i for _, i in keys}]
    for j, bound in zip(range(len(out) - 1, -1, -1), wanted, strict=False):
        assert (out[j].doc_id, bound) not in keys
        out[j] = out[j].model_copy(update={"chunk_index": bound})
    return out


# Pairs of chunks whose distances from one question differ by every decade 1e-9..1e-3, and by 3e-5
# (between the judge's dense tie, 1e-5, and a key rounded to 4 decimals): the closer of each pair has
# the later docId, so an order that rounds distances and breaks ties by docId swaps the pairs the judge
# tells apart. The pairs lie 0.01 apart from one another, each 1e-5 past a multiple of 1e-4.
TIE_GAPS = (1e-3, 1e-4, 3e-5, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)


def tie_pairs(
    start: int, vector: Callable[[int, np.ndarray], tuple[float, ...]], np_rng: np.random.Generator, dims: int
) -> tuple[tuple[float, ...], list[CorpusChunk]]:
    """The tie question (a unit vector leaning away from the scenario questions) and its chunk pairs.

    A chunk at squared distance ``d`` from the unit question ``q`` is ``cos t * q + sin t * u`` with
    ``cos t = 1 - d / 2`` and ``u`` a unit vector orthogonal to ``q`` that leans away from the scenario
    questions too, so every chunk leans at least as far away as ``q`` does."""

    def lean(j: int) -> np.ndarray:
        part = np_rng.normal(size=dims)
        return np.asarray(vector(j, part / np.linalg.norm(part)))

    q = lean(start)
    chunks = []
    for k, gap in enumerate(TIE_GAPS):
        base = 0.3 + 0.01 * k + 1e-5
        for side, d in (("z", base), ("a", base + gap)):
            w = lean(start + 1 + 2 * k + (side == "a"))
            u = w - float(w @ q) * q
            u /= np.linalg.norm(u)
            cos = 1.0 - d / 2.0
            c = cos * q + np.sqrt(1.0 - cos * cos) * u
            chunks.append(
                CorpusChunk(
                    doc_id=f"tie-{k}-{side}", chunk_index=0, text=f"tiepair{k}{side}",
                    vector=tuple(float(x) for x in c), category=None, source_type=None,
                )
            )  # fmt: skip
    return tuple(float(x) for x in q), chunks


_VECTOR_SCALES = (1.0, 0.5, LONGER)


def _rows(model: Any, skip: Sequence[str]) -> tuple[int, dict[str, list[Any]]]:
    """Each field's values (a list of terms takes a whole class at once), and how many rows hold them."""
    lists: dict[str, list[Any]] = {}
    for spec in field_types(model):
        if spec.path in skip or spec.types[0] == "choice":
            continue
        if spec.path.endswith(("entities", "keywords")):
            lists[spec.path] = [tuple(v) for v in class_values(spec.path, spec.types, listed=True)]
        elif spec.types[0] == "vector":
            lists[spec.path] = list(_VECTOR_SCALES)
        else:
            lists[spec.path] = _cycled(spec.path, model)
    return max(map(len, lists.values())), lists


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in flat.items():
        owner, _, field = path.partition(".")
        if field:
            out.setdefault(owner, {})[field] = value
        else:
            out[owner] = value
    return out


def _fit_config(config: dict[str, Any]) -> dict[str, Any]:
    """Thresholds in order (reference <= highly relevant), as a caller's settings are."""
    if "reference_threshold" in config and "highly_relevant_threshold" in config:
        config["highly_relevant_threshold"] = max(
            config["highly_relevant_threshold"], config["reference_threshold"]
        )
    return config


def _requests(
    model: Any, bases: Sequence[Any], chunks: Sequence[CorpusChunk], skip: Sequence[str]
) -> list[dict[str, Any]]:
    count, lists = _rows(model, skip)
    out = []
    for i in range(count):
        base = bases[i % len(bases)]
        row = {path: values[i % len(values)] for path, values in lists.items()}
        scale = row.pop("query_vector")
        request = _nest(row)
        request["query_vector"] = tuple(x * scale for x in base.vector)
        request["mode"] = ("hybrid", "dense")[i % 2] if model is LookupRequest else "hybrid"
        if "config" in request:
            request["config"] = _fit_config(request["config"])
        out.append(request)
    # The text of one chunk asked with the vector of another (a hybrid question; BM25 finds that chunk).
    texts = [c.text for c in chunks if c.text.strip()]
    for i, text in enumerate(texts[:2]):
        out.append({**out[i], "query_text": text, "mode": "hybrid", "query_vector": bases[i + 1].vector})
    return out


def hostile_searches(
    bases: Sequence[Any], chunks: Sequence[CorpusChunk], tie_question: Sequence[float] | None = None
) -> list[dict[str, object]]:
    """Searches (keyword arguments of :class:`SearchRequest`) drawing every class of every field but the
    category (every category the corpus holds is filtered by the explicit searches already), and the
    tie question in dense mode, every pair within its k."""
    out = _requests(SearchRequest, bases, chunks, skip=("category",))
    if tie_question is not None:
        tie = {"query_text": "", "query_vector": tuple(tie_question), "mode": "dense", "rrf_k": 60}
        out.append({**tie, "k": 2 * len(TIE_GAPS) + 2, "category": None})
    return out


def hostile_lookups(bases: Sequence[Any], chunks: Sequence[CorpusChunk]) -> list[dict[str, object]]:
    """Lookups (keyword arguments of :class:`LookupRequest`) drawing every class of every field but the
    category (asked by the explicit lookups for every category the corpus holds)."""
    return _requests(LookupRequest, bases, chunks, skip=("category",))
