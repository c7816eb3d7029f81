"""The requests every run asks first about its generated knowledge base, whatever its random draws.

Each input class that decides a verdict is here or in the knowledge base itself
(``features/spec/input-model.md``): every query shape in each mode it fits, every category (of each kind
a filter can trip on), categories no chunk has (one a prefix of a category, one a category's identifier
twin), k past the corpus, long L0 hint lists, the lookups that decide the category retry, and the same
request twice. Keyword arguments of the protocol's ``SearchRequest`` and ``LookupRequest``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

import numpy as np

from ..boundary._protocol import CorpusChunk
from . import _knowledge_base
from ._hostile_part import hostile_lookups, hostile_searches
from ._knowledge_base import KbQuery, KnowledgeBase

__all__ = ["NO_MATCH_HINT", "explicit_lookups", "explicit_searches", "one_field_pairs"]

T = TypeVar("T")

_PAST_THE_KB = 64  # a k this far past the generated chunks is past the scenario corpus's too
_LONG_HINTS = 40  # the length of the L0 keyword lists explicit hybrid lookups ask


def explicit_searches(kb: KnowledgeBase) -> list[dict[str, object]]:
    """Searches every run asks first, whatever its random draws: every query shape in each mode it fits,
    every category (of each kind a filter can trip on), a category no chunk has, and a k past a
    category's size. Keyword arguments of :class:`~conformance.boundary._protocol.SearchRequest`."""
    out: list[dict[str, object]] = []
    shapes: dict[str, KbQuery] = {}
    for q in kb.queries:
        shapes.setdefault(q.shape, q)
    categories = [*kb.categories, kb.absent_categories[0], None]
    for i, q in enumerate(shapes[name] for name in sorted(shapes)):
        for mode in ("dense", "hybrid") if q.hybrid else ("dense",):
            category = categories[i % len(categories)] if mode == "hybrid" else None
            out.append(_request(q, mode, k=max(q.min_k, 5 + i), category=category, rrf_k=(60, 1, 100)[i % 3]))
    twins = [kb.identifier_twin] if kb.identifier_twin else []
    for i, category in enumerate([*categories, kb.absent_categories[1], *twins]):
        q = kb.queries[i % len(kb.queries)]
        out.append(_request(q, "hybrid" if q.hybrid else "dense", k=kb.max_k, category=category, rrf_k=60))
    # The long query unfiltered, in hybrid mode: its keyword, after forty words no text holds, is all
    # BM25 can find, in chunks of every category. What BM25 is asked, cut short, loses it.
    for long in [q for q in kb.queries if q.shape == "long"][:1]:
        out.append(_request(long, "hybrid", k=10, category=None, rrf_k=60))
    # k past the whole corpus (the scenario corpus's chunks and these): every chunk comes back.
    q = next(q for q in kb.queries if q.shape == "tie")
    out.append(_request(q, "dense", k=len(kb.chunks) + _PAST_THE_KB, category=None, rrf_k=60))
    hostile = hostile_searches([q for q in kb.queries if q.hybrid], kb.hostile, kb.tie_question)
    return [*out, *_twice(out), *_search_pairs(kb), *_near_tie_searches(kb), *hostile]


def _near_tie_searches(kb: KnowledgeBase) -> list[dict[str, object]]:
    """Hybrid searches whose fused lists hold near-ties (F38) that the dense order contradicts, every run.

    The keyword text with a vector whose nearest chunk is another: the dense leg's first chunks are not
    BM25's, so the fused list interleaves chunks one leg ranks high and the other low or not at all.
    With RRF k=100 neighbouring single-leg ranks are under 1e-4 apart (1/101 - 1/102 = 9.7e-5), and
    with k=60 ranks (3, 1) and (2, 2) are 8e-6 apart; a fault that re-sorts such a window by the attached
    denseDistance moves chunks whose fused scores differ by far more than the judge's tie (a relative
    1e-9). Exact ties (equal rank sums) stay ties: the judge compares them as sets. k is the largest,
    so every rank the knowledge base can fill is asked.
    """
    q, _, other_vector = _pair_queries(kb)
    return [
        _request(replace(q, vector=other_vector.vector), "hybrid", k=kb.max_k, category=None, rrf_k=rrf_k)
        for rrf_k in (60, 100)
    ]


def explicit_lookups(kb: KnowledgeBase) -> list[dict[str, object]]:
    """Lookups every run asks first: each category (and one no chunk has, and none) in both modes, with
    blank and keyword queries. Keyword arguments of :class:`~conformance.boundary._protocol.LookupRequest`."""
    out: list[dict[str, object]] = []
    hybrid = [q for q in kb.queries if q.hybrid]
    categories = [*kb.categories, kb.absent_categories[0], None]
    for i, category in enumerate(categories):
        for mode in ("dense", "hybrid"):
            q = hybrid[(2 * i + (mode == "hybrid")) % len(hybrid)]
            request = _request(q, mode, k=10 + i, category=category, rrf_k=60)
            request["retrieve_k"] = request.pop("k")
            if mode == "hybrid":  # long L0 hint lists, of words the texts hold
                request["hints"] = {"keywords": kb.words[i : i + _LONG_HINTS], "domain": kb.words[-1]}
            out.append(request)
    out += _retry_lookups(kb, hybrid)
    out += _zero_threshold_lookups(kb)
    hostile = hostile_lookups([q for q in kb.queries if q.hybrid], kb.hostile)
    return [*out, *_twice(out), *_lookup_pairs(kb), *hostile]


def _twice(requests: Sequence[dict[str, object]]) -> list[dict[str, object]]:
    """The first request again: the same request twice, whose second answer must conform as the first did."""
    return [dict(requests[0])]


# A word no text holds: the pseudo-words use no "q" (see _pseudo_words), and no other text is ASCII-only.
NO_MATCH_HINT = "qqzzxq"
_MATCHING_NOTHING = {"keywords": (NO_MATCH_HINT,), "entities": (NO_MATCH_HINT,)}  # the good lookup's hints


def _retry_lookups(kb: KnowledgeBase, hybrid: Sequence[KbQuery]) -> list[dict[str, object]]:
    """Lookups that decide the retry, in both modes, every run:

    - a good filtered result (reference threshold 0) with hints that match nothing: no retry;
    - a filtered result that is low quality, in the category of the query's nearest chunk, whose
      unfiltered retry holds the filtered attempt's chunks and is low quality too (reference and
      highly-relevant thresholds 1: no distance above 0 reaches them).
    """
    out: list[dict[str, object]] = []
    largest = _largest_category(kb)
    q = hybrid[0]
    blank, nearest = _blank_near_a_category(kb, hybrid)
    for mode in ("dense", "hybrid"):
        good = _request(q, mode, k=10, category=largest, rrf_k=60)
        good["retrieve_k"] = good.pop("k")
        good["hints"] = dict(_MATCHING_NOTHING)
        good["config"] = {"reference_threshold": 0.0, "highly_relevant_threshold": 0.5}
        out.append(good)
        low = _request(blank, mode, k=10, category=nearest.category, rrf_k=60)
        low["retrieve_k"] = low.pop("k")
        low["config"] = {"reference_threshold": 1.0, "highly_relevant_threshold": 1.0, "return_n": 8}
        out.append(low)
    return out


def _blank_near_a_category(kb: KnowledgeBase, hybrid: Sequence[KbQuery]) -> tuple[KbQuery, CorpusChunk]:
    """A blank question whose nearest chunk of the whole corpus has a category, and that chunk.

    The low-quality pair asks it filtered by that category: the unfiltered retry's best chunk is then
    the filtered attempt's best too, so a retry that drops what the filtered attempt walked loses it.
    The text is blank, so hybrid mode has no keyword leg, and every hit of both modes is a near
    neighbour whose distance an implementation may attach (R7). A blank query of the generated ones is
    taken when its nearest chunk is filed; otherwise the first hybrid query's vector, asked blank (every
    hybrid query is separated: no near-ties in its dense order).
    """
    vectors = np.asarray([c.vector for c in kb.chunks])
    blanks = [b for b in hybrid if b.shape == "blank"]
    blank_text = blanks[0].text if blanks else _knowledge_base._BLANKS[0]
    for query in [*blanks, *hybrid]:
        nearest = kb.chunks[int(np.argmin(((vectors - np.asarray(query.vector)) ** 2).sum(axis=1)))]
        if nearest.category in kb.categories:  # filed, under a category requests filter by
            return replace(query, text=blank_text, shape="blank"), nearest
    raise AssertionError(f"seed {kb.seed}: no hybrid query's nearest chunk has a category")


def one_field_pairs(base: T, variants: Sequence[T]) -> list[T]:
    """``base``, a variant, ``base`` again, the next variant...: every pair of questions that differ in one
    field is asked one right after the other, in both orders. A cache, memo or counter keyed without that
    field, or state one question leaves for the next, answers the later of a pair with the earlier's
    answer, and the judge sees it: each variant's answer differs from the base's."""
    out = [base]
    for variant in variants:
        out += [variant, base]
    return out


def _nearest(kb: KnowledgeBase, vector: Sequence[float], category: str | None = None) -> tuple[int, float]:
    """The generated chunk nearest ``vector`` (in ``category`` when given) and its squared L2 distance."""
    chunks = [c for c in kb.chunks if category is None or c.category == category]
    distances = ((np.asarray([c.vector for c in chunks]) - np.asarray(vector)) ** 2).sum(axis=1)
    i = int(np.argmin(distances))
    return kb.chunks.index(chunks[i]), float(distances[i])


def _pair_queries(kb: KnowledgeBase) -> tuple[KbQuery, KbQuery, KbQuery]:
    """A keyword query, one with another text, and one whose vector's nearest chunk is another."""
    hybrid = [q for q in kb.queries if q.hybrid]
    keyworded = [q for q in hybrid if q.shape == "keyword"] or hybrid
    base = keyworded[0]
    text = next(q for q in [*keyworded, *hybrid] if q.text.strip() and q.text != base.text)
    nearest = _nearest(kb, base.vector)[0]
    vector = next(q for q in hybrid if _nearest(kb, q.vector)[0] != nearest)
    return base, text, vector


def _largest_category(kb: KnowledgeBase) -> str:
    """The category (of those requests filter by) that most chunks carry."""
    sizes: dict[str, int] = {}
    for c in kb.chunks:
        if c.category is not None and c.category in kb.categories:
            sizes[c.category] = sizes.get(c.category, 0) + 1
    return max(sorted(sizes), key=lambda c: sizes[c])


def _search_pairs(kb: KnowledgeBase) -> list[dict[str, object]]:
    """Searches that differ from a base in one field each (text, vector, mode, k, category, RRF k), asked
    in both orders (:func:`one_field_pairs`); and a dense pair that differs in the vector only."""
    q, other_text, other_vector = _pair_queries(kb)
    base = _request(q, "hybrid", k=6, category=None, rrf_k=60)
    hybrid = one_field_pairs(
        base,
        [
            {**base, "query_text": other_text.text},
            {**base, "query_vector": other_vector.vector},
            {**base, "mode": "dense"},
            {**base, "k": 11},
            {**base, "category": _largest_category(kb)},
            {**base, "rrf_k": 1},
        ],
    )
    dense = {**base, "mode": "dense"}
    return [*hybrid, *one_field_pairs(dense, [{**dense, "query_vector": other_vector.vector}])]


def _near_doc(kb: KnowledgeBase, doc_id: str) -> tuple[float, ...]:
    """A unit vector among ``doc_id``'s chunks: its nearest chunks are mostly that document's."""
    mean = np.asarray([c.vector for c in kb.chunks if c.doc_id == doc_id]).mean(axis=0)
    return tuple(float(x) for x in mean / np.linalg.norm(mean))


def _lookup_pairs(kb: KnowledgeBase) -> list[dict[str, object]]:
    """Lookups that differ from a base in one field each, asked in both orders (:func:`one_field_pairs`).

    A hybrid base varies what reaches the search (text, vector, mode, category, retrieve-k, RRF k) and the
    hints; a dense base, near a document of a dozen chunks, varies the settings, each to a value that
    changes its answer: return-n, the cap, maxL2Distance, and the reference threshold (0.0, then above
    the top quality) and the highly-relevant one.
    """
    q, other_text, other_vector = _pair_queries(kb)
    hybrid = {**_request(q, "hybrid", k=8, category=None, rrf_k=60), "config": {"return_n": 5}}
    hybrid["retrieve_k"] = hybrid.pop("k")
    out = one_field_pairs(
        hybrid,
        [
            {**hybrid, "query_text": other_text.text},
            {**hybrid, "query_vector": other_vector.vector},
            {**hybrid, "mode": "dense"},
            {**hybrid, "category": _largest_category(kb)},
            {**hybrid, "retrieve_k": 3},
            {**hybrid, "rrf_k": 1},
            {**hybrid, "hints": {"keywords": kb.words[:3]}},
        ],
    )
    vector = _near_doc(kb, _knowledge_base.SEVERAL_CATEGORIES_DOC)
    top = max(0.0, 1.0 - _nearest(kb, vector)[1] / 2.0)
    config = {"return_n": 4, "max_chunks_per_document": 3, "reference_threshold": 0.0}
    config["highly_relevant_threshold"] = 1.0
    dense = {**hybrid, "query_vector": vector, "mode": "dense", "retrieve_k": 10, "config": config}
    settings = [
        {"return_n": 2},
        {"max_chunks_per_document": 1},
        {"max_l2_distance": 4.0},
        {"reference_threshold": min(1.0, top + 0.2)},
        {"highly_relevant_threshold": max(0.0, top - 0.2)},
    ]
    return [*out, *one_field_pairs(dense, [{**dense, "config": {**config, **s}} for s in settings])]


def _zero_threshold_lookups(kb: KnowledgeBase) -> list[dict[str, object]]:
    """A dense lookup filtered by a category with a reference threshold of 0.0 and a top quality of 0.3,
    below the default 0.5 (maxL2Distance set from the category's nearest distance): not low quality, no
    retry. ``threshold or 0.5`` (0.0 read as unset) retries; a threshold of 0.0 changes the decision here
    and nowhere a top quality reaches 0.5."""
    q = next(q for q in kb.queries if q.hybrid)
    category = _largest_category(kb)
    distance = _nearest(kb, q.vector, category)[1]
    request = _request(q, "dense", k=10, category=category, rrf_k=60)
    request["retrieve_k"] = request.pop("k")
    request["config"] = {
        "reference_threshold": 0.0,
        "highly_relevant_threshold": 0.9,
        "max_l2_distance": distance / 0.7,
    }
    return [request]


def _request(q: KbQuery, mode: str, *, k: int, category: str | None, rrf_k: int) -> dict[str, object]:
    return {
        "query_text": q.text,
        "query_vector": q.vector,
        "mode": mode,
        "k": k,
        "category": category,
        "rrf_k": rrf_k,
    }
